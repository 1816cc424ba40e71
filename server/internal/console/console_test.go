package console

import (
	"bufio"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/session"
)

// fakeBackend serves the demo catalogs and two tenants: "a" may see every
// catalog, "b" only kanban.
type fakeBackend struct {
	cats []*catalog.Catalog
	exec map[string]session.Execute // tenant/ph/id
}

func (f *fakeBackend) allows(tenant, entry string) bool {
	return tenant == "" || tenant == "a" || entry == "kanban"
}

func (f *fakeBackend) Catalogs(tenant string) []*catalog.Catalog {
	var out []*catalog.Catalog
	for _, c := range f.cats {
		if f.allows(tenant, c.EntryID) {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeBackend) Refused() map[string]string {
	return map[string]string{"broken": "vendor module refused: bad digest"}
}

func (f *fakeBackend) Execute(_ context.Context, tenant, ph, id string) (session.Execute, error) {
	if ex, ok := f.exec[tenant+"/"+ph+"/"+id]; ok {
		return ex, nil
	}
	return session.Execute{}, session.ErrNotFound
}

func (f *fakeBackend) Logical(_ context.Context, tenant, id string) (session.Logical, error) {
	if id == "lg-a" && tenant == "a" {
		return session.Logical{ID: id, Tenant: tenant, Intent: "triage open issues"}, nil
	}
	return session.Logical{}, session.ErrNotFound
}

func (f *fakeBackend) Tenants(tenant string) []TenantInfo {
	all := []TenantInfo{
		{ID: "a", Limits: sandbox.DefaultLimits().View(), Pool: sandbox.TenantStats{Live: 1, Idle: 1, Created: 1}, Active: true},
		{ID: "b", Catalogs: []string{"kanban"}, Limits: sandbox.DefaultLimits().View()},
	}
	var out []TenantInfo
	for _, t := range all {
		if tenant == "" || t.ID == tenant {
			out = append(out, t)
		}
	}
	return out
}

func (f *fakeBackend) Authenticate(token string) (string, bool) {
	switch token {
	case "tok-a":
		return "a", true
	case "tok-b":
		return "b", true
	}
	return "", false
}

func testPlan() *plan.Plan {
	return &plan.Plan{
		Nodes: []plan.Node{
			{ID: 0, Op: plan.OpFetch, Effect: plan.EffectRead, EntryID: "tracker", Entity: "Issue", Capability: "issue_query", Input: -1, Many: true},
			{ID: 1, Op: plan.OpHop, Effect: plan.EffectRead, EntryID: "tracker", Entity: "Comment", Input: 0, Many: true,
				Hop: &plan.Hop{Relation: "comments", Target: "Comment", Capability: "comment_query"}},
		},
		Roots: []plan.Root{{Label: "comments", Node: 1}}, Order: []int{0, 1}, Verdict: plan.VerdictOK, Summary: "plan ok · 2n",
	}
}

type fixture struct {
	c   *Console
	jr  *activity.Journal
	srv *httptest.Server
}

// newFixture serves the console with the viewer taken from an X-Test-Viewer
// header ("op" = all-tenant operator, "a"/"b" = tenant, absent = none), the
// way the server attaches one after authenticating.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	cats, err := demo.LoadCatalogs("http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	be := &fakeBackend{cats: cats, exec: map[string]session.Execute{}}
	be.exec["a/ph1/sess-a"] = session.Execute{
		Tenant: "a", PromptHash: "ph1", ID: "sess-a", LogicalID: "lg-a", Entries: []string{"tracker"}, DomainRevision: 2,
		Prompt:  "```tsv\nfirst wave\n```\n",
		Symbols: symbol.Map{Entities: []symbol.Entity{{EntryID: "tracker", Name: "Issue"}}, Methods: []symbol.Method{{EntryID: "tracker", Entity: "Issue", Label: "query", Capability: "issue_query"}}},
	}
	jr := activity.New(activity.Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	jr.AddRun(activity.Run{ID: "run-a1", Tenant: "a", LogicalID: "lg-a", Intent: "triage open issues", PromptHash: "ph1", SessionID: "sess-a", N: 1,
		Program: `Issue{project_id="prj-1"}.comments`, Plan: testPlan(), TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
		Steps:   []executor.Step{{Node: 0, Op: "fetch", Entity: "Issue", Calls: 1, Rows: 3, Duration: 5 * time.Millisecond}, {Node: 1, Op: "hop", Entity: "Comment", Calls: 3, Pages: 5, Rows: 4, Duration: 7 * time.Millisecond}},
		Roots:   []session.RunRoot{{Label: "comments", Table: abi.Table{Columns: []string{"id", "body"}, Rows: [][]any{{"cmt-1", "<b>hi</b>"}, {"cmt-2", nil}}}}},
		Started: start, Duration: 12 * time.Millisecond})
	jr.AddRun(activity.Run{ID: "run-a2", Tenant: "a", LogicalID: "lg-a", Intent: "triage open issues", PromptHash: "ph1", SessionID: "sess-a",
		Program: `Issue{bogus=1}`, Started: start.Add(time.Minute),
		Err: &activity.Problem{Type: "https://plasmd.dev/problems/program-unknown_field", Title: "Bad Request", Status: 400, Detail: "Issue has no field bogus", Hint: "fields of Issue: id, title", Line: 1, Column: 7}})
	jr.AddRun(activity.Run{ID: "run-b1", Tenant: "b", PromptHash: "ph2", SessionID: "sess-b", Program: `Card("c1")`, Started: start.Add(2 * time.Minute)})
	jr.AddFault(activity.Fault{Tenant: "a", Kind: "sandbox", What: "decode", Result: "deadline"})
	jr.AddFault(activity.Fault{Kind: "egress", What: "origin_not_allowed"})
	c, err := New(be, jr)
	if err != nil {
		t.Fatal(err)
	}
	c.Heartbeat = time.Hour
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch v := r.Header.Get("X-Test-Viewer"); v {
		case "":
		case "op":
			r = r.WithContext(WithViewer(r.Context(), Viewer{Operator: true}))
		default:
			r = r.WithContext(WithViewer(r.Context(), Viewer{Tenant: v}))
		}
		c.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{c: c, jr: jr, srv: srv}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) get(t *testing.T, viewer, path string) resp {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	if viewer != "" {
		req.Header.Set("X-Test-Viewer", viewer)
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, string(b)}
}

// checkStrictHTML fails on anything the CSP would block: inline scripts,
// inline event handlers, style attributes or elements, javascript: URLs.
func checkStrictHTML(t *testing.T, page, body string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: not HTML: %v", page, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if n.Data == "style" {
				t.Errorf("%s: <style> element", page)
			}
			if n.Data == "script" && (n.FirstChild != nil || !hasAttr(n, "src")) {
				t.Errorf("%s: inline <script>", page)
			}
			for _, a := range n.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: <%s %s=…> is blocked by the CSP", page, n.Data, a.Key)
				}
				if (a.Key == "href" || a.Key == "src") && strings.HasPrefix(strings.ToLower(a.Val), "javascript:") {
					t.Errorf("%s: javascript: URL", page)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func TestPages(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, viewer, path string
		status             int
		want, notWant      []string
	}{
		{"activity", "a", "/ui/", 200, []string{`id="live"`, "run-a1", "run-a2", "decode: deadline"}, []string{"run-b1", "origin_not_allowed"}},
		{"activity operator", "op", "/ui/", 200, []string{"run-a1", "run-b1", "origin_not_allowed", "operator · all tenants"}, nil},
		{"catalogs", "a", "/ui/catalogs", 200, []string{`href="/ui/catalogs/tracker"`, `href="/ui/catalogs/kanban"`}, []string{"broken"}},
		{"catalogs tenant b", "b", "/ui/catalogs", 200, []string{`href="/ui/catalogs/kanban"`}, []string{`/ui/catalogs/tracker"`}},
		{"catalogs filter", "a", "/ui/catalogs?q=board", 200, []string{"/ui/catalogs/kanban"}, []string{`/ui/catalogs/tracker"`}},
		{"catalogs refused operator", "op", "/ui/catalogs", 200, []string{"broken", "bad digest"}, nil},
		{"catalog", "a", "/ui/catalogs/tracker", 200, []string{"<svg", `id="entity-Issue"`, `id="cap-issue_query"`, "ok  tracker", "Teaching preview"}, nil},
		{"catalog teaching preview", "a", "/ui/catalogs/tracker?seed=Issue&intent=triage", 200, []string{`id="teaching"`, "tracker:Issue", "plasm_expr"}, nil},
		{"catalog bad seed", "a", "/ui/catalogs/tracker?seed=Nope", 200, []string{`class="error"`}, []string{`id="teaching"`}},
		{"catalog capability filter", "a", "/ui/catalogs/tracker?q=comment", 200, []string{`id="cap-comment_query"`}, []string{`id="cap-issue_get"`}},
		{"catalog of another tenant", "b", "/ui/catalogs/tracker", 404, []string{"Not found"}, nil},
		{"sessions", "a", "/ui/sessions", 200, []string{"triage open issues", `/ui/sessions/ph1/sess-a`}, []string{"sess-b"}},
		{"session", "a", "/ui/sessions/ph1/sess-a", 200, []string{"triage open issues", "lg-a", "<code>e1</code>", "#cap-issue_query", "run-a1", "run-a2", "live", `id="session-teaching"`, "first wave"}, nil},
		{"session of another tenant", "b", "/ui/sessions/ph1/sess-a", 404, []string{"Not found"}, []string{"triage"}},
		{"session operator", "op", "/ui/sessions/ph1/sess-a", 200, []string{"triage open issues"}, nil},
		{"runs", "a", "/ui/runs", 200, []string{"run-a1", "run-a2"}, []string{"run-b1"}},
		{"runs failed", "a", "/ui/runs?status=failed", 200, []string{"run-a2"}, []string{"run-a1"}},
		{"runs filter", "a", "/ui/runs?q=comments", 200, []string{"run-a1"}, []string{"run-a2"}},
		{"run", "a", "/ui/runs/run-a1", 200, []string{`id="plan-graph"`, "<svg", `id="step-1"`, "#cap-issue_query", "#cap-comment_query", "/ui/sessions/ph1/sess-a", "4bf92f3577b34da6a3ce929d0e0e4736", "<th>Pages</th>", "<td>3</td><td>5</td><td>4</td>", "&lt;b&gt;hi&lt;/b&gt;", "∅"}, []string{"<b>hi</b>"}},
		{"run error", "a", "/ui/runs/run-a2", 200, []string{`id="problem"`, "1:7: Issue has no field bogus", "hint: fields of Issue"}, nil},
		{"run of another tenant", "b", "/ui/runs/run-a1", 404, []string{"Not found"}, []string{"Issue{"}},
		{"tenants", "a", "/ui/tenants", 200, []string{`id="tenant-a"`, "64 MiB", "decode"}, []string{`id="tenant-b"`, "origin_not_allowed"}},
		{"tenants operator", "op", "/ui/tenants", 200, []string{`id="tenant-a"`, `id="tenant-b"`, "origin_not_allowed"}, nil},
		{"unknown page", "a", "/ui/nope", 404, []string{"Not found"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.get(t, tt.viewer, tt.path)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d\n%s", r.status, tt.status, r.body)
			}
			if r.header.Get("Content-Security-Policy") != CSP {
				t.Errorf("CSP header %q", r.header.Get("Content-Security-Policy"))
			}
			if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("security headers missing: %v", r.header)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(r.body, w) {
					t.Errorf("page shows %q", w)
				}
			}
			checkStrictHTML(t, tt.path, r.body)
		})
	}
}

