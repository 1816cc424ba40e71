package server_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/console"
)

// uiGet serves one console request through the app, from loopback unless
// remote is set.
func uiGet(f *fixture, path string, remote bool, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:8787"
	req.RemoteAddr = "127.0.0.1:5555"
	if remote {
		req.RemoteAddr = "203.0.113.7:4242"
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	f.app.Handler().ServeHTTP(w, req)
	return w
}

var runLink = regexp.MustCompile(`href="/ui/runs/([0-9a-f-]{36})"`)

// The console applies the API's auth: a tenant sees only its own runs and
// another tenant's run reads as not found; the all-tenant view is for
// loopback operators; remote clients without a valid token are sent to
// the login page.
func TestConsoleAuth(t *testing.T) {
	f := newTenantsFixture(t)
	asA := []string{"Authorization", "Bearer " + tokenA}
	asB := []string{"Authorization", "Bearer " + tokenB}
	r := f.do(t, "POST", "/execute", "application/json", `{"entry_id":"tracker","entities":["Issue"]}`, asA...)
	pathA := r.header.Get("Location")
	if r.status != http.StatusSeeOther || pathA == "" {
		t.Fatalf("open as a: %d %s", r.status, r.body)
	}
	if r := f.do(t, "POST", pathA, "text/plain", `Issue("iss-1")`, append(asA, "Accept", "application/json")...); r.status != 200 {
		t.Fatalf("run as a: %d %s", r.status, r.body)
	}
	w := uiGet(f, "/ui/runs", true, asA...)
	m := runLink.FindStringSubmatch(w.Body.String())
	if w.Code != 200 || m == nil {
		t.Fatalf("tenant a's runs: %d\n%s", w.Code, w.Body.String())
	}
	runA := "/ui/runs/" + m[1]

	tests := []struct {
		name   string
		path   string
		remote bool
		header []string
		status int
		want   string
	}{
		{"owner sees the run", runA, true, asA, 200, `Issue(&#34;iss-1&#34;)`},
		{"other tenant: not found", runA, true, asB, 404, "Not found"},
		{"other tenant on loopback: still not found", runA, false, asB, 404, "Not found"},
		{"operator on loopback sees every tenant", runA, false, nil, 200, "operator · all tenants"},
		{"remote without token: login", runA, true, nil, http.StatusSeeOther, ""},
		{"remote with a bad token: login", runA, true, []string{"Authorization", "Bearer nope"}, http.StatusSeeOther, ""},
		{"login cookie authenticates", runA, true, []string{"Cookie", console.CookieName + "=" + tokenA}, 200, "tenant a"},
		{"forwarded request is no operator", "/ui/tenants", false, []string{"X-Forwarded-For", "198.51.100.1"}, http.StatusSeeOther, ""},
		{"tenant sees only its tenant row", "/ui/tenants", true, asB, 200, `id="tenant-b"`},
		{"operator sees all tenant rows", "/ui/tenants", false, nil, 200, `id="tenant-a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := uiGet(f, tt.path, tt.remote, tt.header...)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d\n%s", w.Code, tt.status, w.Body.String())
			}
			if w.Header().Get("Content-Security-Policy") != console.CSP {
				t.Errorf("CSP %q", w.Header().Get("Content-Security-Policy"))
			}
			if tt.status == http.StatusSeeOther && !strings.HasPrefix(w.Header().Get("Location"), "/ui/login") {
				t.Errorf("redirect to %q", w.Header().Get("Location"))
			}
			if !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("body lacks %q:\n%s", tt.want, w.Body.String())
			}
		})
	}
	if w := uiGet(f, "/ui/tenants", true, asB...); strings.Contains(w.Body.String(), `id="tenant-a"`) {
		t.Fatal("tenant b sees tenant a on the tenants page")
	}
}

// With auth off the console, like the API, answers loopback Hosts only.
func TestConsoleAuthOffLoopbackOnly(t *testing.T) {
	f := newFixture(t, server.Config{})
	if w := uiGet(f, "/ui/", false); w.Code != 200 || !strings.Contains(w.Body.String(), "operator · all tenants") {
		t.Fatalf("loopback: %d", w.Code)
	}
	req := httptest.NewRequest("GET", "/ui/", nil)
	req.Host = "attacker.example"
	w := httptest.NewRecorder()
	f.app.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusForbidden {
		t.Fatalf("rebinding Host: %d", w.Code)
	}
}

// A failed run is in the console with its error and hint; a run's steps
// link to the capabilities in the catalog page.
func TestConsoleRecordsRuns(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue", "Project")
	f.runJSON(t, path, `Issue{project_id="prj-1"}.limit(2).comments[id]`)
	if r := f.do(t, "POST", path, "text/plain", `Issue{bogus=1}`); r.status != 400 {
		t.Fatalf("bad program: %d", r.status)
	}
	w := uiGet(f, "/ui/runs?status=failed", false)
	m := runLink.FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("no failed run listed:\n%s", w.Body.String())
	}
	body := uiGet(f, "/ui/runs/"+m[1], false).Body.String()
	for _, want := range []string{`id="problem"`, "Issue has no field bogus", "hint: fields of Issue"} {
		if !strings.Contains(body, want) {
			t.Errorf("failed run page lacks %q", want)
		}
	}
	w = uiGet(f, "/ui/runs?status=ok", false)
	m = runLink.FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatal("no successful run listed")
	}
	body = uiGet(f, "/ui/runs/"+m[1], false).Body.String()
	for _, want := range []string{`id="plan-graph"`, `href="/ui/catalogs/tracker#cap-issue_query"`, `id="step-1"`, "cmt-", "/ui/sessions/"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	sess := regexp.MustCompile(`href="(/ui/sessions/[^"]+)"`).FindStringSubmatch(body)
	if sess == nil {
		t.Fatal("no session link")
	}
	sbody := uiGet(f, sess[1], false).Body.String()
	for _, want := range []string{"<code>e1</code>", "live", "tracker"} {
		if !strings.Contains(sbody, want) {
			t.Errorf("session page lacks %q", want)
		}
	}
}

// busSource stands in for the invalidation bus.
type busSource chan activity.Event

func (b busSource) Subscribe(ctx context.Context, deliver func(activity.Event)) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-b:
			deliver(e)
		}
	}
}

