package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/authz/authztest"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// oauthResource is the fixture's resource identifier; it need not be the
// test server's address, only what tokens must name in aud.
const oauthResource = "http://127.0.0.1/mcp"

type oauthFixture struct {
	*fixture
	as *authztest.Server
}

// oauthOpts vary the OAuth fixture.
type oauthOpts struct {
	// tenantA is YAML appended to tenant a's entry (4-space indented keys).
	tenantA string
	cfg     func(*server.Config)
}

// newOAuthFixture serves the demo with tenant "a" reachable by a static
// token and by access tokens of a test authorization server whose
// `team` claim is "team-a".
func newOAuthFixture(t *testing.T, opts oauthOpts) *oauthFixture {
	t.Helper()
	as := authztest.New(t)
	f := newFixtureFor(t, func(backend *demo.Server) server.Config {
		var b strings.Builder
		b.WriteString("tenants:\n  - id: a\n    token_sha256: [" + tenant.Digest(tokenA) + "]\n    secrets:\n")
		for k, v := range backend.Backend().Secrets() {
			b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
		}
		b.WriteString("      XCHG_ID: {value: plasmd-client, catalogs: [tracker]}\n      XCHG_SECRET: {value: plasmd-client-secret, catalogs: [tracker]}\n")
		b.WriteString(strings.ReplaceAll(opts.tenantA, "{{AS}}", as.Issuer()))
		b.WriteString("  - id: b\n    token_sha256: [" + tenant.Digest(tokenB) + "]\n")
		b.WriteString("oauth:\n  resource: " + oauthResource + "\n  authorization_servers:\n    - issuer: " + as.Issuer() + "\n")
		b.WriteString("  scopes_supported: [plasm]\n  jwks_min_refresh: 1ns\n")
		b.WriteString("  rules:\n    - claim: team\n      equals: team-a\n      tenant: a\n")
		set, err := tenant.Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("tenants file: %v\n%s", err, b.String())
		}
		cfg := server.Config{Tenants: set}
		if opts.cfg != nil {
			opts.cfg(&cfg)
		}
		return cfg
	})
	return &oauthFixture{fixture: f, as: as}
}

func (o *oauthFixture) token(t *testing.T, sub string) string {
	return o.as.Mint(t, authztest.Token{Subject: sub, Audience: []string{oauthResource}, Extra: map[string]any{"team": "team-a"}})
}