func TestNoViewerGoesToLogin(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/ui/", "/ui/runs/run-a1", "/ui/tenants"} {
		r := f.get(t, "", p)
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/ui/login?next=") {
			t.Errorf("%s without a viewer: %d %s", p, r.status, r.header.Get("Location"))
		}
	}
	if r := f.get(t, "", "/ui/events"); r.status != http.StatusUnauthorized {
		t.Errorf("events without a viewer: %d", r.status)
	}
	if r := f.get(t, "", "/ui/static/console.css"); r.status != 200 || r.header.Get("Content-Security-Policy") == "" {
		t.Errorf("static asset: %d", r.status)
	}
	if r := f.get(t, "", "/ui/login"); r.status != 200 || !strings.Contains(r.body, `name="token"`) {
		t.Errorf("login page: %d", r.status)
	}
}

func TestLogin(t *testing.T) {
	f := newFixture(t)
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name, token, next string
		status            int
		location          string
	}{
		{"valid", "tok-a", "/ui/runs", http.StatusSeeOther, "/ui/runs"},
		{"open redirect refused", "tok-a", "https://evil.example/", http.StatusSeeOther, "/ui/"},
		{"scheme-relative refused", "tok-a", "//evil.example/ui/", http.StatusSeeOther, "/ui/"},
		{"bad token", "nope", "/ui/", http.StatusUnauthorized, ""},
		{"empty token", "", "/ui/", http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := cl.PostForm(f.srv.URL+"/ui/login", url.Values{"token": {tt.token}, "next": {tt.next}})
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != tt.status || r.Header.Get("Location") != tt.location {
				t.Fatalf("%d %q", r.StatusCode, r.Header.Get("Location"))
			}
			ck := r.Cookies()
			if tt.status != http.StatusSeeOther {
				if len(ck) != 0 {
					t.Fatalf("failed login set a cookie: %v", ck)
				}
				return
			}
			if len(ck) != 1 || ck[0].Name != CookieName || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/ui" {
				t.Fatalf("cookie %+v", ck)
			}
		})
	}
}

