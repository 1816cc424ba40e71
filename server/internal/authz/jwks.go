package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxJWKSBytes caps a JWKS or metadata document.
const maxJWKSBytes = 1 << 20

// keySet caches one issuer's signing keys. A token naming a key id the
// cache lacks triggers a refetch (the issuer rotated its keys), at most
// once per minRefresh; meanwhile such tokens are refused.
type keySet struct {
	issuer     Issuer
	client     *http.Client
	now        func() time.Time
	minRefresh time.Duration

	mu        sync.Mutex
	keys      map[string]any // kid → public key
	anonymous []any          // keys published without a kid
	jwksURI   string
	fetched   time.Time // last fetch attempt
	fetches   int
}

// key returns the public key for kid, refetching the set when kid is
// unknown and the last fetch is old enough.
func (k *keySet) key(ctx context.Context, kid string) ([]any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ks := k.lookup(kid); len(ks) > 0 {
		return ks, nil
	}
	if !k.fetched.IsZero() && k.now().Sub(k.fetched) < k.minRefresh {
		return nil, fmt.Errorf("%w: unknown signing key %q (keys refresh at most every %v)", ErrSignature, kid, k.minRefresh)
	}
	// Holding the lock across the fetch makes concurrent unknown-kid
	// tokens share one request instead of each starting their own.
	if err := k.refresh(ctx); err != nil {
		return nil, err
	}
	if ks := k.lookup(kid); len(ks) > 0 {
		return ks, nil
	}
	return nil, fmt.Errorf("%w: unknown signing key %q", ErrSignature, kid)
}

func (k *keySet) lookup(kid string) []any {
	if kid == "" {
		if len(k.anonymous) > 0 {
			return k.anonymous
		}
		// A token without kid may use any key when the set is small
		// enough that trying each is cheap.
		if len(k.keys) <= 4 {
			var all []any
			for _, v := range k.keys {
				all = append(all, v)
			}
			return all
		}
		return nil
	}
	if v, ok := k.keys[kid]; ok {
		return []any{v}
	}
	return nil
}

func (k *keySet) refresh(ctx context.Context) error {
	k.fetched = k.now()
	k.fetches++
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if k.jwksURI == "" {
		k.jwksURI = k.issuer.JWKSURI
	}
	if k.jwksURI == "" {
		meta, err := oauthex.GetAuthServerMeta(ctx, k.issuer.Issuer+"/.well-known/oauth-authorization-server", k.issuer.Issuer, k.client)
		if err != nil {
			return fmt.Errorf("%w: issuer %s metadata: %v", ErrUnavailable, k.issuer.Issuer, err)
		}
		if meta == nil || meta.JWKSURI == "" {
			return fmt.Errorf("%w: issuer %s publishes no jwks_uri", ErrUnavailable, k.issuer.Issuer)
		}
		k.jwksURI = meta.JWKSURI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.jwksURI, nil)
	if err != nil {
		return fmt.Errorf("%w: jwks %s: %v", ErrUnavailable, k.jwksURI, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: jwks %s: %v", ErrUnavailable, k.jwksURI, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: jwks %s answered %s", ErrUnavailable, k.jwksURI, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil || len(body) > maxJWKSBytes {
		return fmt.Errorf("%w: jwks %s: unreadable or over %d bytes", ErrUnavailable, k.jwksURI, maxJWKSBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("%w: jwks %s: %v", ErrUnavailable, k.jwksURI, err)
	}
	keys := map[string]any{}
	var anon []any
	for _, jwk := range set.Keys {
		// Only public signing keys: a published private or symmetric key
		// would let anyone who reads the JWKS mint tokens.
		if !jwk.Valid() || !jwk.IsPublic() || (jwk.Use != "" && jwk.Use != "sig") {
			continue
		}
		if jwk.KeyID == "" {
			anon = append(anon, jwk.Key)
			continue
		}
		keys[jwk.KeyID] = jwk.Key
	}
	// Replacing the whole map is the rotation: keys the issuer retired
	// stop verifying as soon as it stops publishing them.
	k.keys, k.anonymous = keys, anon
	return nil
}
