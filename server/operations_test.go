package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
)

// gateProxy sits between plasmd and the demo backend and holds every
// request until the test lets it through, so the tests decide when an
// operation's backend calls finish: nothing depends on machine speed.
type gateProxy struct {
	next    http.Handler
	arrived chan string   // one entry per request that reached the gate
	tokens  chan struct{} // each lets one held request through
	opened  chan struct{} // closed: everything passes
}

func (p *gateProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-p.opened:
	default:
		p.arrived <- r.Method + " " + r.URL.Path
		select {
		case <-p.tokens:
		case <-p.opened:
		case <-r.Context().Done():
			return
		}
	}
	p.next.ServeHTTP(w, r)
}

// await waits for the next request to reach the gate. The bound is far
// past any machine's pace; it turns a request that never comes (a
// regression) into a failure that says so rather than a hang until the
// test binary's timeout.
func (p *gateProxy) await(t testing.TB) string {
	t.Helper()
	select {
	case r := <-p.arrived:
		return r
	case <-time.After(5 * time.Minute):
		t.Fatal("no request reached the backend")
		return ""
	}
}

// newGatedFixture serves the demo catalogs through a gateProxy.
func newGatedFixture(t *testing.T) (*fixture, *gateProxy) {
	t.Helper()
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(backend.URL())
	gp := &gateProxy{next: httputil.NewSingleHostReverseProxy(target), arrived: make(chan string, 256),
		tokens: make(chan struct{}), opened: make(chan struct{})}
	proxy := httptest.NewServer(gp)
	cats, err := demo.LoadCatalogs(proxy.URL + strings.TrimPrefix(backend.URL(), target.Scheme+"://"+target.Host))
	if err != nil {
		t.Fatal(err)
	}
	// patientLimits, as in every other fixture: on the default limits (2 s
	// per engine call, 5 s waiting for an instance or CPU slot) a slow
	// enough machine fails a plan ("catalog logic exceeded its time
	// limit") or the for-each operation, whose writes queue for the
	// tenant's 4 instances ("sandboxes are all busy").
	//
	// The gate holds backend calls for as long as the test takes to let
	// them through, which on a loaded machine under -race can be minutes
	// (the test has run for 313 s): on the default 30 s egress timeout a
	// held call failed, failing its operation ("! done" never came) or
	// freeing a slot early (the 17th operation was accepted). The call
	// and operation time limits are set past anything the test reaches.
	cfg := server.Config{CacheDir: testCacheDir(), AnonymousSecrets: server.BindSecrets(backend.Backend().Secrets(), demo.SecretCatalogs()),
		OperationWait: 20 * time.Millisecond, Limits: patientLimits(),
		Egress: server.EgressLimits{Timeout: 24 * time.Hour}, OperationTimeout: 24 * time.Hour}
	useTestStore(t, &cfg) // PLASMD_TEST_STORE=redis runs operations on Redis too
	app, err := server.New(ctx, cfg, cats)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		app.Close(context.Background()) // cancels held operations
		proxy.Close()
		_ = backend.Close()
	})
	return &fixture{app: app, srv: srv, backend: backend}, gp
}

func runArgs(program string, extra ...any) map[string]any {
	args := map[string]any{"logical_session_ref": "s0", "program": program}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return args
}

// waitFinal calls wait(handle) until the operation reports a final line.
// Each wait holds until the worker finishes or 20ms pass. There is no
// wall-clock bound: a for-each operation under -race on a loaded machine
// outlasted the two minutes this once allowed; an operation that never
// ends is caught by the test binary's -timeout.
func waitFinal(t *testing.T, cs *mcp.ClientSession, handle string) toolOut {
	t.Helper()
	for {
		o := mustOK(t, call(t, cs, "plasm_run", runArgs("wait("+handle+")")))
		state, _ := o.meta["operation"].(map[string]any)["state"].(string)
		if state == "done" || state == "cancelled" || state == "failed" {
			return o
		}
	}
}

// TestOperationsMCPRedis runs TestOperationsMCP on the Redis store, where
// the operation's cancel state is read over the network: a sibling call
// whose context had already ended read it with an error, took that as
// "not cancelled", and was counted as a call made after the cancel.
func TestOperationsMCPRedis(t *testing.T) {
	t.Setenv("PLASMD_TEST_STORE", "redis")
	TestOperationsMCP(t)
}

