package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
	"github.com/plasmd/plasmd/server"
)

// fixture is a plasmd App serving the embedded demo over httptest.
type fixture struct {
	app     *server.App
	srv     *httptest.Server
	backend *demo.Server
}

// testCacheDir shares compiled modules across test processes: compiling the
// engine under -race takes minutes, loading it from the cache milliseconds.
func testCacheDir() string { return sandboxtest.CacheDir() }

func newFixture(t testing.TB, cfg server.Config) *fixture {
	t.Helper()
	return newFixtureFor(t, func(*demo.Server) server.Config { return cfg })
}

type httpResult struct {
	status int
	header http.Header
	body   string
}

func (r httpResult) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("response is not JSON (%d): %v\n%s", r.status, err, r.body)
	}
	return m
}

// liveRunPath matches POST /execute/{ph}/{s} (a run, unless ?mode=plan).
var liveRunPath = regexp.MustCompile(`^/execute/[^/?]+/[^/?]+(\?|$)`)

func (f *fixture) do(t testing.TB, method, path, contentType, body string, header ...string) httpResult {
	t.Helper()
	if method == http.MethodPost && liveRunPath.MatchString(path) && !strings.Contains(path, "force=") && !strings.Contains(path, "plan_commit_ref=") {
		// Tests of results force review plans through; review gating has
		// its own tests (gate_test.go), which always say force= or
		// plan_commit_ref= explicitly.
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "force=true"
	}
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpResult{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// open opens an execute session over HTTP and returns its path.
func (f *fixture) open(t testing.TB, entry string, entities ...string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"entry_id": entry, "entities": entities})
	r := f.do(t, "POST", "/execute", "application/json", string(b))
	if r.status != http.StatusSeeOther {
		t.Fatalf("open %s %v: status %d: %s", entry, entities, r.status, r.body)
	}
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, "/execute/") {
		t.Fatalf("open: Location %q", loc)
	}
	return loc
}

// runJSON runs a program and returns the decoded JSON result roots.
func (f *fixture) runJSON(t testing.TB, path, program string) []map[string]any {
	t.Helper()
	r := f.do(t, "POST", path, "text/plain", program, "Accept", "application/json")
	if r.status != http.StatusOK {
		t.Fatalf("run %q: status %d: %s", program, r.status, r.body)
	}
	var out struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("run %q: %v", program, err)
	}
	return out.Results
}

func rows(t testing.TB, root map[string]any) []map[string]any {
	t.Helper()
	raw, _ := root["rows"].([]any)
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		out[i] = r.(map[string]any)
	}
	return out
}

