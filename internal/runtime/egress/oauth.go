package egress

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/plasmd/plasmd/guest/abi"
)

// schemeClientCredentials is the OAuth 2.0 client-credentials auth scheme:
// the host exchanges a client id and secret for an access token.
const schemeClientCredentials = "oauth2_client_credentials"

// Token cache bounds.
const (
	// refreshMargin is how long before its expiry a cached token is
	// replaced, so a request never leaves with a token about to lapse.
	refreshMargin = 60 * time.Second
	// maxTokens bounds the cache; past it expired entries are dropped, and
	// if that is not enough the cache starts over.
	maxTokens = 1024
)

// ErrToken is wrapped by failures to obtain an OAuth access token.
var ErrToken = errors.New("egress: oauth token")

// tokenKey identifies one set of client credentials. The client secret is
// kept only as a digest.
type tokenKey struct{ tokenURL, clientID, secretSum, scopes string }

type tokenEntry struct {
	mu  sync.Mutex // one fetch at a time per credential set
	tok *oauth2.Token
}

// tokenCache holds access tokens by credential set. The zero value is
// ready to use; now is replaceable by tests (a fake clock).
type tokenCache struct {
	mu  sync.Mutex
	m   map[tokenKey]*tokenEntry
	now func() time.Time
}

func (tc *tokenCache) clock() time.Time {
	if tc.now != nil {
		return tc.now()
	}
	return time.Now()
}

func (tc *tokenCache) entry(k tokenKey) *tokenEntry {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.m == nil {
		tc.m = map[tokenKey]*tokenEntry{}
	}
	if e := tc.m[k]; e != nil {
		return e
	}
	if len(tc.m) >= maxTokens {
		now := tc.clock()
		for key, e := range tc.m {
			if e.mu.TryLock() {
				if e.tok == nil || !tc.fresh(e.tok, now) {
					delete(tc.m, key)
				}
				e.mu.Unlock()
			}
		}
		if len(tc.m) >= maxTokens {
			tc.m = map[tokenKey]*tokenEntry{}
		}
	}
	e := &tokenEntry{}
	tc.m[k] = e
	return e
}

// fresh reports whether tok may still be sent: it has not reached its
// refresh margin. A token without an expiry is kept until a 401.
func (tc *tokenCache) fresh(tok *oauth2.Token, now time.Time) bool {
	if tok.AccessToken == "" {
		return false
	}
	return tok.Expiry.IsZero() || now.Add(refreshMargin).Before(tok.Expiry)
}

// credential returns the secret value a request authenticates with: the
// named secret, or for client credentials an access token, fetched through
// egress from the declared token origin and cached until shortly before it
// expires. renew discards the cached token first (after a 401).
func (c *Client) credential(ctx context.Context, a *abi.AuthDirective, allowed []Origin, secrets Secrets, renew bool) (string, error) {
	if a.Scheme != schemeClientCredentials {
		return resolveSecret(secrets, a.Secret)
	}
	id, err := resolveSecret(secrets, a.ClientID)
	if err != nil {
		return "", err
	}
	secret, err := resolveSecret(secrets, a.Secret)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(a.TokenURL)
	if err != nil || !u.IsAbs() {
		return "", fmt.Errorf("%w: token_url %q is not an absolute URL", ErrDenied, a.TokenURL)
	}
	// Client credentials go only to the catalog's own token endpoint, the
	// home origin or allowed[1] (see Do), never to another origin the
	// catalog declares, whatever a directive rewritten by a vendor hook
	// names. That origin's literal may be on the host's own networks for
	// this fetch alone.
	o, _ := originOf(u)
	slot := (len(allowed) > 0 && allowed[0] == o) || (len(allowed) > 1 && allowed[1] == o)
	var trust Origin
	if slot {
		trust = o
	}
	if err := c.check(u, allowed, trust); err != nil {
		return "", fmt.Errorf("token_url: %w", err)
	}
	if !slot {
		c.denied("credentials_origin")
		return "", fmt.Errorf("%w: token_url %s is not the catalog's token endpoint origin", ErrDenied, o)
	}
	ctx = withTrust(ctx, trust)
	sum := sha256.Sum256([]byte(secret))
	e := c.tokens.entry(tokenKey{a.TokenURL, id, hex.EncodeToString(sum[:]), strings.Join(a.Scopes, " ")})
	e.mu.Lock()
	defer e.mu.Unlock()
	if renew {
		e.tok = nil
	}
	if e.tok != nil && c.tokens.fresh(e.tok, c.tokens.clock()) {
		return e.tok.AccessToken, nil
	}
	tok, err := c.fetchToken(ctx, a, id, secret, allowed)
	if err != nil {
		return "", redact(redact(err, secret), id)
	}
	e.tok = tok
	return tok.AccessToken, nil
}

// fetchToken runs the client-credentials grant (RFC 6749 §4.4) with
// golang.org/x/oauth2, over this client's guarded transport: same dialer
// (no metadata or link-local addresses), same timeout, no redirects.
func (c *Client) fetchToken(ctx context.Context, a *abi.AuthDirective, id, secret string, allowed []Origin) (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(ctx, c.limits.Timeout)
	defer cancel()
	hc := &http.Client{
		Transport: c.base,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			return fmt.Errorf("%w: the token endpoint redirected", ErrDenied)
		},
	}
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: a.TokenURL, Scopes: a.Scopes, AuthStyle: oauth2.AuthStyleInHeader}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The endpoint's own words, without the body's echo of anything.
			return nil, fmt.Errorf("%w: the token endpoint answered %d %s", ErrToken, re.Response.StatusCode, re.ErrorCode)
		}
		return nil, fmt.Errorf("%w: %v", ErrToken, classify(ctx, err))
	}
	if tok.AccessToken == "" {
		return nil, fmt.Errorf("%w: the token endpoint returned no access_token", ErrToken)
	}
	// The library dates Expiry on the wall clock; re-date the same
	// lifetime on the cache's clock (a fake one in tests).
	switch {
	case tok.ExpiresIn > 0:
		tok.Expiry = c.tokens.clock().Add(time.Duration(tok.ExpiresIn) * time.Second)
	case !tok.Expiry.IsZero():
		tok.Expiry = c.tokens.clock().Add(time.Until(tok.Expiry))
	}
	return tok, nil
}
