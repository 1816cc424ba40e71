package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// BenchmarkMeterTick measures how often a metered guest comes back to the
// host (a tick: its fuel ran out), which bounds how late past its deadline
// it stops and how long the Go scheduler waits to preempt it. Spinners
// run each call to a 50 ms deadline; the engine decodes the 1 MB page.
// Reported: wall and process CPU time between ticks (µs/tick,
// cpu-µs/tick) and CPU per fuel unit (cpu-ns/unit, meterRefill units per
// tick). The host runs nothing else meanwhile; on a loaded machine the
// wall figure includes time the thread waited for a core.
func BenchmarkMeterTick(b *testing.B) {
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir, Meter: MeterAll})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	measure := func(b *testing.B, call func() error) {
		t0, c0, s0 := time.Now(), processCPU(), h.Stats().MeterTicks
		for b.Loop() {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		ticks := h.Stats().MeterTicks - s0
		if ticks == 0 {
			b.Fatal("no ticks")
		}
		per := time.Since(t0) / time.Duration(ticks)
		cpu := (processCPU() - c0) / time.Duration(ticks)
		b.ReportMetric(float64(per.Microseconds()), "µs/tick")
		b.ReportMetric(float64(cpu.Microseconds()), "cpu-µs/tick")
		b.ReportMetric(float64(cpu.Nanoseconds())/meterRefill, "cpu-ns/unit")
		b.ReportMetric(float64(ticks)/float64(b.N), "ticks/op")
	}
	for _, name := range []string{"tight-loop", "exp-recursion", "simd-bulk"} {
		m, err := h.Module(ctx, meterGuestWasm(meterHostiles[name], false))
		if err != nil || !m.Metered {
			b.Fatalf("%s: metered %v, %v", name, m != nil && m.Metered, err)
		}
		tn := h.Tenant(name, TenantSpec{Module: m, Limits: Limits{CallTimeout: 50 * time.Millisecond}})
		b.Run(name, func(b *testing.B) {
			measure(b, func() error {
				if _, err := tn.Ping(ctx, []byte("hostile")); !errors.Is(err, ErrDeadline) {
					return err
				}
				return nil
			})
		})
		tn.Close()
	}

	demoCats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		b.Fatal(err)
	}
	cats := CatalogLoads(append(demoCats, pageCatalog(b)))
	m, err := h.Module(ctx, enginewasm.Wasm)
	if err != nil || !m.Metered {
		b.Fatalf("engine: %v", err)
	}
	eng := NewEngine(h.Tenant("engine", TenantSpec{Module: m, Loads: cats, Limits: patientPageLimits()}))
	defer eng.Close()
	big := pageBody(pageRows, pageRowBytes)
	b.Run("engine-decode-1MB", func(b *testing.B) {
		if err := decodeRows(ctx, eng, big, pageRows); err != nil {
			b.Fatal(err)
		}
		measure(b, func() error { return decodeRows(ctx, eng, big, pageRows) })
	})
	planReq := &abi.PlanRequest{Program: loopProgram, Entries: []string{"tracker"}}
	b.Run("engine-plan", func(b *testing.B) {
		if _, err := eng.Plan(ctx, planReq); err != nil {
			b.Fatal(err)
		}
		measure(b, func() error { _, err := eng.Plan(ctx, planReq); return err })
	})
}
