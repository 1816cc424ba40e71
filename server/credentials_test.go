package server_test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/credstore"
)

// newCredentialFixture: tenant a delegates tracker's auth to principals;
// credentials persist in an encrypted file, audit records in a JSON lines
// file.
func newCredentialFixture(t *testing.T) (*oauthFixture, string) {
	t.Helper()
	dir := t.TempDir()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	store, err := credstore.OpenFile(filepath.Join(dir, "credentials"), key)
	if err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	log, err := audit.OpenFile(auditPath, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	o := newOAuthFixture(t, oauthOpts{
		tenantA: "    principal_credentials: [tracker]\n",
		cfg: func(c *server.Config) {
			c.Credentials = store
			c.Audit = log
		},
	})
	return o, auditPath
}

func TestPrincipalCredentials(t *testing.T) {
	o, _ := newCredentialFixture(t)
	realToken := o.backend.Backend().TrackerToken()
	alice, bob := o.token(t, "alice"), o.token(t, "bob")
	auth := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	run := func(tok, loc string) httpResult {
		return o.do(t, "POST", loc, "text/plain", `Issue("iss-1")[id,title]`, auth(tok)...)
	}
	la := openAs(t, o.fixture, alice, "tracker", "Issue")

	// No credential: a typed problem naming the catalog and how to connect.
	r := run(alice, la)
	p := problemOf(t, r)
	if r.status != http.StatusFailedDependency || !strings.HasSuffix(p["type"].(string), "/credential-missing") ||
		!strings.Contains(p["detail"].(string), "tracker") || !strings.Contains(p["hint"].(string), "PUT /v1/credentials/tracker") {
		t.Fatalf("missing credential: %d %s", r.status, r.body)
	}
	if strings.Contains(r.body, realToken) {
		t.Fatal("the refusal quotes the tenant's token")
	}
	// The same over MCP, as a tool error the model can act on.
	cs := o.mcpClientAs(t, alice)
	contextCall(t, cs, "read issues", "tracker:Issue")
	if out := runCall(t, cs, "s0", `Issue("iss-1")`); !out.isError || !strings.Contains(out.text, "PUT /v1/credentials/tracker") {
		t.Fatalf("MCP missing credential: %+v", out)
	}

	// A wrong credential of alice's own is what the backend sees: the
	// tenant's working token is not used in its place.
	if r := o.do(t, "PUT", "/v1/credentials/tracker", "application/json", `{"token":"not-the-token"}`, auth(alice)...); r.status != http.StatusNoContent {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	if r := run(alice, la); r.status == http.StatusOK {
		t.Fatalf("alice's wrong credential was replaced by the tenant's: %s", r.body)
	}
	body, _ := json.Marshal(map[string]string{"token": realToken})
	if r := o.do(t, "PUT", "/v1/credentials/tracker", "application/json", string(body), auth(alice)...); r.status != http.StatusNoContent {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	if r := run(alice, la); r.status != http.StatusOK || !strings.Contains(r.body, "iss-1") {
		t.Fatalf("alice with her credential: %d %s", r.status, r.body)
	}
	if out := runCall(t, cs, "s0", `Issue("iss-1")[id]`); out.isError {
		t.Fatalf("MCP with credential: %s", out.text)
	}
	// Bob has none; a static tenant token (no principal) uses the tenant's.
	if r := run(bob, openAs(t, o.fixture, bob, "tracker", "Issue")); r.status != http.StatusFailedDependency {
		t.Fatalf("bob borrowed alice's credential: %d %s", r.status, r.body)
	}
	if r := run(tokenA, openAs(t, o.fixture, tokenA, "tracker", "Issue")); r.status != http.StatusOK {
		t.Fatalf("static token: %d %s", r.status, r.body)
	}

	r = o.do(t, "GET", "/v1/credentials", "", "", auth(alice)...)
	if r.status != 200 || !strings.Contains(r.body, `"connected":["tracker"]`) || strings.Contains(r.body, realToken) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		name, method, path, body, token string
		status                          int
	}{
		{"tenant token cannot store", "PUT", "/v1/credentials/tracker", `{"token":"x1234"}`, tokenA, 403},
		{"catalog not delegated", "PUT", "/v1/credentials/kanban", `{"token":"x1234"}`, alice, 404},
		{"unknown catalog", "PUT", "/v1/credentials/nope", `{"token":"x1234"}`, alice, 404},
		{"undeclared secret", "PUT", "/v1/credentials/tracker", `{"secrets":{"HOME":"x"}}`, alice, 400},
		{"both forms", "PUT", "/v1/credentials/tracker", `{"token":"a","secrets":{"X":"y"}}`, alice, 400},
		{"empty", "PUT", "/v1/credentials/tracker", `{}`, alice, 400},
		{"bad json", "PUT", "/v1/credentials/tracker", `{`, alice, 400},
		{"other tenant", "PUT", "/v1/credentials/tracker", `{"token":"x1234"}`, tokenB, 403},
		{"no token", "PUT", "/v1/credentials/tracker", `{"token":"x1234"}`, "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.token != "" {
				h = auth(tc.token)
			}
			if r := o.do(t, tc.method, tc.path, "application/json", tc.body, h...); r.status != tc.status {
				t.Fatalf("%d, want %d: %s", r.status, tc.status, r.body)
			}
		})
	}
	if r := o.do(t, "DELETE", "/v1/credentials/tracker", "", "", auth(alice)...); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d", r.status)
	}
	if r := run(alice, la); r.status != http.StatusFailedDependency {
		t.Fatalf("after delete: %d %s", r.status, r.body)
	}
}

