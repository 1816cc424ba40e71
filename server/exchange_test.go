package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/credstore"
)

// TestTokenExchange: tracker's credential is obtained per person by
// exchanging their access token (RFC 8693) at the catalog's token
// endpoint; each person calls the backend with their own upstream token,
// exchanges are cached, and a failed exchange names the catalog only.
func TestTokenExchange(t *testing.T) {
	var realToken string
	o := newOAuthFixture(t, oauthOpts{
		// The token endpoint is the test authorization server; its URL is
		// known only once it runs, so the fixture writes it in.
		tenantA: "    token_exchange:\n      tracker:\n        token_endpoint: {{AS}}/token\n        client_id_env: XCHG_ID\n        client_secret_env: XCHG_SECRET\n" +
			"        audience: tracker\n        resource: http://127.0.0.1/tracker\n",
		cfg: func(c *server.Config) { c.Credentials = credstore.NewMemory() },
	})
	realToken = o.backend.Backend().TrackerToken()
	o.as.ExchangeClientID, o.as.ExchangeClientSecret = "plasmd-client", "plasmd-client-secret"
	o.as.Exchange = func(sub string) string {
		if sub == "alice" {
			return realToken
		}
		return "upstream-token-of-" + sub // the backend refuses it
	}
	alice, bob := o.token(t, "alice"), o.token(t, "bob")
	run := func(tok string) httpResult {
		loc := openAs(t, o.fixture, tok, "tracker", "Issue")
		return o.do(t, "POST", loc, "text/plain", `Issue("iss-1")[id]`, "Authorization", "Bearer "+tok)
	}
	for i := range 2 {
		if r := run(alice); r.status != http.StatusOK {
			t.Fatalf("alice run %d: %d %s", i, r.status, r.body)
		}
	}
	if n := o.as.Exchanges(); n != 1 {
		t.Fatalf("%d exchanges for two runs of one token, want 1 (cached)", n)
	}
	if r := run(bob); r.status == http.StatusOK {
		t.Fatalf("bob ran with someone else's upstream token: %s", r.body)
	}
	// The tenant's own token (no person) keeps the tenant's secret.
	if r := run(tokenA); r.status != http.StatusOK {
		t.Fatalf("tenant token: %d %s", r.status, r.body)
	}
	// A refused exchange: a typed problem naming the catalog, no token.
	o.as.ExchangeClientSecret = "rotated"
	carol := o.token(t, "carol")
	r := run(carol)
	if r.status != http.StatusFailedDependency || !strings.Contains(r.body, "credential-exchange-failed") ||
		!strings.Contains(r.body, "tracker") || strings.Contains(r.body, carol) || strings.Contains(r.body, "plasmd-client-secret") {
		t.Fatalf("failed exchange: %d %s", r.status, r.body)
	}
}
