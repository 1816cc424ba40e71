package authz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/plasmd/plasmd/server/internal/oauthconfig"
)

// TokenTypeAccessToken is RFC 8693's token type for OAuth access tokens.
const TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"

// ErrExchange marks a failed token exchange.
var ErrExchange = errors.New("token exchange")

// Exchanger performs RFC 8693 token exchange (via the go-sdk's
// oauthex.ExchangeToken) and caches each issued token until shortly before
// it expires, keyed by a digest of the subject token, so one person's runs
// do not exchange on every call and nobody else's token can hit the entry.
type Exchanger struct {
	client *http.Client
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]exchanged
	calls int
}

type exchanged struct {
	token  string
	expiry time.Time
}

// maxExchangeCache bounds the cache; past it, expired entries are dropped
// and, if still full, all of them.
const maxExchangeCache = 10000

// NewExchanger returns an exchanger (nil client = 10s timeout client).
func NewExchanger(client *http.Client, now func() time.Time) *Exchanger {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	return &Exchanger{client: client, now: now, cache: map[string]exchanged{}}
}

// Exchange returns an upstream token for the person subjectToken names.
func (e *Exchanger) Exchange(ctx context.Context, subjectToken string, x oauthconfig.Exchange, clientID, clientSecret string) (string, error) {
	if subjectToken == "" || clientID == "" {
		return "", fmt.Errorf("%w: subject token and client id are required", ErrExchange)
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{subjectToken, x.TokenEndpoint, x.Audience, x.Resource, strings.Join(x.Scopes, " ")}, "\x00")))
	key := hex.EncodeToString(sum[:])
	e.mu.Lock()
	if c, ok := e.cache[key]; ok && e.now().Before(c.expiry) {
		e.mu.Unlock()
		return c.token, nil
	}
	e.mu.Unlock()
	creds := &oauthex.ClientCredentials{ClientID: clientID}
	if clientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: clientSecret}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tok, err := oauthex.ExchangeToken(ctx, x.TokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: TokenTypeAccessToken,
		Audience:           x.Audience,
		Resource:           x.Resource,
		Scope:              x.Scopes,
		SubjectToken:       subjectToken,
		SubjectTokenType:   TokenTypeAccessToken,
	}, creds, e.client)
	if err != nil {
		return "", fmt.Errorf("%w at %s: %v", ErrExchange, x.TokenEndpoint, err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("%w at %s: no token issued", ErrExchange, x.TokenEndpoint)
	}
	// Reuse until a minute before expiry (or five minutes when the
	// endpoint gives none), so a cached token never expires mid-run.
	exp := e.now().Add(5 * time.Minute)
	if !tok.Expiry.IsZero() {
		exp = tok.Expiry.Add(-time.Minute)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if len(e.cache) >= maxExchangeCache {
		for k, c := range e.cache {
			if !e.now().Before(c.expiry) {
				delete(e.cache, k)
			}
		}
		if len(e.cache) >= maxExchangeCache {
			clear(e.cache)
		}
	}
	e.cache[key] = exchanged{token: tok.AccessToken, expiry: exp}
	return tok.AccessToken, nil
}

// Calls counts exchanges performed (not cache hits).
func (e *Exchanger) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}
