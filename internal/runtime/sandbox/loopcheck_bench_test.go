package sandbox

import (
	"context"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// loopProgram is the 3-line program of server's plan benchmarks, in wire
// names (no session symbols here).
const loopProgram = `a = Issue{status="open"}.limit(5)
b = a.comments[id,body]
b, a[id,title]`

// BenchmarkLoopChecks is the experiment behind the metering decision in
// docs/decisions.md: the engine's plan, compile and decode calls on a host
// with wazero's termination checks (WithCloseOnContextDone, an exit to Go
// at every loop header), on the default host (the engine metered,
// meter.go) and on one built with neither, in the same run. The last host
// exists only here: without checks or meter a deadline cannot stop a
// guest.
func BenchmarkLoopChecks(b *testing.B) {
	ctx := context.Background()
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		b.Fatal(err)
	}
	cats = append(cats, pageCatalog(b))
	big := pageBody(pageRows, pageRowBytes)
	small := pageBody(20, 375) // about the 7.5 KB, 20-row page issue 15 measured
	planReq := &abi.PlanRequest{Program: loopProgram, Entries: []string{"tracker"}}
	compileReq := &abi.CompileRequest{EntryID: "tracker", Capability: "issue_query", Vars: map[string]any{"status": "open"}}

	hosts := []struct {
		name string
		cfg  Config
	}{
		{"checks=on", Config{noMeter: true}},
		{"metered", Config{}},
		{"checks=off", Config{noLoopChecks: true}},
	}
	for _, hc := range hosts {
		name := hc.name
		cfg := hc.cfg
		cfg.CacheDir = testCacheDir
		h, err := New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		m, err := h.Module(ctx, enginewasm.Wasm)
		if err != nil {
			b.Fatal(err)
		}
		if m.Metered != (name == "metered") {
			b.Fatalf("%s: Metered = %v", name, m.Metered)
		}
		eng := NewEngine(h.Tenant("loop", TenantSpec{Module: m, Loads: CatalogLoads(cats), Limits: patientPageLimits()}))
		if _, err := eng.Plan(ctx, planReq); err != nil { // warm
			b.Fatal(err)
		}
		calls := []struct {
			name  string
			bytes int
			call  func() error
		}{
			{"plan", 0, func() error { _, err := eng.Plan(ctx, planReq); return err }},
			{"compile", 0, func() error { _, err := eng.Compile(ctx, compileReq); return err }},
			{"decode-20rows", len(small), func() error { return decodeRows(ctx, eng, small, 20) }},
			{"decode-1MB", len(big), func() error { return decodeRows(ctx, eng, big, pageRows) }},
		}
		for _, c := range calls {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(c.bytes))
				b.ReportAllocs()
				c0 := processCPU()
				for b.Loop() {
					if err := c.call(); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, c0, c.bytes)
			})
		}
		eng.Close()
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func decodeRows(ctx context.Context, eng *Engine, body []byte, want int) error {
	// In the guest: this benchmark measures the loop check on guest code.
	out, err := eng.DecodeInGuest(ctx, pageReq, body)
	if err != nil {
		return err
	}
	if len(out.Table.Rows) != want {
		return &abi.Error{Code: abi.CodeInternal, Message: "wrong row count"}
	}
	return nil
}
