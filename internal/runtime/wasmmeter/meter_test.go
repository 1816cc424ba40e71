package wasmmeter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// runtime returns a wazero runtime without termination checks in which
// the tick import exists: it counts its calls and refills refill, or
// panics once limit calls have been made (limit 0: never).
func newRuntime(t testing.TB, refill uint32, limit int64) (wazero.Runtime, *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	t.Cleanup(func() { _ = rt.Close(ctx) })
	var ticks atomic.Int64
	_, err := rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
			if n := ticks.Add(1); limit > 0 && n >= limit {
				panic(errTicked)
			}
			stack[0] = uint64(refill)
		}), nil, []api.ValueType{api.ValueTypeI32}).Export(ImportName).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rt, &ticks
}

var errTicked = errors.New("out of ticks")

// instrumented instruments and verifies m, failing the test otherwise.
func instrumented(t testing.TB, m []byte) []byte {
	t.Helper()
	out, err := Instrument(m)
	if err != nil {
		t.Fatalf("Instrument: %v", err)
	}
	if err := Verify(out); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return out
}

// call instantiates wasm in rt and calls export with params.
func call(t testing.TB, rt wazero.Runtime, wasm []byte, export string, params ...uint64) ([]uint64, error) {
	t.Helper()
	ctx := context.Background()
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return nil, err
	}
	defer mod.Close(ctx)
	return mod.ExportedFunction(export).Call(ctx, params...)
}

// sumModule: sum(n) loops n times adding i; fib(n) recurses without a
// loop; both also reached through a table and a start function that
// writes a global, to exercise every place a function index lives.
func sumModule() *mod {
	start := uint32(4)
	return &mod{
		types:   []fnType{{params: []byte{tI32}, results: []byte{tI32}}, {}, {results: []byte{tI32}}},
		imports: []imp{{mod: "env", name: "id", typ: 0}},
		funcs:   []uint32{0, 0, 0, 1},
		table:   4,
		globals: []global{
			{typ: tI32, mut: true, init: []byte{opI32Const, 0}},
			{typ: tFuncref, init: []byte{opRefFunc, 2}}, // fib
		},
		exports: []export{{"sum", 0, 1}, {"fib", 0, 2}, {"viaTable", 0, 3}, {"started", 3, 0}},
		start:   &start,
		elements: [][]byte{
			cat([]byte{0, opI32Const, 0, opEnd}, vec(1, uleb(1))),                                    // flags 0: sum at 0
			cat([]byte{4, opI32Const, 1, opEnd}, vec(1, []byte{opRefFunc, 2, opEnd})),                // flags 4: fib at 1
			cat([]byte{1, 0}, vec(1, uleb(3))),                                                       // flags 1: passive
			cat([]byte{3, 0}, vec(1, uleb(2))),                                                       // flags 3: declarative
			cat([]byte{6, 0, opI32Const, 2, opEnd, tFuncref}, vec(1, []byte{0xd0, tFuncref, opEnd})), // flags 6: null at 2
		},
		locals: [][]byte{{1, 1, tI32}}, // sum's accumulator
		bodies: [][]byte{
			// sum(n): for n != 0 { acc += id(n); n-- }; return acc
			{0x02, 0x40, 0x03, 0x40,
				0x20, 0, 0x45, 0x0d, 1,
				0x20, 1, 0x20, 0, 0x10, 0, 0x6a, 0x21, 1,
				0x20, 0, 0x41, 1, 0x6b, 0x21, 0,
				0x0c, 0,
				0x0b, 0x0b, 0x20, 1},
			// fib(n) = n < 2 ? n : fib(n-1) + fib(n-2)
			{0x20, 0, 0x41, 2, 0x48, 0x04, tI32, 0x20, 0, 0x05,
				0x20, 0, 0x41, 1, 0x6b, 0x10, 2, 0x20, 0, 0x41, 2, 0x6b, 0x10, 2, 0x6a, 0x0b},
			// viaTable(i): call_indirect type 0 table[i](10)
			{0x41, 10, 0x20, 0, 0x11, 0, 0},
			// start: started = 7 + (ref.is_null(global 1) ? 100 : 0)
			{0x41, 7, 0x23, 1, 0xd1, 0x04, tI32, 0x41, 100, 0x05, 0x41, 0, 0x0b, 0x6a, 0x24, 0},
		},
	}
}

