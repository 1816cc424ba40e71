// Package authztest is a small OAuth authorization server for tests: it
// publishes RFC 8414 metadata and a JWKS on a loopback httptest server and
// mints RS256 access tokens with keys generated per server, so tests can
// rotate keys, expire tokens and mint for other audiences or issuers.
package authztest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// Server is a running test authorization server.
type Server struct {
	*httptest.Server
	// Exchange, when set, serves RFC 8693 token exchange at /token for a
	// client with ExchangeClientID / ExchangeClientSecret: it returns the
	// upstream token for the subject token's sub.
	Exchange             func(sub string) string
	ExchangeClientID     string
	ExchangeClientSecret string
	exchanges            atomic.Int64
	mu                   sync.Mutex
	keys                 []*rsa.PrivateKey // published; the last one signs
	kids                 []string
	nkid                 int
	jwksHits             atomic.Int64
}

// New starts a server with one fresh signing key; it closes with t.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": s.URL, "jwks_uri": s.URL + "/jwks",
			"authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		s.jwksHits.Add(1)
		s.mu.Lock()
		var set jose.JSONWebKeySet
		for i, k := range s.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: s.kids[i], Algorithm: "RS256", Use: "sig"})
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	mux.HandleFunc("/token", s.serveToken)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	s.Rotate(t, false)
	return s
}

// serveToken answers token exchange requests (RFC 8693 §2).
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, e string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": e})
	}
	if err := r.ParseForm(); err != nil || s.Exchange == nil {
		fail(http.StatusBadRequest, "invalid_request")
		return
	}
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" {
		fail(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	if r.PostForm.Get("client_id") != s.ExchangeClientID || r.PostForm.Get("client_secret") != s.ExchangeClientSecret {
		fail(http.StatusUnauthorized, "invalid_client")
		return
	}
	var c jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(r.PostForm.Get("subject_token"), &c); err != nil {
		fail(http.StatusBadRequest, "invalid_grant")
		return
	}
	sub, _ := c["sub"].(string)
	s.exchanges.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": s.Exchange(sub), "token_type": "Bearer",
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "expires_in": 3600})
}

// Exchanges counts token exchanges served.
func (s *Server) Exchanges() int { return int(s.exchanges.Load()) }

// Issuer is the server's issuer identifier (its base URL).
func (s *Server) Issuer() string { return s.URL }

// JWKSHits counts JWKS downloads.
func (s *Server) JWKSHits() int { return int(s.jwksHits.Load()) }

// Rotate makes a new signing key; keepOld keeps publishing the previous
// ones (a graceful rotation), otherwise they are retired at once.
func (s *Server) Rotate(t testing.TB, keepOld bool) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nkid++
	if !keepOld {
		s.keys, s.kids = nil, nil
	}
	s.keys = append(s.keys, k)
	s.kids = append(s.kids, fmt.Sprintf("k%d", s.nkid))
}

// Token is what to mint.
type Token struct {
	Subject  string
	Audience []string
	// Issuer overrides the server's own (a forged or foreign issuer).
	Issuer    string
	Expiry    time.Time // default: now + 1h
	NotBefore time.Time
	Extra     map[string]any
	// Key signs instead of the server's current key (a forger's key).
	Key *rsa.PrivateKey
	Kid string
}

// Mint signs a token with the current key (or tk.Key).
func (s *Server) Mint(t testing.TB, tk Token) string {
	t.Helper()
	s.mu.Lock()
	key, kid := s.keys[len(s.keys)-1], s.kids[len(s.kids)-1]
	s.mu.Unlock()
	if tk.Key != nil {
		key, kid = tk.Key, tk.Kid
	}
	if tk.Issuer == "" {
		tk.Issuer = s.URL
	}
	if tk.Expiry.IsZero() {
		tk.Expiry = time.Now().Add(time.Hour)
	}
	c := jwt.MapClaims{"iss": tk.Issuer, "sub": tk.Subject, "aud": tk.Audience, "exp": tk.Expiry.Unix(), "iat": time.Now().Add(-time.Minute).Unix()}
	if !tk.NotBefore.IsZero() {
		c["nbf"] = tk.NotBefore.Unix()
	}
	for k, v := range tk.Extra {
		c[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	out, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// PublicKey is the current signing key's public half.
func (s *Server) PublicKey() *rsa.PublicKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &s.keys[len(s.keys)-1].PublicKey
}

// ForgerKey is a key no server publishes.
func ForgerKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