func TestHTTPExecute(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue", "Project")

	t.Run("session prompt", func(t *testing.T) {
		r := f.do(t, "GET", path, "", "")
		m := r.json(t)
		prompt, _ := m["prompt"].(string)
		if r.status != 200 || !strings.Contains(prompt, "plasm_expr\tMeaning") || !strings.Contains(prompt, "tracker:Issue") {
			t.Fatalf("session: %d %s", r.status, r.body)
		}
	})
	t.Run("get", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue("iss-1")`)[0])
		if len(got) != 1 || got[0]["id"] != "iss-1" || got[0]["title"] == "" {
			t.Fatalf("get: %v", got)
		}
	})
	t.Run("filtered query", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue{status="open", priority>=3}.limit(5)[id,status,priority]`)[0])
		if len(got) == 0 || len(got) > 5 {
			t.Fatalf("query: %d rows", len(got))
		}
		for _, r := range got {
			if r["status"] != "open" || r["priority"].(float64) < 3 || len(r) != 3 {
				t.Fatalf("row does not match the filter or projection: %v", r)
			}
		}
	})
	t.Run("search", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue~"login"[id,title]`)[0])
		if len(got) == 0 {
			t.Fatal("search found nothing")
		}
		for _, r := range got {
			if !strings.Contains(strings.ToLower(r["title"].(string)), "login") {
				t.Fatalf("search row without the word: %v", r)
			}
		}
	})
	t.Run("relation hop with fan-out", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue{project_id="prj-1"}.limit(3).comments[id,issue_id]`)[0])
		if len(got) == 0 {
			t.Fatal("hop returned nothing")
		}
		parents := map[any]bool{}
		for _, r := range got {
			parents[r["issue_id"]] = true
		}
		if len(parents) < 2 {
			t.Fatalf("fan-out reached %d parents, want several: %v", len(parents), got)
		}
		labels := rows(t, f.runJSON(t, path, `Issue("iss-2").labels`)[0])
		if len(labels) == 0 || labels[0]["name"] == nil {
			t.Fatalf("from_parent_get relation: %v", labels)
		}
	})
	t.Run("create then read", func(t *testing.T) {
		created := rows(t, f.runJSON(t, path, `Issue.create(title="Written by the e2e test", priority=2, project_id="prj-2")`)[0])
		if len(created) != 1 {
			t.Fatalf("create: %v", created)
		}
		id := created[0]["id"].(string)
		got := rows(t, f.runJSON(t, path, `Issue("`+id+`")[id,title,priority]`)[0])
		if len(got) != 1 || got[0]["title"] != "Written by the e2e test" {
			t.Fatalf("read after create: %v", got)
		}
		found := rows(t, f.runJSON(t, path, `Issue~"written e2e"[id]`)[0])
		if len(found) == 0 || found[0]["id"] != id {
			t.Fatalf("search does not find the created issue first: %v", found)
		}
	})
	t.Run("bindings and two roots", func(t *testing.T) {
		res := f.runJSON(t, path, "a = Issue{status=\"open\"}.limit(2)\nb = Project(\"prj-1\")\na[id], b")
		if len(res) != 2 || res[0]["label"] != "a[id]" || res[1]["label"] != "b" || len(rows(t, res[0])) != 2 {
			t.Fatalf("roots: %v", res)
		}
	})
	t.Run("plan mode", func(t *testing.T) {
		r := f.do(t, "POST", path+"?mode=plan", "text/plain", `Issue("iss-1").close()`)
		m := r.json(t)
		if r.status != 200 || m["verdict"] != "review" {
			t.Fatalf("plan: %d %s", r.status, r.body)
		}
		// A dry run calls no backend: the issue stays open.
		got := rows(t, f.runJSON(t, path, `Issue("iss-1")[status]`)[0])
		if got[0]["status"] == "closed" {
			t.Fatal("plan mode executed the mutation")
		}
	})
	t.Run("formats", func(t *testing.T) {
		md := f.do(t, "POST", path, "text/plain", `Project("prj-1")[id,name]`)
		if md.status != 200 || !strings.HasPrefix(md.body, "## Project(\"prj-1\")[id,name] (1 row)\n```tsv\nid\tname\nprj-1\t") {
			t.Fatalf("markdown: %d %q", md.status, md.body)
		}
		tsv := f.do(t, "POST", path, "application/json", `{"program": "Project(\"prj-1\")[id]"}`, "Accept", "text/tab-separated-values")
		if tsv.status != 200 || tsv.body != "id\nprj-1\n" {
			t.Fatalf("tsv: %d %q", tsv.status, tsv.body)
		}
		nd := f.do(t, "POST", path, "text/plain", `Project("prj-1")[id]`, "Accept", "application/x-ndjson")
		if nd.status != 200 || strings.TrimSpace(nd.body) != `{"root":"Project(\"prj-1\")[id]","row":{"id":"prj-1"}}` {
			t.Fatalf("ndjson: %d %q", nd.status, nd.body)
		}
		bad := f.do(t, "POST", path, "text/plain", `Project("prj-1")`, "Accept", "image/png")
		if bad.status != http.StatusNotAcceptable {
			t.Fatalf("406 expected, got %d", bad.status)
		}
	})
	t.Run("runs and artifacts", func(t *testing.T) {
		r := f.do(t, "GET", path+"/runs", "", "")
		var runs struct {
			Runs []struct {
				RunID string `json:"run_id"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(r.body), &runs); err != nil || len(runs.Runs) == 0 {
			t.Fatalf("runs: %d %s", r.status, r.body)
		}
		a := f.do(t, "GET", path+"/artifacts/"+runs.Runs[0].RunID, "", "")
		if a.status != 200 || !strings.Contains(a.body, `"results"`) {
			t.Fatalf("artifact: %d %s", a.status, a.body)
		}
	})
}

func TestHTTPGraphQL(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "kanban", "Issue", "Team")
	got := rows(t, f.runJSON(t, path, `Issue{team_id="team-1", state="doing"}[id,state,team_id]`)[0])
	if len(got) == 0 {
		t.Fatal("graphql query returned nothing")
	}
	for _, r := range got {
		if r["state"] != "doing" || r["team_id"] != "team-1" {
			t.Fatalf("row does not match: %v", r)
		}
	}
	// Cursor pagination: the first page offers a handle that continues.
	r := f.do(t, "POST", path, "text/plain", `Issue[id]`, "Accept", "application/json")
	first := r.json(t)["results"].([]any)[0].(map[string]any)
	handle, _ := first["page_handle"].(string)
	if handle == "" {
		t.Fatalf("no continuation on a 40-card board: %s", r.body)
	}
	second := rows(t, f.runJSON(t, path, "page("+handle+")")[0])
	if len(second) == 0 || second[0]["id"] == rows(t, first)[0]["id"] {
		t.Fatalf("page(%s) did not continue: %v", handle, second)
	}
	team := rows(t, f.runJSON(t, path, `Team("team-2").issues[id,team_id]`)[0])
	for _, r := range team {
		if r["team_id"] != "team-2" {
			t.Fatalf("relation row from another team: %v", r)
		}
	}
}

func problemOf(t testing.TB, r httpResult) map[string]any {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q for status %d: %s", ct, r.status, r.body)
	}
	m := r.json(t)
	if m["type"] == nil || m["detail"] == nil {
		t.Fatalf("problem without type/detail: %s", r.body)
	}
	if strings.Contains(r.body, "goroutine") || strings.Contains(r.body, ".go:") {
		t.Fatalf("stack trace leaked: %s", r.body)
	}
	return m
}

func TestHTTPBadInput(t *testing.T) {
	f := newFixture(t, server.Config{MaxBody: "64K"})
	path := f.open(t, "tracker", "Issue")
	tests := []struct {
		name, method, path, ctype, body string
		status                          int
		check                           func(t *testing.T, p map[string]any)
	}{
		{name: "malformed JSON open", method: "POST", path: "/execute", ctype: "application/json", body: `{"entry_id": "tracker", "entities": [`, status: 400},
		{name: "unknown field in open", method: "POST", path: "/execute", ctype: "application/json", body: `{"entry": "tracker"}`, status: 400},
		{name: "unknown catalog", method: "POST", path: "/execute", ctype: "application/json", body: `{"entry_id": "nope", "entities": ["Issue"]}`, status: 404},
		{name: "unknown session", method: "POST", path: "/execute/0000/11111111-2222-3333-4444-555555555555", ctype: "text/plain", body: `Issue("iss-1")`, status: 404},
		{name: "malformed JSON program", method: "POST", path: path, ctype: "application/json", body: `{"program": `, status: 400},
		{name: "syntax error", method: "POST", path: path, ctype: "text/plain", body: "a = Issue(\"iss-1\")\nIssue{status=}", status: 400,
			check: func(t *testing.T, p map[string]any) {
				if p["line"] != 2.0 || p["column"] == nil || p["code"] != "syntax" {
					t.Fatalf("syntax error position: %v", p)
				}
			}},
		{name: "unknown entity", method: "POST", path: path, ctype: "text/plain", body: `Isue("iss-1")`, status: 400,
			check: func(t *testing.T, p map[string]any) {
				if p["code"] != "unknown_entity" || !strings.Contains(p["hint"].(string), "Issue") {
					t.Fatalf("unknown entity: %v", p)
				}
			}},
		{name: "empty program", method: "POST", path: path, ctype: "text/plain", body: "  ", status: 400},
		{name: "body over the cap", method: "POST", path: path, ctype: "text/plain", body: strings.Repeat("x", 70<<10), status: 413},
		{name: "no such route", method: "GET", path: "/v1/nothing", status: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, tc.method, tc.path, tc.ctype, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			p := problemOf(t, r)
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestMetricsEndpoint(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	f.runJSON(t, path, `Issue("iss-1")[id]`)
	r := f.do(t, "GET", "/metrics", "", "")
	if r.status != 200 {
		t.Fatalf("metrics: %d", r.status)
	}
	for _, want := range []string{
		`plasmd_sandbox_calls_total{export="plasm_plan",result="ok",tenant="anonymous"}`,
		`plasmd_backend_requests_total{entry_id="tracker",status_class="2xx"}`,
		"plasmd_sandbox_instances_live",
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// With auth on, process-wide details (every tenant's metrics, catalog ids,
// refused modules) are served to loopback clients only, and every other
// route needs a valid token.
func TestAuthAndOperatorRoutes(t *testing.T) {
	f := newTenantsFixture(t)
	remote := func(method, path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.RemoteAddr = "203.0.113.7:4242"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		f.app.Handler().ServeHTTP(w, req)
		return w
	}
	if w := remote("GET", "/metrics", tokenA); w.Code != http.StatusForbidden {
		t.Fatalf("remote /metrics: %d", w.Code)
	}
	if w := remote("GET", "/v1/health", ""); w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"status":"ok"}` {
		t.Fatalf("remote health leaks details: %d %s", w.Code, w.Body.String())
	}
	if w := remote("GET", "/v1/registry", ""); w.Code != http.StatusUnauthorized {
		t.Fatalf("registry without a token: %d", w.Code)
	}
	if w := remote("GET", "/v1/registry", "not-a-token"); w.Code != http.StatusUnauthorized {
		t.Fatalf("registry with a bad token: %d", w.Code)
	}
	w := remote("GET", "/v1/registry", tokenA)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"tenant":"a"`) {
		t.Fatalf("registry with tenant a's token: %d %s", w.Code, w.Body.String())
	}
	// The tenant sees its effective limits, never its secrets.
	var reg struct {
		Limits map[string]any `json:"limits"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &reg); err != nil || reg.Limits["memory_bytes"] == nil || reg.Limits["call_timeout_ms"] == nil || reg.Limits["max_queue"] == nil {
		t.Fatalf("registry limits: %v %s", err, w.Body.String())
	}
	if strings.Contains(w.Body.String(), "demo-tracker-token") || strings.Contains(strings.ToLower(w.Body.String()), "secret") {
		t.Fatalf("registry shows secrets: %s", w.Body.String())
	}
	if r := f.do(t, "GET", "/metrics", "", ""); r.status != 200 {
		t.Fatalf("loopback /metrics: %d", r.status)
	}
	// Behind a reverse proxy on the same host every request is from
	// loopback; a forwarded one is still a tenant's.
	if r := f.do(t, "GET", "/metrics", "", "", "X-Forwarded-For", "198.51.100.9"); r.status != http.StatusForbidden {
		t.Fatalf("forwarded /metrics: %d", r.status)
	}
}

// With auth off the server answers only requests addressed to loopback: a
// browser page rebinding its own name to 127.0.0.1 cannot drive it.
func TestAuthOffRefusesForeignHostAndOrigin(t *testing.T) {
	f := newFixture(t, server.Config{})
	for _, tc := range []struct {
		host, origin string
		status       int
	}{
		{"127.0.0.1:8787", "", 200},
		{"localhost:8787", "http://localhost:3000", 200},
		{"[::1]:8787", "", 200},
		{"evil.example:8787", "", 403},
		{"127.0.0.1:8787", "https://evil.example", 403},
		{"127.0.0.1.evil.example", "", 403},
	} {
		req := httptest.NewRequest("GET", "/v1/registry", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		w := httptest.NewRecorder()
		f.app.Handler().ServeHTTP(w, req)
		if w.Code != tc.status {
			t.Errorf("Host %s Origin %q: %d, want %d", tc.host, tc.origin, w.Code, tc.status)
		}
	}
}
