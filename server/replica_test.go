package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/redistest"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// replicas serves the same catalogs, tenants and backend from n apps
// sharing one Redis, as n plasmd replicas would.
func replicas(t testing.TB, redisURL string, n int) []*fixture {
	t.Helper()
	backend := startBackend(t)
	var out []*fixture
	for range n {
		out = append(out, replicaApp(t, redisURL, backend, tenantsYAML(backend, ""), nil))
	}
	return out
}

func startBackend(t testing.TB) *demo.Server {
	t.Helper()
	backend, err := demo.Start(context.Background(), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	return backend
}

// tenantsYAML is the two-tenant file (a, b) with the backend's secrets;
// extraA is appended to tenant a's entry (a configuration change).
func tenantsYAML(backend *demo.Server, extraA string) string {
	var b strings.Builder
	b.WriteString("tenants:\n")
	for _, tn := range []struct{ id, tok string }{{"a", tokenA}, {"b", tokenB}} {
		b.WriteString("  - id: " + tn.id + "\n    token_sha256: [" + tenant.Digest(tn.tok) + "]\n")
		if tn.id == "a" {
			b.WriteString(extraA)
		}
		b.WriteString("    secrets:\n")
		for k, v := range backend.Backend().Secrets() {
			b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
		}
	}
	return b.String()
}

// replicaApp starts one app on the shared Redis; keep, if set, selects the
// demo catalogs it serves.
func replicaApp(t testing.TB, redisURL string, backend *demo.Server, tenants string, keep func(entry string) bool, mods ...func(*server.Config)) *fixture {
	t.Helper()
	set, err := tenant.Parse([]byte(tenants))
	if err != nil {
		t.Fatal(err)
	}
	all, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	cats := all[:0]
	for _, c := range all {
		if keep == nil || keep(c.EntryID) {
			cats = append(cats, c)
		}
	}
	cfg := server.Config{Tenants: set, StoreURL: redisURL, CacheDir: testCacheDir()}
	for _, m := range mods {
		m(&cfg)
	}
	app, err := server.New(context.Background(), cfg, cats)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() { srv.Close(); app.Close(context.Background()) })
	return &fixture{app: app, srv: srv, backend: backend}
}