func TestSVGEndpointsAreWellFormed(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/ui/catalogs/tracker/graph.svg", "/ui/catalogs/kanban/graph.svg", "/ui/runs/run-a1/plan.svg"} {
		r := f.get(t, "a", p)
		if r.status != 200 || r.header.Get("Content-Type") != "image/svg+xml" {
			t.Fatalf("%s: %d %s", p, r.status, r.header.Get("Content-Type"))
		}
		d := xml.NewDecoder(strings.NewReader(r.body))
		rects, texts := 0, 0
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed XML: %v", p, err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				switch se.Name.Local {
				case "rect":
					rects++
				case "text":
					texts++
				}
			}
		}
		if rects < 2 || texts < 2 {
			t.Fatalf("%s: %d boxes, %d labels", p, rects, texts)
		}
	}
	if r := f.get(t, "b", "/ui/runs/run-a1/plan.svg"); r.status != 404 {
		t.Fatalf("another tenant's plan: %d", r.status)
	}
}

func TestPlanGraphLayersAndFailure(t *testing.T) {
	p := testPlan()
	p.Nodes = append(p.Nodes, plan.Node{ID: 2, Op: plan.OpMutate, Effect: plan.EffectWrite, Capability: "issue_update", Input: 1, ArgRefs: []plan.ArgRef{{Node: 0}}})
	p.Order = append(p.Order, 2)
	svg := string(planGraph(p, 2))
	// n2 depends on n1 (depth 1), so it sits in column 2.
	want := fmt.Sprintf(`<rect x="%.1f"`, float64(margin+2*(boxW+gapX)))
	if !strings.Contains(svg, want) || !strings.Contains(svg, `class="node write failed"`) {
		t.Fatalf("layout or classes wrong:\n%s", svg)
	}
	if n := strings.Count(svg, "marker-end"); n != 3 {
		t.Fatalf("%d edges, want 3 (n0→n1, n1→n2, n0→n2)", n)
	}
}

