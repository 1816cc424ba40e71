package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// newReplicaPair serves the demo catalogs through one gateProxy from two
// Apps sharing one session store: replica A and replica B.
func newReplicaPair(t *testing.T, store session.Store) (a, b *fixture, gp *gateProxy) {
	t.Helper()
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(backend.URL())
	gp = &gateProxy{next: httputil.NewSingleHostReverseProxy(target), arrived: make(chan string, 256),
		tokens: make(chan struct{}), opened: make(chan struct{})}
	proxy := httptest.NewServer(gp)
	t.Cleanup(func() {
		proxy.Close()
		_ = backend.Close()
	})
	cats, err := demo.LoadCatalogs(proxy.URL + strings.TrimPrefix(backend.URL(), target.Scheme+"://"+target.Host))
	if err != nil {
		t.Fatal(err)
	}
	replica := func() *fixture {
		// Limits the test cannot reach, as in newGatedFixture.
		cfg := server.Config{CacheDir: testCacheDir(), AnonymousSecrets: server.BindSecrets(backend.Backend().Secrets(), demo.SecretCatalogs()),
			OperationWait: 20 * time.Millisecond, Limits: patientLimits(), SessionStore: store,
			Egress: server.EgressLimits{Timeout: 24 * time.Hour}, OperationTimeout: 24 * time.Hour}
		app, err := server.New(ctx, cfg, cats)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(app.Handler())
		t.Cleanup(func() {
			srv.Close()
			app.Close(context.Background())
		})
		return &fixture{app: app, srv: srv, backend: backend}
	}
	return replica(), replica(), gp
}

// Two replicas on one store, the store's clock frozen (nothing expires by
// itself): B's wait on A's operation answers "running" while A's lease
// exists, though the record's deadline (on A's clock) says nothing to B.
// Once the lease is gone (as when A is killed or cut off and stops
// renewing it), B records the operation failed and partial; A's worker,
// released, makes no further backend call and does not overwrite that.
func TestOperationOwnerLease(t *testing.T) {
	m := session.NewMemory(time.Hour)
	frozen := time.Now()
	m.SetClock(func() time.Time { return frozen })
	a, b, gp := newReplicaPair(t, m)
	path := a.open(t, "tracker", "Issue")
	r := a.do(t, "POST", path+"?wait=false", "text/plain", `Issue{status="open"}.limit(3).comments[id]`, "Accept", "application/json")
	if r.status != http.StatusAccepted || !strings.Contains(r.body, `"handle":"s0_o1"`) {
		t.Fatalf("?wait=false on A: %d %s", r.status, r.body)
	}
	gp.await(t) // A's worker's first call is held at the backend

	w := b.do(t, "POST", path, "text/plain", "wait(s0_o1)", "Accept", "application/json")
	if w.status != http.StatusAccepted || !strings.Contains(w.body, `"running"`) {
		t.Fatalf("wait on B with A's lease alive: %d %s", w.status, w.body)
	}

	// HTTP operations are scoped to the execute session: /execute/{hash}/{id}.
	ref := session.OpRef{Tenant: tenant.Anonymous, Scope: path[strings.LastIndexByte(path, '/')+1:], N: 1}
	if _, err := m.GetOpLease(context.Background(), ref); err != nil {
		t.Fatalf("A holds no lease for its operation: %v", err)
	}
	if err := m.DropOpLease(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	w = b.do(t, "POST", path, "text/plain", "wait(s0_o1)", "Accept", "application/json")
	for _, want := range []string{`"failed"`, "the plasmd process running it ended", "lease", "partial run, not a result"} {
		if !strings.Contains(w.body, want) {
			t.Errorf("wait on B once A's lease is gone lacks %s: %d %s", want, w.status, w.body)
		}
	}

	// Let A's held call complete, unless A's renewal already found the
	// lease gone and cancelled it (a renewal comes every 2 s of real time).
	released := make(chan struct{})
	defer close(released)
	go func() {
		select {
		case gp.tokens <- struct{}{}:
		case <-released:
		}
	}()
	// A further call would be held at the gate for ever (until A's next
	// renewal finds the lease gone); the bound only turns that regression
	// into a failure that says so.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if n := a.app.DrainOperations(ctx); n != 0 {
		t.Fatalf("%d operations still run on A", n)
	}
	if n := len(gp.arrived); n != 0 {
		t.Fatalf("A made %d backend calls after its operation was recorded failed", n)
	}
	st := b.do(t, "GET", path+"/operations/s0_o1", "", "").json(t)
	if progress, _ := st["progress"].(string); st["state"] != "failed" || !strings.Contains(progress, "lease") {
		t.Fatalf("A overwrote the recorded end: %v", st)
	}
}