// Events relayed from another source (the invalidation bus) stream to the
// console of their tenant only.
func TestConsoleRelaysInvalidations(t *testing.T) {
	f := newTenantsFixture(t)
	bus := make(busSource)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.app.RelayActivity(ctx, bus)
	stream := func(token string) *bufio.Reader {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/ui/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		br := bufio.NewReader(resp.Body)
		if _, err := br.ReadString('\n'); err != nil { // the stream's opening comment
			t.Fatal(err)
		}
		return br
	}
	a, b := stream(tokenA), stream(tokenB)
	bus <- activity.Event{Kind: "invalidation", Tenant: "b", Text: "kanban:Card changed"}
	bus <- activity.Event{Kind: "invalidation", Tenant: "a", Text: "tracker:Issue changed"}
	next := func(br *bufio.Reader) string {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "data:") {
				return line
			}
		}
	}
	if got := next(a); !strings.Contains(got, "tracker:Issue changed") {
		t.Fatalf("tenant a got %s", got)
	}
	if got := next(b); !strings.Contains(got, "kanban:Card changed") {
		t.Fatalf("tenant b got %s", got)
	}
}

// A session shows on the console as soon as it is opened, before any run.
func TestConsoleListsSessionsBeforeRuns(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "kanban", "Team")
	parts := strings.Split(strings.Trim(path, "/"), "/") // execute/{ph}/{s}
	body := uiGet(f, "/ui/sessions", false).Body.String()
	if !strings.Contains(body, parts[len(parts)-1][:8]) && !strings.Contains(body, parts[len(parts)-1]) {
		t.Fatalf("opened session %s not listed:\n%s", path, body)
	}
	if !strings.Contains(body, "no run yet") {
		t.Fatalf("an unrun session should say so:\n%s", body)
	}
}