func TestGraphEscapesText(t *testing.T) {
	svg := string(drawGraph(`<t>`, []graphNode{{ID: "a", Label: `<script>x</script>`, Href: `"><b>`}}, []point{{0, 0}}, nil, 0))
	if strings.Contains(svg, "<script>") || strings.Contains(svg, `"><b>`) {
		t.Fatalf("unescaped: %s", svg)
	}
}

func TestPaging(t *testing.T) {
	f := newFixture(t)
	for i := range 30 {
		f.jr.AddRun(activity.Run{ID: fmt.Sprintf("bulk-%02d", i), Tenant: "a", Program: "Issue", Started: time.Unix(int64(i), 0)})
	}
	r := f.get(t, "a", "/ui/runs?q=Issue")
	if !strings.Contains(r.body, "page 1 of 2") || !strings.Contains(r.body, `href="/ui/runs?page=2&amp;q=Issue"`) {
		t.Fatalf("first page:\n%s", r.body)
	}
	r2 := f.get(t, "a", "/ui/runs?q=Issue&page=2")
	if !strings.Contains(r2.body, "page 2 of 2") || !strings.Contains(r2.body, `rel="prev"`) {
		t.Fatalf("second page:\n%s", r2.body)
	}
	if r3 := f.get(t, "a", "/ui/runs?page=99"); !strings.Contains(r3.body, "page 2 of 2") {
		t.Fatal("an out-of-range page is not clamped")
	}
}