func bearerHeader(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// runJSON runs a program over HTTP and returns the decoded answer.
func runJSON(t *testing.T, f *fixture, path, token, program string) map[string]any {
	t.Helper()
	r := f.do(t, http.MethodPost, path, "text/plain", program, append(bearerHeader(token), "Accept", "application/json")...)
	if r.status != http.StatusOK {
		t.Fatalf("run %q on %s: %d %s", program, path, r.status, r.body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func pagingHandle(t *testing.T, res map[string]any) string {
	t.Helper()
	meta := res["_meta"].(map[string]any)["plasm"].(map[string]any)
	pg, _ := meta["paging"].([]any)
	if len(pg) == 0 {
		t.Fatalf("no paging handle in %v", meta)
	}
	return pg[0].(map[string]any)["handle"].(string)
}

func firstIDs(res map[string]any) []string {
	var ids []string
	for _, r := range res["results"].([]any) {
		for _, row := range r.(map[string]any)["rows"].([]any) {
			ids = append(ids, row.(map[string]any)["id"].(string))
		}
	}
	return ids
}

// TestReplicasShareSessions: an execute session opened on one replica is
// used on another (same URL, same symbols), its pages continue there, its
// runs are readable from either, and a mutation on one replica reaches a
// notification listener on the other, for that tenant only.
func TestReplicasShareSessions(t *testing.T) {
	rs := redistest.Start(t)
	reps := replicas(t, rs.URL(), 2)
	a, b := reps[0], reps[1]

	body, _ := json.Marshal(map[string]any{"entry_id": "kanban", "entities": []string{"Issue"}})
	r := a.do(t, http.MethodPost, "/execute", "application/json", string(body), bearerHeader(tokenA)...)
	if r.status != http.StatusSeeOther {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	path := r.header.Get("Location")
	onA := a.do(t, http.MethodGet, path, "", "", append(bearerHeader(tokenA), "Accept", "application/json")...)
	onB := b.do(t, http.MethodGet, path, "", "", append(bearerHeader(tokenA), "Accept", "application/json")...)
	if onA.status != http.StatusOK || onB.status != http.StatusOK || onA.body != onB.body {
		t.Fatalf("session on A (%d) and B (%d) differ:\n%s\n%s", onA.status, onB.status, onA.body, onB.body)
	}
	// Another tenant does not see it on either replica.
	if r := b.do(t, http.MethodGet, path, "", "", bearerHeader(tokenB)...); r.status != http.StatusNotFound {
		t.Fatalf("tenant b on B: %d", r.status)
	}

	first := runJSON(t, a, path, tokenA, "Issue[id]")
	handle := pagingHandle(t, first)
	next := runJSON(t, b, path, tokenA, "page("+handle+")")
	if ids, prev := firstIDs(next), firstIDs(first); len(ids) == 0 || ids[0] == prev[0] {
		t.Fatalf("page on B did not continue A's list: %v after %v", ids, prev)
	}
	runs := a.do(t, http.MethodGet, path+"/runs", "", "", bearerHeader(tokenA)...)
	if runs.status != http.StatusOK || strings.Count(runs.body, `"run_id"`) != 2 {
		t.Fatalf("runs on A: %d %s", runs.status, runs.body)
	}

	la := connectListener(t, a.srv.URL+"/mcp", tokenA)
	lb := connectListener(t, a.srv.URL+"/mcp", tokenB)
	waitSubscribers(t, a.app, "a", 1)
	waitSubscribers(t, a.app, "b", 1)
	tpath := openAs(t, b, tokenA, "tracker", "Issue")
	runJSON(t, b, tpath, tokenA, `Issue.create(title="made on B", priority=1)`)
	if ev, d := la.next(t); ev != bus.DataRows || d["tenant_id"] != "a" || d["entity"] != "Issue" {
		t.Fatalf("listener on A got %s %v", ev, d)
	}
	if r := invalidate(t, b, tokenB, `{"kind":"tenant","reason":"marker"}`); r.status != http.StatusAccepted {
		t.Fatalf("invalidate: %d", r.status)
	}
	if _, d := lb.next(t); d["reason"] != "marker" {
		t.Fatalf("tenant b's listener got %v before its marker", d)
	}
	// The audit trail is shared too: the mutation run on B is on A's
	// /v1/audit for tenant a, and not for tenant b.
	if r := a.do(t, http.MethodGet, "/v1/audit", "", "", bearerHeader(tokenA)...); r.status != http.StatusOK || !strings.Contains(r.body, "made on B") {
		t.Fatalf("audit on A for tenant a: %d %s", r.status, r.body)
	}
	if r := a.do(t, http.MethodGet, "/v1/audit", "", "", bearerHeader(tokenB)...); r.status != http.StatusOK || strings.Contains(r.body, "made on B") {
		t.Fatalf("audit on A for tenant b: %d %s", r.status, r.body)
	}
}

func openAs(t testing.TB, f *fixture, token, entry string, entities ...string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"entry_id": entry, "entities": entities})
	r := f.do(t, http.MethodPost, "/execute", "application/json", string(body), bearerHeader(token)...)
	if r.status != http.StatusSeeOther {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	return r.header.Get("Location")
}

// TestRedisDown: with Redis stopped, requests answer 503 store-unavailable
// with Retry-After (HTTP) or a tool error saying so (MCP), health says
// unavailable, nothing panics; when Redis is back the same process serves
// again without a restart.
func TestRedisDown(t *testing.T) {
	rs := redistest.Start(t)
	f := replicas(t, rs.URL(), 1)[0]
	path := openAs(t, f, tokenA, "kanban", "Issue")
	runJSON(t, f, path, tokenA, "Issue[id]")
	cs := f.mcpClientAs(t, tokenA)
	contextCall(t, cs, "while redis is up", "kanban:Issue")

	rs.Stop()
	for _, req := range []struct{ method, path, ct, body string }{
		{http.MethodPost, path, "text/plain", "Issue[id]"},
		{http.MethodGet, path, "", ""},
		{http.MethodPost, "/execute", "application/json", `{"entry_id":"kanban","entities":["Issue"]}`},
		{http.MethodGet, "/v1/health", "", ""},
	} {
		r := f.do(t, req.method, req.path, req.ct, req.body, bearerHeader(tokenA)...)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "store-unavailable") {
			t.Fatalf("%s %s with Redis down: %d %q %s", req.method, req.path, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	out := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s0", "program": "Issue[id]"})
	if !out.isError || !strings.Contains(out.text, "session store is unreachable") || !strings.Contains(out.text, "retry after") {
		t.Fatalf("MCP with Redis down: %+v", out)
	}
	out = call(t, cs, "plasm_context", map[string]any{"intent": "while redis is down", "seeds": seedList("kanban:Issue")})
	if !out.isError || !strings.Contains(out.text, "session store is unreachable") {
		t.Fatalf("MCP context with Redis down: %+v", out)
	}

	// Redis is back (empty: it keeps nothing on disk here): the process
	// serves again without a restart.
	rs.Begin()
	deadline := time.Now().Add(notifyDeadline)
	for {
		r := f.do(t, http.MethodGet, "/v1/health", "", "")
		if r.status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health after Redis returned: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	path = openAs(t, f, tokenA, "kanban", "Issue")
	runJSON(t, f, path, tokenA, "Issue[id]")
	mustOK(t, call(t, cs, "plasm_context", map[string]any{"intent": "after redis returned", "seeds": seedList("kanban:Issue")}))
}

// TestDeployAnnounced: a replica starting with a different catalog set or
// tenant configuration than the one before it announces the difference to
// the sessions on the replicas still running (catalog_updated with the
// digest, tenant_updated), each to the tenants concerned only.
func TestDeployAnnounced(t *testing.T) {
	rs := redistest.Start(t)
	backend := startBackend(t)
	old := replicaApp(t, rs.URL(), backend, tenantsYAML(backend, ""), nil)
	la := connectListener(t, old.srv.URL+"/mcp", tokenA)
	lb := connectListener(t, old.srv.URL+"/mcp", tokenB)
	waitSubscribers(t, old.app, "a", 1)
	waitSubscribers(t, old.app, "b", 1)

	// The new version drops kanban and gives tenant a a new limit.
	replicaApp(t, rs.URL(), backend, tenantsYAML(backend, "    limits: {max_queue: 7}\n"), func(e string) bool { return e != "kanban" })

	got := map[string]string{}
	for range 2 {
		ev, d := la.next(t)
		got[ev] = d["reason"].(string) + " " + fmt.Sprint(d["entry_id"])
	}
	if got[bus.DataCatalog] != "removed kanban" || got[bus.DataTenant] != "changed <nil>" {
		t.Fatalf("tenant a heard %v", got)
	}
	ev, d := lb.next(t)
	if ev != bus.DataCatalog || d["reason"] != "removed" || d["entry_id"] != "kanban" || d["tenant_id"] != "b" || d["digest"] == "" {
		t.Fatalf("tenant b heard %s %v", ev, d)
	}
	// Tenant b's configuration did not change: its next event is our marker.
	if r := invalidate(t, old, tokenB, `{"kind":"tenant","reason":"marker"}`); r.status != http.StatusAccepted {
		t.Fatalf("invalidate: %d", r.status)
	}
	if _, d := lb.next(t); d["reason"] != "marker" {
		t.Fatalf("tenant b heard %v before its marker", d)
	}
}

// TestMCPStateless: two --mcp-stateless replicas on one Redis. The intent
// comes from the request's _meta; plasm_context and plasm_run name the
// logical session by the same sN ref (minted in the tenant's stateless
// scope, surfaces.md) and the same canonical session_handle, and any
// connection to any replica runs, pages and reads with either; another
// tenant cannot.
func TestMCPStateless(t *testing.T) {
	rs := redistest.Start(t)
	backend := startBackend(t)
	stateless := func(c *server.Config) { c.MCPStateless = true }
	a := replicaApp(t, rs.URL(), backend, tenantsYAML(backend, ""), nil, stateless)
	b := replicaApp(t, rs.URL(), backend, tenantsYAML(backend, ""), nil, stateless)
	ctx := context.Background()

	ca := a.mcpClientAs(t, tokenA)
	res, err := ca.CallTool(ctx, &mcp.CallToolParams{Name: "plasm_context", Meta: mcp.Meta{"plasm": map[string]any{"intent": "stateless triage"}},
		Arguments: map[string]any{"seeds": seedList("kanban:Issue")}})
	if err != nil || res.IsError {
		t.Fatalf("plasm_context: %v %+v", err, res)
	}
	meta := res.Meta["plasm"].(map[string]any)
	ref := meta["logical_session_ref"].(string)
	handle0 := meta["session_handle"].(string)
	if !regexp.MustCompile(`^s\d+$`).MatchString(ref) || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "`"+ref+"`") ||
		meta["teaching_uri"] != "plasm://session/"+ref+"/teaching" {
		t.Fatalf("stateless ref %q, meta %v", ref, meta)
	}
	missing := call(t, ca, "plasm_context", map[string]any{"seeds": seedList("kanban:Issue")})
	if !missing.isError || !strings.Contains(missing.text, "missing intent") {
		t.Fatalf("no intent anywhere: %+v", missing)
	}

	cb := b.mcpClientAs(t, tokenA)
	first := mustOK(t, runCall(t, cb, ref, "Issue[id]"))
	// Both tools name the session alike (plasm_context once answered the
	// logical id where plasm_run answered sN).
	if refOf(first) != ref || first.meta["session_handle"] != handle0 || first.meta["logical_session_id"] != meta["logical_session_id"] {
		t.Fatalf("plasm_run names the session %v, plasm_context %v", first.meta, meta)
	}
	for _, alt := range []string{handle0, meta["logical_session_id"].(string)} {
		if o := mustOK(t, runCall(t, cb, alt, "Issue[id]")); refOf(o) != ref {
			t.Fatalf("run by %s answered ref %q, want %q", alt, refOf(o), ref)
		}
	}
	handle := first.meta["paging"].([]any)[0].(map[string]any)["handle"].(string)
	if !regexp.MustCompile(`^s\d+_pg1$`).MatchString(handle) {
		t.Fatalf("paging handle %q", handle)
	}
	ca2 := a.mcpClientAs(t, tokenA)
	next := mustOK(t, runCall(t, ca2, ref, "page("+handle+")"))
	if n, f := tsvRows(t, next.text), tsvRows(t, first.text); len(n) == 0 || n[0]["id"] == f[0]["id"] {
		t.Fatalf("page on A did not continue B's list")
	}
	if _, err := ca2.ReadResource(ctx, &mcp.ReadResourceParams{URI: first.meta["run_uri"].(string)}); err != nil {
		t.Fatalf("read %s on A: %v", first.meta["run_uri"], err)
	}

	other := b.mcpClientAs(t, tokenB)
	if o := runCall(t, other, ref, "Issue[id]"); !o.isError || !strings.Contains(o.text, "unknown") {
		t.Fatalf("tenant b used tenant a's ref: %+v", o)
	}
}
