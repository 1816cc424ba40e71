package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/plasmd/plasmd/bench/internal/gowork"
)

// goworkSizes are each workload's size: a few to a few hundred µs natively.
var goworkSizes = []int{20000, 20, 200, 5000}

// goworkWasm is testdata/gowork, built in TestMain.
var goworkWasm []byte

var goworkFns = struct {
	sync.Once
	run map[wasmMode]api.Function
	err error
}{}

func goworkRun(tb testing.TB, mode wasmMode) api.Function {
	tb.Helper()
	goworkFns.Do(func() {
		goworkFns.run = map[wasmMode]api.Function{}
		for _, m := range wasmModes {
			mod, err := instantiateMode(context.Background(), goworkWasm, m.mode, true)
			if err != nil {
				goworkFns.err = fmt.Errorf("gowork %s: %w", m.name, err)
				return
			}
			goworkFns.run[m.mode] = mod.ExportedFunction("gowork_run")
		}
	})
	if goworkFns.err != nil {
		tb.Fatal(goworkFns.err)
	}
	return goworkFns.run[mode]
}

func callGowork(tb testing.TB, fn api.Function, kind, n int) uint64 {
	res, err := fn.Call(context.Background(), uint64(kind), uint64(n))
	if err != nil {
		tb.Fatal(err)
	}
	return res[0]
}

// TestGoWasmSame: the guest computes what the native code computes, so
// BenchmarkGoWasm compares equal work.
func TestGoWasmSame(t *testing.T) {
	for kind, name := range gowork.Kinds {
		want := gowork.Run(kind, goworkSizes[kind])
		for _, m := range wasmModes {
			if got := callGowork(t, goworkRun(t, m.mode), kind, goworkSizes[kind]); got != want {
				t.Errorf("%s (%s): wasm %d, native %d", name, m.name, got, want)
			}
		}
	}
}

// BenchmarkGoWasm runs ordinary Go workloads natively and as wasip1 under
// wazero (no checks: what the code costs compiled to Wasm; checked: plus
// wazero's exit at every loop header; metered: plus plasmd's meter, as
// the server runs guests). Their ratios are the yardstick for
// the engine's own: see docs/decisions.md "What Go compiled to Wasm costs".
func BenchmarkGoWasm(b *testing.B) {
	for kind, name := range gowork.Kinds {
		n := goworkSizes[kind]
		b.Run(name+"/native", func(b *testing.B) {
			cpuLoop(b, func() { gowork.Run(kind, n) })
		})
		for _, v := range wasmModes {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				fn := goworkRun(b, v.mode)
				cpuLoop(b, func() { callGowork(b, fn, kind, n) })
			})
		}
	}
}