func TestEventsStreamOnlyOwnTenant(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/ui/events", nil)
	req.Header.Set("X-Test-Viewer", "a")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", r.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(r.Body)
	if line, _ := br.ReadString('\n'); !strings.HasPrefix(line, ":") {
		t.Fatalf("first line %q", line)
	}
	// Tenant b's run must not reach a's stream; a's own run must.
	f.jr.AddRun(activity.Run{ID: "live-b", Tenant: "b", Program: "secret of b", Started: time.Now()})
	f.jr.AddRun(activity.Run{ID: "live-a", Tenant: "a", Program: "Issue(\"iss-1\")", PromptHash: "ph1", SessionID: "sess-a", Started: time.Now()})
	var got []string
	for len(got) < 2 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event:") || strings.HasPrefix(line, "data:") {
			got = append(got, strings.TrimSpace(line))
		}
	}
	if got[0] != "event: run" || !strings.Contains(got[1], `"href":"/ui/runs/live-a"`) || strings.Contains(got[1], "secret of b") {
		t.Fatalf("events: %v", got)
	}
}

// stubSource is an event source such as the invalidation bus.
type stubSource struct{ events []activity.Event }

func (s stubSource) Subscribe(ctx context.Context, deliver func(activity.Event)) {
	for _, e := range s.events {
		deliver(e)
	}
	<-ctx.Done()
}

func TestRelayedSourceEvents(t *testing.T) {
	jr := activity.New(activity.Options{})
	chA, stopA := jr.Subscribe("a")
	defer stopA()
	chOp, stopOp := jr.Subscribe("")
	defer stopOp()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jr.Relay(ctx, stubSource{events: []activity.Event{
		{Kind: "invalidation", Tenant: "b", Text: "tracker:Issue changed"},
		{Kind: "invalidation", Tenant: "a", Text: "tracker:Project changed"},
	}})
	deadline := time.After(time.Minute)
	select {
	case e := <-chA:
		if e.Tenant != "a" || toLive(e).Text != "tracker:Project changed" {
			t.Fatalf("tenant a got %+v", e)
		}
	case <-deadline:
		t.Fatal("no event")
	}
	for range 2 {
		select {
		case <-chOp:
		case <-deadline:
			t.Fatal("operator missed an event")
		}
	}
}