// TestAuditTrail: a mutation is recorded with who, what program (with the
// real token it quotes redacted), plan hash, calls and outcome; reads are
// not; each tenant (and person) sees only its own records.
func TestAuditTrail(t *testing.T) {
	o, auditPath := newCredentialFixture(t)
	realToken := o.backend.Backend().TrackerToken()
	alice, bob := o.token(t, "alice"), o.token(t, "bob")
	auth := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	body, _ := json.Marshal(map[string]string{"token": realToken})
	o.do(t, "PUT", "/v1/credentials/tracker", "application/json", string(body), auth(alice)...)

	la := openAs(t, o.fixture, alice, "tracker", "Issue")
	if r := o.do(t, "POST", la, "text/plain", `Issue("iss-1")`, auth(alice)...); r.status != 200 {
		t.Fatalf("read: %d %s", r.status, r.body)
	}
	create := `Issue.create(title="` + realToken + `", priority=2)`
	// A reviewed mutation: the dry run mints the plan_commit_ref the
	// live run presents (review gating), and the audit record names it.
	pc, _ := o.do(t, "POST", la+"?mode=plan", "text/plain", create, auth(alice)...).json(t)["plan_commit_ref"].(string)
	if r := o.do(t, "POST", la+"?plan_commit_ref="+pc, "text/plain", create, auth(alice)...); pc == "" || r.status != 200 {
		t.Fatalf("create with %q: %d %s", pc, r.status, r.body)
	}
	if r := o.do(t, "POST", la, "text/plain", `Issue("iss-404404").close()`, auth(alice)...); r.status == 200 {
		t.Fatalf("closing a missing issue succeeded: %s", r.body)
	}

	r := o.do(t, "GET", "/v1/audit", "", "", auth(alice)...)
	if r.status != 200 {
		t.Fatalf("audit: %d %s", r.status, r.body)
	}
	if strings.Contains(r.body, realToken) {
		t.Fatal("the audit log shows the token")
	}
	var got struct {
		Records []audit.Record `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Records) != 3 {
		t.Fatalf("want credential + create + failed close, got %d: %s", len(got.Records), r.body)
	}
	cred, mut, failed := got.Records[0], got.Records[1], got.Records[2]
	if cred.Action != "credential.stored" || cred.EntryID != "tracker" || cred.Principal != "alice" {
		t.Fatalf("credential record %+v", cred)
	}
	if mut.Action != "run" || mut.Tenant != "a" || mut.Principal != "alice" || mut.Outcome != "ok" || mut.CommitRef != pc ||
		!regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(mut.PlanHash) || mut.Time.IsZero() || mut.RunID == "" {
		t.Fatalf("mutation record %+v", mut)
	}
	if mut.Program != `Issue.create(title="[REDACTED]", priority=2)` {
		t.Fatalf("program %q", mut.Program)
	}
	if len(mut.Calls) == 0 || mut.Calls[0].EntryID != "tracker" || mut.Calls[0].Effect != "write" || mut.Calls[0].Calls < 1 {
		t.Fatalf("calls %+v", mut.Calls)
	}
	if failed.Outcome != "error" || failed.Error == "" {
		t.Fatalf("failed mutation %+v", failed)
	}

	// Isolation: bob sees none of alice's; tenant b none; the tenant's
	// own token (its operator) sees the tenant's.
	for _, tc := range []struct {
		token string
		n     int
	}{{bob, 0}, {tokenB, 0}, {tokenA, 3}} {
		r := o.do(t, "GET", "/v1/audit", "", "", auth(tc.token)...)
		var g struct {
			Records []audit.Record `json:"records"`
		}
		_ = json.Unmarshal([]byte(r.body), &g)
		if r.status != 200 || len(g.Records) != tc.n {
			t.Fatalf("%d records, want %d: %s", len(g.Records), tc.n, r.body)
		}
	}
	if r := o.do(t, "GET", "/v1/audit?limit=0", "", "", auth(alice)...); r.status != 400 {
		t.Fatalf("bad limit: %d", r.status)
	}
	raw, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(raw), "\n") != 3 || strings.Contains(string(raw), realToken) {
		t.Fatalf("audit file:\n%s", raw)
	}
}