func TestOperationsMCP(t *testing.T) {
	f, gp := newGatedFixture(t)
	cs := f.mcpClient(t)
	contextCall(t, cs, "watch issues", "tracker:Issue")

	// wait: false answers at once, before any backend call finished.
	started := mustOK(t, call(t, cs, "plasm_run", runArgs(`Issue("iss-1")[id,title]`, "wait", false)))
	op, _ := started.meta["operation"].(map[string]any)
	if op["handle"] != "s0_o1" || !strings.Contains(started.text, "`s0_o1` accepted") || !strings.Contains(started.text, "wait(s0_o1)") {
		t.Fatalf("wait:false: %s %v", started.text, started.meta)
	}
	if so, _ := started.structured["operation"].(map[string]any); so["handle"] != "s0_o1" {
		t.Fatalf("structuredContent.operation: %v", started.structured)
	}
	gp.await(t) // the worker's call is now held at the backend
	running := mustOK(t, call(t, cs, "plasm_run", runArgs("wait(s0_o1)")))
	if !strings.Contains(running.text, "+ accepted: Issue(") || !strings.Contains(running.text, "~ running: 0 calls so far") {
		t.Fatalf("progress while held: %s", running.text)
	}
	gp.tokens <- struct{}{}
	done := waitFinal(t, cs, "s0_o1")
	if !strings.Contains(done.text, "! done: 1 calls") || !strings.Contains(done.text, "iss-1") || done.meta["run_uri"] == nil {
		t.Fatalf("finished operation: %s", done.text)
	}

	// cancel stops before the next call; the call in flight completes.
	mustOK(t, call(t, cs, "plasm_run", runArgs(`Issue{status="open"}.limit(3).comments[id]`, "wait", false)))
	gp.await(t)
	c := mustOK(t, call(t, cs, "plasm_run", runArgs("cancel(s0_o2)")))
	if !strings.Contains(c.text, "cancel requested") {
		t.Fatalf("cancel: %s", c.text)
	}
	gp.tokens <- struct{}{}
	cancelled := waitFinal(t, cs, "s0_o2")
	if !strings.Contains(cancelled.text, "x cancelled after 1 calls") {
		t.Fatalf("cancelled operation: %s", cancelled.text)
	}
	if n := len(gp.arrived); n != 0 {
		t.Fatalf("%d backend calls after the cancel", n)
	}

	// Bad handles.
	for _, p := range []string{"wait(s0_o99)", "cancel(s9_o1)", "wait(s0_pg1)"} {
		if o := call(t, cs, "plasm_run", runArgs(p)); !o.isError {
			t.Fatalf("%s accepted: %s", p, o.text)
		}
	}

	// At most 16 unfinished operations per session.
	for i := range 16 {
		if o := call(t, cs, "plasm_run", runArgs(`Issue("iss-2")[id]`, "wait", false)); o.isError {
			t.Fatalf("operation %d: %s", i+1, o.text)
		}
	}
	over := call(t, cs, "plasm_run", runArgs(`Issue("iss-2")[id]`, "wait", false))
	if !over.isError || !strings.Contains(over.text, "16 unfinished operations") {
		t.Fatalf("17th operation: %s", over.text)
	}
	if typ, _ := over.structured["error"].(map[string]any)["type"].(string); !strings.HasSuffix(typ, "/problems/too-many-operations") {
		t.Errorf("17th operation: problem type %q, want …/problems/too-many-operations (hyphens, like every other type)", typ)
	}
	close(gp.opened)
	waitFinal(t, cs, "s0_o18")
	mustOK(t, call(t, cs, "plasm_run", runArgs(`Issue("iss-2")[id]`, "wait", false)))

	// A mutation once per row of an unbounded list becomes an operation
	// unasked.
	auto := mustOK(t, call(t, cs, "plasm_run", runArgs("open = Issue{status=\"open\"}\nopen.close()", "force", true)))
	h, _ := auto.meta["operation"].(map[string]any)["handle"].(string)
	if h == "" {
		t.Fatalf("for-each mutation over an unbounded list ran inline: %s", auto.text)
	}
	if o := waitFinal(t, cs, h); !strings.Contains(o.text, "! done") {
		t.Fatalf("for-each operation: %s", o.text)
	}

	// Operations are in /metrics.
	resp, err := http.Get(f.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"plasmd_operations_running ", `plasmd_operations_total{state="done"}`, `plasmd_operations_total{state="cancelled"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestOperationsHTTP(t *testing.T) {
	f, gp := newGatedFixture(t)
	path := f.open(t, "tracker", "Issue")
	r := f.do(t, "POST", path+"?wait=false", "text/plain", `Issue("iss-1")[id]`, "Accept", "application/json")
	if r.status != http.StatusAccepted || !strings.Contains(r.body, `"handle":"s0_o1"`) {
		t.Fatalf("?wait=false: %d %s", r.status, r.body)
	}
	gp.await(t)
	st := f.do(t, "GET", path+"/operations/s0_o1", "", "").json(t)
	if st["state"] != "running" && st["state"] != "accepted" {
		t.Fatalf("operation status: %v", st)
	}
	close(gp.opened)
	for { // no wall-clock bound: see waitFinal
		w := f.do(t, "POST", path, "text/plain", "wait(s0_o1)", "Accept", "application/json")
		if w.status == http.StatusOK {
			if !strings.Contains(w.body, `"iss-1"`) {
				t.Fatalf("wait result: %s", w.body)
			}
			return
		}
		if w.status != http.StatusAccepted {
			t.Fatalf("wait: %d %s", w.status, w.body)
		}
	}
}
