package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// exportCounter counts guest calls by export.
type exportCounter struct {
	NopObserver
	mu sync.Mutex
	n  map[string]int
}

func (c *exportCounter) CallDone(_, export, _ string, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[export]++
}

func (c *exportCounter) count(export string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[export]
}

// TestCompileUsesTemplate checks, through the committed engine module,
// that a templated capability is asked for its template once and then
// compiled without entering the guest, that the result is the guest
// compiler's own request, and that calls the template cannot express (a
// non-scalar id, a GraphQL query) still compile in the guest.
func TestCompileUsesTemplate(t *testing.T) {
	ctx := context.Background()
	obs := &exportCounter{n: map[string]int{}}
	eng := demoEngine(t, obs, "tpl", DefaultLimits())

	get := func(id any) *abi.CompileRequest {
		return &abi.CompileRequest{EntryID: "tracker", Capability: "issue_get", Vars: map[string]any{"id": id}}
	}
	for i, id := range []any{"iss-1", "a/b", json.Number("7"), "iss-1"} {
		got, err := eng.Compile(ctx, get(id))
		if err != nil {
			t.Fatal(err)
		}
		var want abi.CompiledRequest
		if err := eng.jsonCall(ctx, abi.ExportCompile, []string{"tracker"}, get(id), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("call %d: template %+v, guest %+v", i, got, &want)
		}
	}
	if n := obs.count(abi.ExportTemplate); n != 1 {
		t.Errorf("%d template calls for one capability, want 1", n)
	}
	if n := obs.count(abi.ExportCompile); n != 4 { // only the comparisons above
		t.Errorf("%d guest compiles, want the 4 comparison calls only", n)
	}

	// A list id is not a template value: the guest compiles and refuses.
	if _, err := eng.Compile(ctx, get([]any{"x"})); err == nil {
		t.Error("a list id compiled")
	}
	if _, err := eng.Compile(ctx, &abi.CompileRequest{EntryID: "kanban", Capability: "issue_query"}); err != nil {
		t.Fatal(err)
	}
	if n := obs.count(abi.ExportCompile); n != 6 {
		t.Errorf("%d guest compiles, want 6 (the refused list id and the GraphQL query)", n)
	}
	// A query-paged list continues natively too.
	q := &abi.CompileRequest{EntryID: "tracker", Capability: "issue_query", Vars: map[string]any{"status": "open"},
		Page: map[string]any{"offset": json.Number("20"), "limit": json.Number("20")}}
	got, err := eng.Compile(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var want abi.CompiledRequest
	if err := eng.jsonCall(ctx, abi.ExportCompile, []string{"tracker"}, q, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("continuation: template %+v, guest %+v", got, &want)
	}
	if n := obs.count(abi.ExportCompile); n != 7 {
		t.Errorf("%d guest compiles, want 7 (the comparison call added)", n)
	}
}

// BenchmarkCompileGet compiles a tracker get and a continuation page of the
// tracker's paged issue query both ways in one run: filled natively from
// the capability's template (what Engine.Compile does) and compiled in the
// guest (plasm_compile, what it did before templates).
func BenchmarkCompileGet(b *testing.B) {
	ctx := context.Background()
	eng := demoEngine(b, nil, "bench-compile", DefaultLimits())
	reqs := map[string]*abi.CompileRequest{
		"get": {EntryID: "tracker", Capability: "issue_get", Vars: map[string]any{"id": "iss-1"}},
		"page": {EntryID: "tracker", Capability: "issue_query", Vars: map[string]any{"status": "open"},
			Page: map[string]any{"offset": json.Number("40"), "limit": json.Number("20")}},
	}
	for _, name := range []string{"get", "page"} {
		req := reqs[name]
		for _, way := range []string{"template", "guest"} {
			call := func() error { _, err := eng.Compile(ctx, req); return err }
			if way == "guest" {
				call = func() error {
					var out abi.CompiledRequest
					return eng.jsonCall(ctx, abi.ExportCompile, []string{req.EntryID}, req, &out)
				}
			}
			b.Run(name+"/"+way, func(b *testing.B) {
				if err := call(); err != nil { // warm: instance, catalog, template
					b.Fatal(err)
				}
				b.ReportAllocs()
				c0 := processCPU()
				for b.Loop() {
					if err := call(); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, c0, 0)
			})
		}
	}
}

// A tenant's input limit holds on the template path too: a call the guest
// would refuse as too large (ErrInputTooLarge) is refused the same way
// when the capability has a template, while a small call still fills it.
func TestTemplateKeepsInputLimit(t *testing.T) {
	ctx := context.Background()
	lim := DefaultLimits()
	lim.MaxInput = 4096
	eng := demoEngine(t, nil, "tpl-limit", lim)
	get := func(id string) *abi.CompileRequest {
		return &abi.CompileRequest{EntryID: "tracker", Capability: "issue_get", Vars: map[string]any{"id": id}}
	}
	if _, err := eng.Compile(ctx, get("iss-1")); err != nil {
		t.Fatalf("small call: %v", err)
	}
	if eng.template(ctx, "tracker", "issue_get") == nil {
		t.Skip("the committed engine makes no template for issue_get")
	}
	got, err := eng.Compile(ctx, get(strings.Repeat("a", 20000)))
	if !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("20,000-byte id under a 4,096-byte input limit: %v, %v; want ErrInputTooLarge", got, err)
	}
}

// demoEngine starts a host with obs (nil: none), the committed engine and
// the demo catalogs (at an origin nothing listens on), and returns an
// Engine for tenant name under lim; everything is closed when tb ends.
func demoEngine(tb testing.TB, obs Observer, name string, lim Limits) *Engine {
	tb.Helper()
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir, Observer: obs})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(ctx) })
	m, err := h.Module(ctx, enginewasm.Wasm)
	if err != nil {
		tb.Fatal(err)
	}
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		tb.Fatal(err)
	}
	eng := NewEngine(h.Tenant(name, TenantSpec{Module: m, Loads: CatalogLoads(cats), Limits: lim}))
	tb.Cleanup(eng.Close)
	return eng
}
