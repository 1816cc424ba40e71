// Package authz makes plasmd an OAuth 2.1 resource server as the MCP
// authorization spec (2025-11-25) describes it: it validates JWT access
// tokens minted by configured authorization servers (signature via the
// issuer's JWKS, issuer, expiry, RFC 8707 audience), maps their claims to a
// tenant and a principal by rules from the tenants file, and serves the
// RFC 9728 protected-resource metadata that tells clients where to get a
// token.
package authz

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/plasmd/plasmd/server/internal/oauthconfig"
)

// The oauth section's types, re-exported so callers of authz need one import.
type (
	Config = oauthconfig.Config
	Issuer = oauthconfig.Issuer
	Rule   = oauthconfig.Rule
)

// Re-exported from oauthconfig.
const WellKnown = oauthconfig.WellKnown

// ErrConfig marks an invalid oauth section.
var ErrConfig = oauthconfig.ErrConfig

const (
	defaultLeeway     = 30 * time.Second
	defaultMinRefresh = 30 * time.Second
)

// Errors a failed verification wraps. Every one but ErrUnavailable and
// ErrScope is also an ErrInvalidToken (401 invalid_token).
var (
	ErrInvalidToken = errors.New("invalid token")
	ErrNotJWT       = fmt.Errorf("%w: not a JWT", ErrInvalidToken)
	ErrIssuer       = fmt.Errorf("%w: issuer is not trusted", ErrInvalidToken)
	ErrSignature    = fmt.Errorf("%w: bad signature", ErrInvalidToken)
	ErrExpired      = fmt.Errorf("%w: expired or not yet valid", ErrInvalidToken)
	ErrAudience     = fmt.Errorf("%w: audience does not name this resource", ErrInvalidToken)
	ErrNoRule       = fmt.Errorf("%w: no rule maps this token to a tenant", ErrInvalidToken)
	// ErrScope: the token is valid but lacks a required scope (403).
	ErrScope = errors.New("insufficient scope")
	// ErrUnavailable: the issuer's keys could not be fetched.
	ErrUnavailable = errors.New("authorization server unavailable")
)

// Identity is who a valid token speaks for.
type Identity struct {
	Tenant    string
	Principal string
	Issuer    string
	Scopes    []string
	Expiry    time.Time
}

// Verifier validates access tokens against a Config.
type Verifier struct {
	cfg    Config
	keys   map[string]*keySet
	now    func() time.Time
	parser *jwt.Parser
}

// Options tune a Verifier; zero values are production defaults.
type Options struct {
	// Client fetches JWKS and metadata (default: 10s timeout client).
	Client *http.Client
	// Now is the clock (tests use a fake one).
	Now func() time.Time
}

// NewVerifier builds a verifier for a validated config.
func NewVerifier(cfg Config, opt Options) *Verifier {
	if cfg.Leeway == 0 {
		cfg.Leeway = defaultLeeway
	}
	if cfg.JWKSMinRefresh == 0 {
		cfg.JWKSMinRefresh = defaultMinRefresh
	}
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	v := &Verifier{cfg: cfg, keys: map[string]*keySet{}, now: opt.Now}
	for _, is := range cfg.AuthorizationServers {
		v.keys[is.Issuer] = &keySet{issuer: is, client: opt.Client, now: opt.Now, minRefresh: cfg.JWKSMinRefresh}
	}
	// Asymmetric algorithms only: with HS256 the "key" would be whatever
	// public JWK the attacker names (algorithm confusion).
	v.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(opt.Now),
	)
	return v
}

// Config returns the verifier's configuration.
func (v *Verifier) Config() *Config { return &v.cfg }

// LooksLikeJWT reports whether a bearer token has the JWS compact shape,
// so static tokens never reach JWT parsing.
func LooksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2 && strings.HasPrefix(tok, "ey")
}

