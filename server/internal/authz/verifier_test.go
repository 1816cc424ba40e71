package authz_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plasmd/plasmd/server/internal/authz"
	"github.com/plasmd/plasmd/server/internal/authz/authztest"
)

const resource = "https://plasmd.example.test/mcp"

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func setup(t *testing.T, discover bool) (*authztest.Server, *authz.Verifier, *clock) {
	t.Helper()
	as := authztest.New(t)
	is := authz.Issuer{Issuer: as.Issuer()}
	if !discover {
		is.JWKSURI = as.URL + "/jwks"
	}
	cfg := authz.Config{
		Resource:             resource,
		AuthorizationServers: []authz.Issuer{is},
		ScopesSupported:      []string{"plasm"},
		Rules: []authz.Rule{
			{Claim: "groups", Equals: "acme-staff", Tenant: "acme"},
			{Claim: "org", Equals: "globex", Tenant: "globex", PrincipalClaim: "email"},
		},
		JWKSMinRefresh: time.Minute,
	}
	if err := cfg.Validate(func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	return as, authz.NewVerifier(cfg, authz.Options{Client: as.Client(), Now: clk.Now}), clk
}

func TestVerify(t *testing.T) {
	as, v, _ := setup(t, true)
	acme := map[string]any{"groups": []any{"x", "acme-staff"}, "scope": "plasm read"}
	forger := authztest.ForgerKey(t)
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": as.Issuer(), "sub": "alice", "aud": resource,
		"exp": time.Now().Add(time.Hour).Unix(), "groups": []string{"acme-staff"}})
	hs.Header["kid"] = "k1"
	hsTok, _ := hs.SignedString([]byte("guessable"))
	tests := []struct {
		name    string
		token   string
		want    error
		wantTen string
		wantPr  string
	}{
		{"valid", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: acme}), nil, "acme", "alice"},
		{"trailing slash audience", as.Mint(t, authztest.Token{Subject: "bob", Audience: []string{resource + "/"}, Extra: acme}), nil, "acme", "bob"},
		{"principal claim", as.Mint(t, authztest.Token{Subject: "x", Audience: []string{resource}, Extra: map[string]any{"org": "globex", "email": "carol@globex"}}), nil, "globex", "carol@globex"},
		{"stolen for another audience", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{"https://other.example.test/mcp"}, Extra: acme}), authz.ErrAudience, "", ""},
		{"no audience", as.Mint(t, authztest.Token{Subject: "alice", Extra: acme}), authz.ErrAudience, "", ""},
		{"expired", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Expiry: time.Now().Add(-time.Hour), Extra: acme}), authz.ErrExpired, "", ""},
		{"not yet valid", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, NotBefore: time.Now().Add(time.Hour), Extra: acme}), authz.ErrExpired, "", ""},
		{"forged issuer", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Issuer: "https://evil.example.test", Extra: acme}), authz.ErrIssuer, "", ""},
		{"forged signature, known kid", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: acme, Key: forger, Kid: "k1"}), authz.ErrSignature, "", ""},
		{"hmac with public key (alg confusion)", hsTok, authz.ErrSignature, "", ""},
		{"no rule", as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: map[string]any{"groups": []any{"other"}}}), authz.ErrNoRule, "", ""},
		{"no principal", as.Mint(t, authztest.Token{Subject: "", Audience: []string{resource}, Extra: acme}), authz.ErrNoRule, "", ""},
		{"static token", "plain-static-token", authz.ErrNotJWT, "", ""},
		{"garbage jwt", "eyJhbGciOi.eyJ.xx", authz.ErrNotJWT, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := v.Verify(context.Background(), tc.token)
			if tc.want != nil {
				if !errors.Is(err, tc.want) || !errors.Is(err, authz.ErrInvalidToken) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				ch := v.Challenge(err)
				if !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(ch, `resource_metadata="https://plasmd.example.test/.well-known/oauth-protected-resource/mcp"`) {
					t.Fatalf("challenge %s", ch)
				}
				if strings.Contains(ch, tc.token) {
					t.Fatal("challenge quotes the token")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Tenant != tc.wantTen || id.Principal != tc.wantPr {
				t.Fatalf("identity %+v", id)
			}
		})
	}
}

// TestPrincipalPerIssuer: with two trusted issuers, the same subject from
// each is a different principal.
func TestPrincipalPerIssuer(t *testing.T) {
	as1, as2 := authztest.New(t), authztest.New(t)
	cfg := authz.Config{Resource: resource, Rules: []authz.Rule{{Tenant: "acme"}}, AuthorizationServers: []authz.Issuer{
		{Issuer: as1.Issuer(), JWKSURI: as1.URL + "/jwks"}, {Issuer: as2.Issuer(), JWKSURI: as2.URL + "/jwks"}}}
	v := authz.NewVerifier(cfg, authz.Options{})
	id1, err1 := v.Verify(context.Background(), as1.Mint(t, authztest.Token{Subject: "u1", Audience: []string{resource}}))
	id2, err2 := v.Verify(context.Background(), as2.Mint(t, authztest.Token{Subject: "u1", Audience: []string{resource}}))
	if err1 != nil || err2 != nil || id1.Principal == id2.Principal || id1.Principal != as1.Issuer()+"#u1" {
		t.Fatalf("%+v %v / %+v %v", id1, err1, id2, err2)
	}
}

