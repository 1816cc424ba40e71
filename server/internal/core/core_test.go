package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// The core runs a whole agent flow with no transport at all: open a
// logical session, read its teaching, run a program against the demo
// backend, read the stored run back.
func TestCoreWithoutTransport(t *testing.T) {
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	cats, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	// Compiling the engine under -race takes minutes; share the cache the
	// server tests use.
	cache := os.Getenv("PLASMD_WASM_TEST_CACHE")
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "plasmd-wasm-test-cache-"+strings.ReplaceAll(os.Getenv("USER"), "/", "_"))
	}
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := host.Module(ctx, enginewasm.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	eg := egress.New(egress.Limits{})
	defer eg.Close()
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
		t.Fatal(err)
	}
	defer svc.Close(ctx)

	ten := &tenant.Tenant{ID: tenant.Anonymous, Secrets: backend.Backend().Secrets()}
	// The ledger declares a vendor module this test does not supply: the
	// core refuses that catalog alone and serves the rest.
	if got := svc.Health(); got.Catalogs != len(cats)-1 || len(got.Refused) != 1 || got.Refused[0].EntryID != "ledger" || got.Store != "memory" || got.Engine == "" {
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
	got, err := store.GetRun(ctx, ten.ID, res.Execute.PromptHash, res.Execute.ID, out.Run.RunID)
	if err != nil || got.RunID != out.Run.RunID {
		t.Fatalf("stored run: %v %+v", err, got)
	}
	if _, _, err := svc.Catalog(&tenant.Tenant{ID: "other", Catalogs: []string{"kanban"}}, "tracker"); err == nil {
		t.Fatal("a catalog the tenant may not see was described")
	}
}