// Verify validates a JWT access token and maps it to an identity.
func (v *Verifier) Verify(ctx context.Context, raw string) (Identity, error) {
	if !LooksLikeJWT(raw) {
		return Identity{}, ErrNotJWT
	}
	var claims jwt.MapClaims
	// The issuer picks the key set, so read it before verifying; nothing
	// from this unverified parse is trusted beyond that choice.
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &claims); err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrNotJWT, err)
	}
	iss, _ := claims["iss"].(string)
	ks, ok := v.keys[iss]
	if !ok {
		return Identity{}, fmt.Errorf("%w: %q", ErrIssuer, iss)
	}
	claims = jwt.MapClaims{}
	var fetchErr error
	// The key set is the issuer's own, so a valid signature also proves
	// iss: another issuer's key cannot verify it.
	_, err := v.parser.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		keys, err := ks.key(ctx, kid)
		if err != nil {
			fetchErr = err
			return nil, err
		}
		return jwt.VerificationKeySet{Keys: matching(keys, t.Method)}, nil
	})
	switch {
	case fetchErr != nil:
		return Identity{}, fetchErr
	case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return Identity{}, fmt.Errorf("%w: %v", ErrExpired, err)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return Identity{}, fmt.Errorf("%w: %v", ErrExpired, err)
	case err != nil:
		return Identity{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	aud, _ := claims.GetAudience()
	// RFC 8707: a token minted for another resource is refused here, so
	// it is never accepted (or passed on) by this server.
	if !oauthex.MatchesResource(aud, v.cfg.Resource) {
		return Identity{}, fmt.Errorf("%w: token is for %v, this resource is %s", ErrAudience, []string(aud), v.cfg.Resource)
	}
	id, err := v.mapClaims(iss, claims)
	if err != nil {
		return Identity{}, err
	}
	for _, s := range v.cfg.RequiredScopes {
		if !slices.Contains(id.Scopes, s) {
			return Identity{}, fmt.Errorf("%w: %s", ErrScope, s)
		}
	}
	return id, nil
}

// matching keeps the keys whose type fits the token's algorithm, so a
// multi-key set does not try an EC key on an RS256 token.
func matching(keys []any, m jwt.SigningMethod) []jwt.VerificationKey {
	var out []jwt.VerificationKey
	for _, k := range keys {
		ok := false
		switch k.(type) {
		case *rsa.PublicKey:
			ok = strings.HasPrefix(m.Alg(), "RS") || strings.HasPrefix(m.Alg(), "PS")
		case *ecdsa.PublicKey:
			ok = strings.HasPrefix(m.Alg(), "ES")
		case ed25519.PublicKey:
			ok = m.Alg() == "EdDSA"
		}
		if ok {
			out = append(out, k)
		}
	}
	return out
}

func (v *Verifier) mapClaims(iss string, claims jwt.MapClaims) (Identity, error) {
	for _, r := range v.cfg.Rules {
		if r.Issuer != "" && r.Issuer != iss {
			continue
		}
		if r.Claim != "" && !claimHas(claims[r.Claim], r.Equals) {
			continue
		}
		pc := r.PrincipalClaim
		if pc == "" {
			pc = "sub"
		}
		principal, _ := claims[pc].(string)
		if strings.TrimSpace(principal) == "" {
			return Identity{}, fmt.Errorf("%w: claim %q (the principal) is missing", ErrNoRule, pc)
		}
		if len(v.cfg.AuthorizationServers) > 1 {
			// Subjects are unique per issuer only: with several trusted
			// issuers the same "sub" from two of them is two people.
			principal = iss + "#" + principal
		}
		exp, _ := claims.GetExpirationTime()
		id := Identity{Tenant: r.Tenant, Principal: principal, Issuer: iss, Scopes: scopes(claims)}
		if exp != nil {
			id.Expiry = exp.Time
		}
		return id, nil
	}
	return Identity{}, ErrNoRule
}

func claimHas(v any, want string) bool {
	switch x := v.(type) {
	case string:
		return x == want
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}

// scopes reads `scope` (space-separated, RFC 9068) or `scp` (array).
func scopes(c jwt.MapClaims) []string {
	if s, ok := c["scope"].(string); ok {
		return strings.Fields(s)
	}
	var out []string
	if arr, ok := c["scp"].([]any); ok {
		for _, e := range arr {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// Challenge is the WWW-Authenticate value of a 401 (or 403 for scope):
// it names the metadata URL so MCP clients can discover the
// authorization server (RFC 9728 §5.1, MCP authorization §2.3).
func (v *Verifier) Challenge(err error) string {
	params := []string{fmt.Sprintf("resource_metadata=%q", v.cfg.MetadataURL())}
	if len(v.cfg.ScopesSupported) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(v.cfg.ScopesSupported, " ")))
	}
	switch {
	case errors.Is(err, ErrScope):
		params = append(params, `error="insufficient_scope"`)
	case errors.Is(err, ErrInvalidToken):
		// The description names the failed check, never the token.
		params = append(params, `error="invalid_token"`, fmt.Sprintf("error_description=%q", describe(err)))
	}
	return "Bearer " + strings.Join(params, ", ")
}

func describe(err error) string {
	for _, e := range []error{ErrAudience, ErrExpired, ErrIssuer, ErrNoRule, ErrSignature, ErrNotJWT} {
		if errors.Is(err, e) {
			return strings.TrimPrefix(e.Error(), ErrInvalidToken.Error()+": ")
		}
	}
	return "the access token is not valid"
}

// Metadata is the RFC 9728 protected-resource metadata document.
func (v *Verifier) Metadata() *oauthex.ProtectedResourceMetadata {
	var servers []string
	for _, is := range v.cfg.AuthorizationServers {
		servers = append(servers, is.Issuer)
	}
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.cfg.Resource,
		AuthorizationServers:   servers,
		ScopesSupported:        v.cfg.ScopesSupported,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "plasmd",
	}
}

// MetadataHandler serves Metadata (public, CORS-enabled, via the go-sdk).
func (v *Verifier) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(v.Metadata())
}

// Fetches reports how many JWKS fetches an issuer's key set has made
// (operators' metrics and tests of the refetch rate limit).
func (v *Verifier) Fetches(issuer string) int {
	ks, ok := v.keys[issuer]
	if !ok {
		return 0
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.fetches
}
