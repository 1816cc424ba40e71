package bench

import (
	"context"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/plasmd/plasmd/bench/internal/gowork"
)

// goworkSizes are each workload's size: a few to a few hundred µs natively.
var goworkSizes = []int{20000, 20, 200, 5000}

// goworkWasm is testdata/gowork, built in TestMain.
var goworkWasm []byte

var goworkFns = struct {
	sync.Once
	run map[bool]api.Function // by wazero's loop checks on
	err error
}{}

// goworkRun returns the guest's gowork_run on a runtime with wazero's
// optimizing compiler and its loop checks on or off (the engine runs
// metered, between the two; see docs/decisions.md). The runtimes live for
// the test binary.
func goworkRun(tb testing.TB, checks bool) api.Function {
	tb.Helper()
	goworkFns.Do(func() {
		ctx := context.Background()
		goworkFns.run = map[bool]api.Function{}
		for _, c := range []bool{false, true} {
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(c))
			if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
				goworkFns.err = err
				return
			}
			mod, err := rt.InstantiateWithConfig(ctx, goworkWasm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
			if err != nil {
				goworkFns.err = err
				return
			}
			goworkFns.run[c] = mod.ExportedFunction("gowork_run")
		}
	})
	if goworkFns.err != nil {
		tb.Fatal(goworkFns.err)
	}
	return goworkFns.run[checks]
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
		for _, checks := range []bool{false, true} {
			if got := callGowork(t, goworkRun(t, checks), kind, goworkSizes[kind]); got != want {
				t.Errorf("%s (loop checks %v): wasm %d, native %d", name, checks, got, want)
			}
		}
	}
}

// BenchmarkGoWasm runs ordinary Go workloads natively and as wasip1 under
// wazero (loop checks off: what the code costs compiled to Wasm; on: plus
// wazero's exit at every loop header). Their ratios are the yardstick for
// the engine's own: see docs/decisions.md "What Go compiled to Wasm costs".
func BenchmarkGoWasm(b *testing.B) {
	for kind, name := range gowork.Kinds {
		n := goworkSizes[kind]
		b.Run(name+"/native", func(b *testing.B) {
			for b.Loop() {
				gowork.Run(kind, n)
			}
		})
		for _, v := range []struct {
			name   string
			checks bool
		}{{"wasm", false}, {"wasm-checked", true}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				fn := goworkRun(b, v.checks)
				for b.Loop() {
					callGowork(b, fn, kind, n)
				}
			})
		}
	}
}