func TestOAuthResourceServer(t *testing.T) {
	o := newOAuthFixture(t, oauthOpts{})
	meta := "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"

	// RFC 9728 metadata, unauthenticated, at both well-known forms.
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := o.do(t, "GET", p, "", "")
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", p, r.status, r.body)
		}
		var m struct {
			Resource string   `json:"resource"`
			Servers  []string `json:"authorization_servers"`
			Scopes   []string `json:"scopes_supported"`
		}
		if err := json.Unmarshal([]byte(r.body), &m); err != nil || m.Resource != oauthResource || len(m.Servers) != 1 || m.Servers[0] != o.as.Issuer() {
			t.Fatalf("%s: metadata %s", p, r.body)
		}
	}

	forger := authztest.ForgerKey(t)
	team := map[string]any{"team": "team-a"}
	tests := []struct {
		name, token string
		status      int
		tenant      string
		inDetail    string
	}{
		{"no token", "", 401, "", ""},
		{"static token", tokenA, 200, "a", ""},
		{"access token", o.token(t, "alice"), 200, "a", ""},
		{"stolen token for another audience", o.as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{"https://other.example.test/mcp"}, Extra: team}), 401, "", "audience"},
		{"expired token", o.as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{oauthResource}, Expiry: time.Now().Add(-time.Hour), Extra: team}), 401, "", "expired"},
		{"forged issuer", o.as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{oauthResource}, Issuer: "http://127.0.0.1:1", Extra: team}), 401, "", "issuer"},
		{"forged signature", o.as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{oauthResource}, Extra: team, Key: forger, Kid: "k1"}), 401, "", "signature"},
		{"no matching rule", o.as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{oauthResource}, Extra: map[string]any{"team": "team-z"}}), 401, "", "rule"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.token != "" {
				h = []string{"Authorization", "Bearer " + tc.token}
			}
			for _, path := range []string{"/v1/registry", "/mcp"} {
				method := "GET"
				if path == "/mcp" {
					if tc.status == 200 {
						continue
					}
					method = "POST"
				}
				r := o.do(t, method, path, "application/json", "{}", h...)
				if r.status != tc.status {
					t.Fatalf("%s: status %d, want %d: %s", path, r.status, tc.status, r.body)
				}
				if tc.status != 401 {
					if got := r.json(t)["tenant"]; got != tc.tenant {
						t.Fatalf("tenant %v", got)
					}
					continue
				}
				ch := r.header.Get("WWW-Authenticate")
				if !strings.Contains(ch, `resource_metadata="`+meta+`"`) || !strings.Contains(ch, `scope="plasm"`) {
					t.Fatalf("%s: WWW-Authenticate %q", path, ch)
				}
				if tc.token != "" && !strings.Contains(ch, `error="invalid_token"`) {
					t.Fatalf("%s: WWW-Authenticate %q", path, ch)
				}
				if tc.token != "" && (strings.Contains(r.body, tc.token) || strings.Contains(ch, tc.token)) {
					t.Fatal("the refusal quotes the token")
				}
				if path == "/v1/registry" && !strings.Contains(r.json(t)["detail"].(string), tc.inDetail) {
					t.Fatalf("detail %s, want it to mention %q", r.body, tc.inDetail)
				}
			}
		})
	}

	// A valid access token runs programs; the backend gets the catalog's
	// own secret (it refuses anything else), never the caller's token.
	alice := o.token(t, "alice")
	loc := openAs(t, o.fixture, alice, "tracker", "Issue")
	r := o.do(t, "POST", loc, "text/plain", `Issue("iss-1")[id,title]`, "Authorization", "Bearer "+alice, "Accept", "application/json")
	if r.status != 200 || !strings.Contains(r.body, "iss-1") {
		t.Fatalf("run with an access token: %d %s", r.status, r.body)
	}

	// Key rotation: the issuer retires its key; a token from the new key
	// is accepted (the unknown kid refetches the JWKS), the old one is not.
	o.as.Rotate(t, false)
	fresh := o.token(t, "alice")
	if r := o.do(t, "GET", "/v1/registry", "", "", "Authorization", "Bearer "+fresh); r.status != 200 {
		t.Fatalf("after rotation: %d %s", r.status, r.body)
	}
	if r := o.do(t, "GET", "/v1/registry", "", "", "Authorization", "Bearer "+alice); r.status != 401 {
		t.Fatalf("retired key: %d %s", r.status, r.body)
	}
}

func TestOAuthConfigErrors(t *testing.T) {
	base := "tenants:\n  - id: a\n"
	for _, tc := range []struct{ name, file, want string }{
		{"no token, no rule", base, "token_sha256"},
		{"rule for unknown tenant", base + "    token_sha256: [" + tenant.Digest(tokenA) + "]\noauth:\n  resource: https://x.example.test/mcp\n  authorization_servers: [{issuer: https://as.example.test}]\n  rules: [{tenant: zz}]\n", "not defined"},
		{"unknown key", base + "oauth:\n  resourse: https://x.example.test/mcp\n", "resourse"},
		{"token exchange without client", base + "    token_sha256: [" + tenant.Digest(tokenA) + "]\n    token_exchange:\n      tracker: {token_endpoint: https://as.example.test/token, audience: t, resource: https://t.example.test}\n", "client_id_env"},
		{"token exchange over http", base + "    token_sha256: [" + tenant.Digest(tokenA) + "]\n    token_exchange:\n      tracker: {token_endpoint: http://as.example.test/token, client_id_env: X, audience: t, resource: https://t.example.test}\n", "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tenant.Parse([]byte(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	ok := base + "oauth:\n  resource: https://x.example.test/mcp\n  authorization_servers: [{issuer: https://as.example.test}]\n  rules: [{tenant: a}]\n"
	if _, err := tenant.Parse([]byte(ok)); err != nil {
		t.Fatalf("a tenant reachable by oauth only: %v", err)
	}
}
