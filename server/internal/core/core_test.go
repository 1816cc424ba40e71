package core_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// coreFixture is a Service over the demo catalogs and backend, with a
// counter of guest calls.
type coreFixture struct {
	svc     *core.Service
	store   *session.Memory
	calls   *countingObserver
	tenant  *tenant.Tenant
	catalog int
}

func newCoreFixture(tb testing.TB) *coreFixture {
	tb.Helper()
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { backend.Close() })
	cats, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		tb.Fatal(err)
	}
	// Compiling the engine under -race takes minutes; share the cache the
	// server tests use.
	cache := sandboxtest.CacheDir()
	calls := &countingObserver{}
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: cache, Observer: calls})
	if err != nil {
		tb.Fatal(err)
	}
	engine, err := host.Module(ctx, enginewasm.Wasm)
	if err != nil {
		tb.Fatal(err)
	}
	eg := egress.New(egress.Limits{})
	tb.Cleanup(eg.Close)
	store := session.NewMemory(0)
	svc, err := core.New(ctx, core.Options{
		Catalogs: cats,
		Host:     host,
		Engine:   engine,
		Sender:   eg,
		Exec:     executor.New(eg, executor.Limits{}),
		Store:    store,
		// A deadline no loaded machine reaches: this test is about the
		// flow, not about time.
		Limits: func() sandbox.Limits { l := sandbox.DefaultLimits(); l.CallTimeout = time.Minute; return l }(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close(ctx) })

	return &coreFixture{svc: svc, store: store, calls: calls, catalog: len(cats),
		tenant: &tenant.Tenant{ID: tenant.Anonymous, Secrets: tenant.Bind(backend.Backend().Secrets(), demo.SecretCatalogs())}}
}

// The core runs a whole agent flow with no transport at all: open a
// logical session, read its teaching, run a program against the demo
// backend, read the stored run back.
func TestCoreWithoutTransport(t *testing.T) {
	ctx := context.Background()
	f := newCoreFixture(t)
	svc, store, calls, ten := f.svc, f.store, f.calls, f.tenant
	// The ledger declares a vendor module this test does not supply: the
	// core refuses that catalog alone and serves the rest.
	if got := svc.Health(); got.Catalogs != f.catalog-1 || len(got.Refused) != 1 || got.Refused[0].EntryID != "ledger" || got.Store != "memory" || got.Engine == "" {
		t.Fatalf("health: %+v", got)
	}
	res, err := svc.Context(ctx, ten, "test-transport", "list open tracker issues", []core.Seed{{Entry: "tracker", Entity: "Issue"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ref != "s0" || !strings.Contains(res.Text, "e1") {
		t.Fatalf("context: ref %q text %q", res.Ref, res.Text)
	}
	out, err := svc.Run(ctx, ten, core.RunScope{Execute: &res.Execute, LogicalID: res.LogicalID, Ref: res.Ref}, `Issue("iss-1")`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Roots) != 1 || len(out.Roots[0].Table.Rows) != 1 {
		t.Fatalf("run roots: %+v", out.Roots)
	}
	// The same program on the same symbol revision is not planned again;
	// another program is.
	plans := calls.count(abi.ExportPlan)
	if _, err := svc.Run(ctx, ten, core.RunScope{Execute: &res.Execute, LogicalID: res.LogicalID, Ref: res.Ref}, `Issue("iss-1")`); err != nil {
		t.Fatal(err)
	}
	if got := calls.count(abi.ExportPlan); got != plans {
		t.Fatalf("repeated program planned again: %d plan calls, want %d", got, plans)
	}
	if _, err := svc.Run(ctx, ten, core.RunScope{Execute: &res.Execute, LogicalID: res.LogicalID, Ref: res.Ref}, `Issue("iss-2")`); err != nil {
		t.Fatal(err)
	}
	if got := calls.count(abi.ExportPlan); got != plans+1 {
		t.Fatalf("new program: %d plan calls, want %d", got, plans+1)
	}
	got, err := store.GetRun(ctx, ten.ID, res.Execute.PromptHash, res.Execute.ID, out.Run.RunID)
	if err != nil || got.RunID != out.Run.RunID {
		t.Fatalf("stored run: %v %+v", err, got)
	}
	if _, _, err := svc.Catalog(&tenant.Tenant{ID: "other", Catalogs: []string{"kanban"}}, "tracker"); err == nil {
		t.Fatal("a catalog the tenant may not see was described")
	}
}

// countingObserver counts finished guest calls by export.
type countingObserver struct {
	sandbox.NopObserver
	mu sync.Mutex
	n  map[string]int
}

func (o *countingObserver) CallDone(_, export, _ string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[export]++
}

func (o *countingObserver) count(export string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[export]
}

// BenchmarkPlanCached is a repeated program on one symbol revision (a map
// lookup and a decode); BenchmarkPlanUncached, in the same run, plans a new
// program in the sandbox every time.
func BenchmarkPlanCached(b *testing.B) { benchmarkPlan(b, false) }

func BenchmarkPlanUncached(b *testing.B) { benchmarkPlan(b, true) }

func benchmarkPlan(b *testing.B, vary bool) {
	ctx := context.Background()
	f := newCoreFixture(b)
	res, err := f.svc.Context(ctx, f.tenant, "bench", "read tracker issues", []core.Seed{{Entry: "tracker", Entity: "Issue"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	// Warm: the tenant's instance exists and holds the catalogs, so the
	// first timed iteration is not an instance start.
	if _, err := f.svc.Plan(ctx, f.tenant, &res.Execute, "Issue{status=\"closed\"}.limit(1)"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		program := "Issue{status=\"open\"}.limit(5)"
		if vary {
			program = fmt.Sprintf("Issue{status=\"open\"}.limit(%d)", i+1)
		}
		if _, err := f.svc.Plan(ctx, f.tenant, &res.Execute, program); err != nil {
			b.Fatal(err)
		}
	}
}