func TestInstrumentKeepsBehaviour(t *testing.T) {
	orig := sumModule().build()
	ctx := context.Background()

	plain := wazero.NewRuntime(ctx)
	defer plain.Close(ctx)
	if err := instantiateEnv(plain); err != nil {
		t.Fatal(err)
	}
	rt, ticks := newRuntime(t, MaxCost, 0)
	if err := instantiateEnv(rt); err != nil {
		t.Fatal(err)
	}
	metered := instrumented(t, orig)

	for _, tc := range []struct {
		export string
		arg    uint64
	}{{"sum", 1000}, {"fib", 20}, {"viaTable", 0}, {"viaTable", 1}} {
		want, err := call(t, plain, orig, tc.export, tc.arg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := call(t, rt, metered, tc.export, tc.arg)
		if err != nil || !equal(got, want) {
			t.Errorf("%s(%d) metered = %v, %v; want %v", tc.export, tc.arg, got, err, want)
		}
	}
	if _, err := call(t, rt, metered, "viaTable", 2); err == nil {
		t.Error("call through a null table entry succeeded")
	}
	if ticks.Load() < 2 {
		t.Errorf("%d ticks: the meter never ran out", ticks.Load())
	}
	// The start function ran in both and wrote the same global.
	mod, err := rt.InstantiateWithConfig(ctx, metered, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	if g := mod.ExportedGlobal("started").Get(); g != 7 {
		t.Errorf("started = %d, want 7", g)
	}
	_ = mod.Close(ctx)
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func instantiateEnv(rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) {}),
			[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("id").
		Instantiate(context.Background())
	return err
}

// A loop with no calls and recursion without loops are both stopped by
// the tick: the meter is the only thing that can stop them here (the
// runtime has no termination checks).
func TestMeterStopsUnboundedCode(t *testing.T) {
	spin := (&mod{
		types:   []fnType{{}},
		funcs:   []uint32{0},
		exports: []export{{"spin", 0, 0}},
		bodies:  [][]byte{{0x03, 0x40, 0x0c, 0, 0x0b}},
	}).build()
	recurse := (&mod{
		types:   []fnType{{}},
		funcs:   []uint32{0},
		exports: []export{{"spin", 0, 0}},
		bodies:  [][]byte{{0x10, 0, 0x10, 0}}, // f() { f(); f() }: exponential, no loop
	}).build()
	for name, m := range map[string][]byte{"loop": spin, "recursion": recurse} {
		t.Run(name, func(t *testing.T) {
			rt, ticks := newRuntime(t, MaxCost, 50)
			_, err := call(t, rt, instrumented(t, m), "spin")
			if err == nil || !errors.Is(err, errTicked) {
				t.Fatalf("err = %v, want the tick's panic", err)
			}
			if ticks.Load() != 50 {
				t.Fatalf("%d ticks", ticks.Load())
			}
		})
	}
}

func TestInstrumentRealModules(t *testing.T) {
	ctx := context.Background()
	mods := map[string][]byte{"engine": enginewasm.Module(), "engine-raw": enginewasm.Wasm}
	if b, err := os.ReadFile("../../../demo/catalogs/ledger/module.wasm"); err == nil {
		mods["ledger"] = b
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for name, m := range mods {
		t.Run(name, func(t *testing.T) {
			out := instrumented(t, m)
			t.Logf("%d bytes → %d bytes (+%d%%)", len(m), len(out), (len(out)-len(m))*100/len(m))
			orig, err := rt.CompileModule(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			cm, err := rt.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("compile instrumented: %v", err)
			}
			// Same exports with the same signatures and names.
			for n, def := range orig.ExportedFunctions() {
				got := cm.ExportedFunctions()[n]
				if got == nil || got.Name() != def.Name() || !bytes.Equal(types(got.ParamTypes()), types(def.ParamTypes())) {
					t.Errorf("export %s: %v, want %v", n, got, def)
				}
			}
			imps := cm.ImportedFunctions()
			if last := imps[len(imps)-1]; last.ResultTypes()[0] != api.ValueTypeI32 {
				t.Errorf("last import %v", last)
			} else if m, n, _ := last.Import(); m != ImportModule || n != ImportName {
				t.Errorf("last import %s.%s", m, n)
			}
		})
	}
}

func types(ts []api.ValueType) []byte { return ts }

// The name section keeps naming the same functions: function and local
// name maps shift past the added import, the module name stays, other
// subsections go.
func TestNameSectionShifts(t *testing.T) {
	m := sumModule()
	fnNames := vec(3, cat(uleb(0), str("id")), cat(uleb(1), str("sum")), cat(uleb(2), str("fib")))
	localNames := vec(1, cat(uleb(1), vec(2, cat(uleb(0), str("n")), cat(uleb(1), str("acc")))))
	m.names = cat([]byte{0}, uleb(uint32(len(str("mod")))), str("mod"),
		[]byte{1}, uleb(uint32(len(fnNames))), fnNames,
		[]byte{2}, uleb(uint32(len(localNames))), localNames,
		[]byte{7}, uleb(2), []byte{0, 0}) // a global names subsection: dropped
	out := instrumented(t, m.build())
	secs, err := sections(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []byte
	for _, s := range secs {
		if s.id == secCustom && bytes.HasPrefix(s.payload, str("name")) {
			names = s.payload[len(str("name")):]
		}
	}
	wantFn := vec(3, cat(uleb(0), str("id")), cat(uleb(2), str("sum")), cat(uleb(3), str("fib")))
	wantLocal := vec(1, cat(uleb(2), vec(2, cat(uleb(0), str("n")), cat(uleb(1), str("acc")))))
	want := cat([]byte{0}, uleb(uint32(len(str("mod")))), str("mod"),
		[]byte{1}, uleb(uint32(len(wantFn))), wantFn,
		[]byte{2}, uleb(uint32(len(wantLocal))), wantLocal)
	if !bytes.Equal(names, want) {
		t.Fatalf("name section\n got %x\nwant %x", names, want)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.ExportedFunctions()["fib"].Name(); got != "fib" {
		t.Errorf("fib is named %q", got)
	}
}
