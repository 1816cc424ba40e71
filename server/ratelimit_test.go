package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

const rateLimitsA = `    rate_limits:
      principal: {rate: 3, per: 1m}
      capabilities:
        "tracker:issue_create": {rate: 1, per: 1h}
`

// TestRateLimitsPrincipalAndCapability: per-principal buckets over HTTP
// and MCP share one budget; a capability bucket caps one kind of call;
// refusals carry Retry-After (HTTP) or say when to retry (MCP); time is a
// fake clock.
func TestRateLimitsPrincipalAndCapability(t *testing.T) {
	clk := newFakeClock()
	o := newOAuthFixture(t, oauthOpts{tenantA: rateLimitsA, cfg: func(c *server.Config) { c.Clock = clk.Now }})
	alice, bob := o.token(t, "alice"), o.token(t, "bob")
	auth := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	for i := range 3 {
		if r := o.do(t, "GET", "/v1/registry", "", "", auth(alice)...); r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := o.do(t, "GET", "/v1/registry", "", "", auth(alice)...)
	p := problemOf(t, r)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "20" ||
		!strings.Contains(p["detail"].(string), "principal alice") || !strings.HasSuffix(p["type"].(string), "/rate-limited") {
		t.Fatalf("4th request: %d Retry-After=%q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Another person of the same tenant, and the tenant token, are not
	// held back by alice's bucket.
	if r := o.do(t, "GET", "/v1/registry", "", "", auth(bob)...); r.status != 200 {
		t.Fatalf("bob: %d", r.status)
	}
	if r := o.do(t, "GET", "/v1/registry", "", "", auth(tokenA)...); r.status != 200 {
		t.Fatalf("tenant token: %d", r.status)
	}
	// MCP tool calls draw from the same bucket; the refusal is a tool
	// error telling the model when to retry.
	cs := o.mcpClientAs(t, alice)
	out := call(t, cs, "discover_capabilities", map[string]any{"intent": "issues"})
	if !out.isError || !strings.Contains(out.text, "retry after 20s") {
		t.Fatalf("MCP over limit: %+v", out)
	}
	clk.Advance(20 * time.Second)
	if out := call(t, cs, "discover_capabilities", map[string]any{"intent": "issues"}); out.isError {
		t.Fatalf("after refill: %s", out.text)
	}

	// Capability bucket: one create per hour for bob; reads unaffected.
	lb := openAs(t, o.fixture, bob, "tracker", "Issue")
	create := `Issue.create(title="rate limited", priority=1)`
	if r := o.do(t, "POST", lb, "text/plain", create, auth(bob)...); r.status != 200 {
		t.Fatalf("first create: %d %s", r.status, r.body)
	}
	r = o.do(t, "POST", lb, "text/plain", create, auth(bob)...)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "3600" ||
		!strings.Contains(problemOf(t, r)["detail"].(string), "capability tracker:issue_create") {
		t.Fatalf("second create: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	clk.Advance(20 * time.Second) // refill bob's request bucket only
	if r := o.do(t, "POST", lb, "text/plain", `Issue("iss-1")`, auth(bob)...); r.status != 200 {
		t.Fatalf("read after capability refusal: %d %s", r.status, r.body)
	}
}

// TestRateLimitsAcrossReplicas: two servers sharing one limiter (what the
// Redis limiter gives replicas) enforce one tenant budget between them.
func TestRateLimitsAcrossReplicas(t *testing.T) {
	clk := newFakeClock()
	shared := ratelimit.NewMemory(clk.Now)
	replica := func() *fixture {
		return newFixtureFor(t, func(backend *demo.Server) server.Config {
			var b strings.Builder
			b.WriteString("tenants:\n  - id: a\n    token_sha256: [" + tenant.Digest(tokenA) + "]\n")
			b.WriteString("    rate_limits:\n      tenant: {rate: 2, per: 1m}\n    secrets:\n")
			for k, v := range backend.Backend().Secrets() {
				b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
			}
			set, err := tenant.Parse([]byte(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			return server.Config{Tenants: set, RateLimiter: shared}
		})
	}
	r1, r2 := replica(), replica()
	get := func(f *fixture) httpResult {
		return f.do(t, "GET", "/v1/registry", "", "", "Authorization", "Bearer "+tokenA)
	}
	if get(r1).status != 200 || get(r2).status != 200 {
		t.Fatal("within budget refused")
	}
	for _, f := range []*fixture{r1, r2} {
		if r := get(f); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "30" {
			t.Fatalf("over the shared budget: %d %q", r.status, r.header.Get("Retry-After"))
		}
	}
	clk.Advance(30 * time.Second)
	if r := get(r2); r.status != 200 {
		t.Fatalf("after refill: %d", r.status)
	}
	if r := get(r1); r.status != http.StatusTooManyRequests {
		t.Fatalf("refill gave two tokens: %d", r.status)
	}
}