func TestRequiredScope(t *testing.T) {
	as := authztest.New(t)
	cfg := authz.Config{Resource: resource, AuthorizationServers: []authz.Issuer{{Issuer: as.Issuer(), JWKSURI: as.URL + "/jwks"}},
		RequiredScopes: []string{"plasm"}, Rules: []authz.Rule{{Tenant: "acme"}}}
	v := authz.NewVerifier(cfg, authz.Options{Client: as.Client()})
	_, err := v.Verify(context.Background(), as.Mint(t, authztest.Token{Subject: "a", Audience: []string{resource}, Extra: map[string]any{"scope": "read"}}))
	if !errors.Is(err, authz.ErrScope) || !strings.Contains(v.Challenge(err), "insufficient_scope") {
		t.Fatalf("err = %v", err)
	}
	if _, err := v.Verify(context.Background(), as.Mint(t, authztest.Token{Subject: "a", Audience: []string{resource}, Extra: map[string]any{"scp": []any{"plasm"}}})); err != nil {
		t.Fatal(err)
	}
}

// TestKeyRotation: a new key id refetches the JWKS once; a retired key
// stops verifying; unknown kids refetch at most once per jwks_min_refresh.
func TestKeyRotation(t *testing.T) {
	as, v, clk := setup(t, false)
	ctx := context.Background()
	acme := map[string]any{"groups": "acme-staff"}
	old := as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: acme})
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	if as.JWKSHits() != 1 {
		t.Fatalf("JWKS fetched %d times, want 1 (cached)", as.JWKSHits())
	}
	// Rotation, old key retired. Within the refresh interval the new kid
	// is refused without a fetch.
	as.Rotate(t, false)
	fresh := as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: acme})
	if _, err := v.Verify(ctx, fresh); !errors.Is(err, authz.ErrSignature) {
		t.Fatalf("err = %v, want unknown key inside the refresh interval", err)
	}
	if as.JWKSHits() != 1 {
		t.Fatalf("JWKS fetched %d times inside the refresh interval", as.JWKSHits())
	}
	clk.Advance(2 * time.Minute)
	if _, err := v.Verify(ctx, fresh); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if as.JWKSHits() != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", as.JWKSHits())
	}
	if _, err := v.Verify(ctx, old); !errors.Is(err, authz.ErrSignature) {
		t.Fatalf("retired key still verifies: %v", err)
	}
	// A flood of forged kids costs no fetch until the interval passes.
	forger := authztest.ForgerKey(t)
	for i := range 5 {
		tok := as.Mint(t, authztest.Token{Subject: "m", Audience: []string{resource}, Extra: acme, Key: forger, Kid: "forged" + string(rune('a'+i))})
		if _, err := v.Verify(ctx, tok); !errors.Is(err, authz.ErrSignature) {
			t.Fatalf("forged kid: %v", err)
		}
	}
	if as.JWKSHits() != 2 {
		t.Fatalf("forged kids caused %d fetches", as.JWKSHits()-2)
	}
	// Graceful rotation: both keys verify after the next refresh.
	clk.Advance(2 * time.Minute)
	as.Rotate(t, true)
	newer := as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: acme})
	for _, tok := range []string{newer, fresh} {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("graceful rotation: %v", err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := func() authz.Config {
		return authz.Config{Resource: resource, AuthorizationServers: []authz.Issuer{{Issuer: "https://as.example.test"}}, Rules: []authz.Rule{{Tenant: "a"}}}
	}
	tests := []struct {
		name string
		mut  func(c *authz.Config)
		want string
	}{
		{"ok", func(*authz.Config) {}, ""},
		{"no resource", func(c *authz.Config) { c.Resource = "" }, "resource"},
		{"http resource off loopback", func(c *authz.Config) { c.Resource = "http://plasmd.example.test/mcp" }, "https"},
		{"no servers", func(c *authz.Config) { c.AuthorizationServers = nil }, "authorization_servers"},
		{"issuer with query", func(c *authz.Config) { c.AuthorizationServers[0].Issuer = "https://as.example.test/?x=1" }, "query"},
		{"duplicate issuer", func(c *authz.Config) {
			c.AuthorizationServers = append(c.AuthorizationServers, c.AuthorizationServers[0])
		}, "twice"},
		{"no rules", func(c *authz.Config) { c.Rules = nil }, "rules"},
		{"unknown tenant", func(c *authz.Config) { c.Rules[0].Tenant = "zzz" }, "not defined"},
		{"unknown rule issuer", func(c *authz.Config) { c.Rules[0].Issuer = "https://x.example.test" }, "not among"},
		{"claim without equals", func(c *authz.Config) { c.Rules[0].Claim = "org" }, "go together"},
		{"negative leeway", func(c *authz.Config) { c.Leeway = -time.Second }, "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.mut(&c)
			err := c.Validate(func(id string) bool { return id == "a" })
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, authz.ErrConfig) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMetadata(t *testing.T) {
	_, v, _ := setup(t, false)
	m := v.Metadata()
	if m.Resource != resource || len(m.AuthorizationServers) != 1 {
		t.Fatalf("metadata %+v", m)
	}
	if p := v.Config().MetadataPath(); p != "/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("path %s", p)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln")
	f.Add("eyJ..")
	f.Add("token")
	v := authz.NewVerifier(authz.Config{Resource: resource, AuthorizationServers: []authz.Issuer{{Issuer: "http://127.0.0.1:1", JWKSURI: "http://127.0.0.1:1/jwks"}}, Rules: []authz.Rule{{Tenant: "a"}}}, authz.Options{})
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := v.Verify(context.Background(), tok); err == nil {
			t.Fatal("a fuzzed token verified")
		}
	})
}
