package wasmmeter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// Reproductions of a security review: each module below is read one way
// by wazero v1.12 and, before the fix, another way by the meter, so that
// code ran unmetered (or a host function was reachable through a table).
// Each must now be refused before it is ever compiled.

// watchdog is how long a metered call may outlive its deadline before a
// test calls it unbounded: not a timing threshold (a bounded call ends a
// fraction of a millisecond past its deadline on any machine) but a bound
// on a failure that would otherwise hang the test binary.
const watchdog = 30 * time.Second

// deadlineRuntime is a runtime without wazero's termination checks whose
// tick traps once the call's context is done, as plasmd's does.
func deadlineRuntime(t testing.TB) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false).WithMemoryLimitPages(64))
	t.Cleanup(func() { _ = rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
			if ctx.Err() != nil {
				panic(errTicked)
			}
			stack[0] = MaxCost
		}), nil, []api.ValueType{api.ValueTypeI32}).Export(ImportName).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// runBounded instantiates metered in rt and calls every exported function
// taking no parameters, each under a 50 ms deadline; it fails the test if
// any instantiation or call outlives that by watchdog.
func runBounded(t testing.TB, rt wazero.Runtime, metered []byte) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		mod, err := rt.InstantiateWithConfig(ctx, metered, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			return
		}
		defer mod.Close(context.Background())
		for _, def := range mod.ExportedFunctionDefinitions() {
			if len(def.ParamTypes()) > 0 {
				continue
			}
			cctx, ccancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_, _ = mod.ExportedFunction(def.ExportNames()[0]).Call(cctx)
			ccancel()
		}
	}()
	select {
	case <-done:
	case <-time.After(watchdog):
		t.Fatalf("a metered call is still running %v past its 50ms deadline: unmetered code", watchdog)
	}
}

// refused fails the test unless the module is refused with want by
// Screen, Instrument and (on the module as it is) Verify. When the meter
// wrongly accepts it, the instrumented module is run under a deadline so
// the test shows what the acceptance costs.
func refused(t *testing.T, wasm []byte, want error) {
	t.Helper()
	if err := Screen(wasm); !errors.Is(err, want) {
		t.Errorf("Screen = %v, want %v", err, want)
	}
	if err := Verify(wasm); !errors.Is(err, want) {
		t.Errorf("Verify of the bytes = %v, want %v", err, want)
	}
	out, err := Instrument(wasm)
	if errors.Is(err, want) {
		return
	}
	t.Errorf("Instrument = %v, want %v", err, want)
	if err == nil && Verify(out) == nil {
		runBounded(t, deadlineRuntime(t), out)
	}
}

// wazeroAccepts fails the test unless wazero compiles wasm (interpreter,
// plasmd's validator, and the compiler): the module is a real threat.
func wazeroAccepts(t *testing.T, wasm []byte) {
	t.Helper()
	ctx := context.Background()
	for _, rc := range []wazero.RuntimeConfig{wazero.NewRuntimeConfigInterpreter(), wazero.NewRuntimeConfig()} {
		rt := wazero.NewRuntimeWithConfig(ctx, rc)
		if _, err := rt.CompileModule(ctx, wasm); err != nil {
			t.Fatalf("wazero refuses the original: %v", err)
		}
		_ = rt.Close(ctx)
	}
}

// hiddenLoopModule: wazero's validator reads `select (ref null 28)` as one
// instruction (0x1c 0x01 0x63 0x1c); its compilers skip only two
// immediate bytes, so they decode the heap type 0x1c as another typed
// select. The meter used to read a count (0x1a = 26) there and skip 26
// bytes, hiding the loop.
func hiddenLoopModule() *mod {
	types := []fnType{{}}
	for len(types) < 29 {
		types = append(types, fnType{params: []byte{tI32, tI32}})
	}
	body := []byte{
		0x41, 0, 0x41, 0, 0x41, 0, 0x41, 0, 0x41, 0,
		0x1c, 0x01, 0x63, 0x1c, // validator: select (ref null 28)
		0x1a, 0x1a, 0x1a, // drop drop drop (meter: 26 = byte count of a select_t)
		0x03, 0x40, 0x0c, 0x00, 0x0b, // loop br 0 end
	}
	for i := 0; i < 19; i++ {
		body = append(body, 0x01) // nop
	}
	return &mod{types: types, funcs: []uint32{0}, exports: []export{{"spin", 0, 0}}, bodies: [][]byte{body}}
}

func TestReviewHiddenLoop(t *testing.T) {
	wasm := hiddenLoopModule().build()
	wazeroAccepts(t, wasm)
	refused(t, wasm, ErrTypedRef)
}

// Locals declared with the long form (ref null func) = 0x63 0x70: wazero
// reads two bytes, the meter one.
func TestReviewLongFormLocal(t *testing.T) {
	m := &mod{types: []fnType{{}}, funcs: []uint32{0}, exports: []export{{"spin", 0, 0}},
		bodies: [][]byte{{0x03, 0x40, 0x0c, 0x00, 0x0b}}, locals: [][]byte{{0x01, 0x01, 0x63, 0x70}}}
	refused(t, m.build(), ErrTypedRef)
}

// The validator/compiler split alone: code only wazero's compiler sees
// (it panics on the missing local; in plasmd, in a compile worker
// goroutine, which kills the process). Screen must refuse it.
func TestReviewCompilerOnlyCode(t *testing.T) {
	types := []fnType{{}}
	for len(types) < 33 {
		types = append(types, fnType{params: []byte{tI32, tI32}})
	}
	// validator: i32.const 0 x3; select (ref null 32); i32.eqz; drop
	// compiler: i32.const 0 x3; select; local.get 69 (no such local); drop
	body := []byte{0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x01, 0x63, 0x20, 0x45, 0x1a}
	wasm := (&mod{types: types, funcs: []uint32{0}, exports: []export{{"f", 0, 0}}, bodies: [][]byte{body}}).build()
	refused(t, wasm, ErrTypedRef)
}

// wazero reads a SIMD sub-opcode as one byte; the meter used to read a
// LEB128. fd 8c 00: wazero i16x8.shr_s then unreachable; the meter
// v128.const (sub-opcode 0x0c) with 16 immediate bytes, which hid a loop.
func TestReviewSIMDOpcodeLEB(t *testing.T) {
	body := []byte{
		0x02, 0x40, // block B
		0x0c, 0x00, // br 0 (to after B's end)
		0xfd, 0x8c, 0x00, // wazero: i16x8.shr_s; unreachable. meter: v128.const + 16 bytes:
		0x0b,       // end B
		0x02, 0x40, // block B2
		0x03, 0x40, 0x0c, 0x00, 0x0b, // loop br 0 end
		0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, // nops (16 bytes hidden in all)
		0x0b, // end B2 (the meter: end B)
	}
	wasm := (&mod{types: []fnType{{}}, funcs: []uint32{0}, exports: []export{{"spin", 0, 0}}, bodies: [][]byte{body}}).build()
	wazeroAccepts(t, wasm)
	// Screen reads it as wazero does (its validator and compilers agree),
	// so it may run with wazero's own loop checks, but never metered.
	if err := Screen(wasm); err != nil {
		t.Errorf("Screen = %v, want nil", err)
	}
	out, err := Instrument(wasm)
	if errors.Is(err, ErrUnsupported) {
		return
	}
	t.Errorf("Instrument = %v, want ErrUnsupported", err)
	if err == nil && Verify(out) == nil {
		runBounded(t, deadlineRuntime(t), out)
	}
}

// Element segment whose reference type is in the long form 0x63 <ht>:
// wazero reads (ref null 65), the meter read 0x63 and took the heap type
// bytes c1 00 as the element count.
func TestReviewElemLongForm(t *testing.T) {
	types := []fnType{{}}
	for len(types) < 66 {
		types = append(types, fnType{params: []byte{tI32}})
	}
	seg := []byte{0x05, 0x63, 0xc1, 0x00, 0x41, 0xd2, 0x00, 0x0b}
	for i := 0; i < 64; i++ {
		seg = append(seg, 0xd0, 0x70, 0x0b)
	}
	m := &mod{types: types, imports: []imp{{mod: "env", name: "host", typ: 0}}, funcs: []uint32{0},
		exports: []export{{"f", 0, 1}}, bodies: [][]byte{{}}, elements: [][]byte{seg}}
	refused(t, m.build(), ErrTypedRef)
}

// The same hiding puts ref.func of an import, unshifted, into a table
// that call_indirect reaches.
func TestReviewElemLongFormCallIndirectReachesHost(t *testing.T) {
	types := []fnType{{}}
	for len(types) < 66 {
		types = append(types, fnType{params: []byte{tI32}})
	}
	seg := []byte{0x05, 0x63, 0x23, 0x23, 0xd2, 0x00, 0x0b} // wazero: (ref null 35), 35 exprs, the first ref.func 0
	for i := 0; i < 34; i++ {
		seg = append(seg, 0xd0, 0x70, 0x0b)
	}
	body := []byte{0x41, 0, 0x41, 0, 0x41, 1, 0xfc, 0x0c, 0x00, 0x00, // table.init 0 0 (dst 0, src 0, n 1)
		0x41, 0, 0x11, 0x00, 0x00} // call_indirect (type 0) table[0]
	m := &mod{types: types, imports: []imp{{mod: "env", name: "host", typ: 0}}, funcs: []uint32{0}, table: 1,
		exports: []export{{"f", 0, 1}}, bodies: [][]byte{body}, elements: [][]byte{seg}}
	wasm := m.build()
	ctx := context.Background()
	vrt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer vrt.Close(ctx)
	if _, err := vrt.CompileModule(ctx, wasm); err != nil {
		t.Fatalf("wazero refuses the original: %v", err)
	}
	out, err := Instrument(wasm)
	if errors.Is(err, ErrTypedRef) {
		return
	}
	t.Errorf("Instrument = %v, want ErrTypedRef", err)
	if err != nil {
		return
	}
	rt, _ := newRuntime(t, 1<<20, 0)
	var hostCalls int
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func() { hostCalls++ }).Export("host").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = call(t, rt, out, "f")
	if hostCalls > 0 {
		t.Errorf("call_indirect reached the host %d times (call: %v)", hostCalls, err)
	}
}

// Every typed function reference form, wherever it appears, and every
// reading on which wazero and the meter could disagree, is refused.
func TestScreenRefusesDisagreements(t *testing.T) {
	manyTypes := func() []fnType {
		ts := []fnType{{}}
		for len(ts) < 3 {
			ts = append(ts, fnType{params: []byte{tI32}})
		}
		return ts
	}
	body := func(b ...byte) *mod {
		return &mod{types: manyTypes(), funcs: []uint32{0}, table: 1, bodies: [][]byte{b}}
	}
	tests := []struct {
		name string
		wasm []byte
		want error
	}{
		{"select t (ref null 1)", body(0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x01, 0x63, 0x01, 0x1a).build(), ErrTypedRef},
		{"select t (ref func)", body(0xd0, 0x70, 0xd0, 0x70, 0x41, 0, 0x1c, 0x01, 0x64, 0x70, 0x1a).build(), ErrTypedRef},
		{"select t of two types", body(0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x02, 0x7f, 0x7f, 0x1a).build(), ErrUnsupported},
		{"select t count as a long LEB128", body(0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x81, 0x00, 0x7f, 0x1a).build(), ErrUnsupported},
		{"select t of no type", body(0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x00, 0x1a).build(), ErrUnsupported},
		{"select t exnref", body(0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x01, 0x69, 0x1a).build(), ErrUnsupported},
		{"block type (ref null 1)", body(0x02, 0x63, 0x01, 0xd0, 0x70, 0x0b, 0x1a).build(), ErrTypedRef},
		{"ref.null of a type index", body(0xd0, 0x01, 0x1a).build(), ErrUnsupported},
		{"ref.null (ref null) form", body(0xd0, 0x63, 0x1a).build(), ErrTypedRef},
		{"param (ref null func)", (&mod{types: []fnType{{params: []byte{0x63, 0x70}}}}).build(), ErrTypedRef},
		{"result (ref func)", (&mod{types: []fnType{{results: []byte{0x64, 0x70}}}}).build(), ErrTypedRef},
		{"local (ref null 0)", (&mod{types: []fnType{{}}, funcs: []uint32{0}, bodies: [][]byte{{}}, locals: [][]byte{{1, 1, 0x63, 0x00}}}).build(), ErrTypedRef},
		{"global (ref null func)", (&mod{globals: []global{{typ: 0x63, init: []byte{0x70, 0xd0, 0x70}}}}).build(), ErrTypedRef},
		{"table (ref null func)", cat(header, sect(4, []byte{1, 0x63, 0x70, 0, 1})), ErrTypedRef},
		{"imported table (ref func)", cat(header, sect(secImport, cat([]byte{1}, str("env"), str("t"), []byte{1, 0x64, 0x70, 0, 1}))), ErrTypedRef},
		{"imported global (ref null func)", cat(header, sect(secImport, cat([]byte{1}, str("env"), str("g"), []byte{3, 0x63, 0x70, 0}))), ErrTypedRef},
		{"element flags 5 (ref null 65)", body().with(func(m *mod) { m.elements = [][]byte{{0x05, 0x63, 0xc1, 0x00, 0x00}} }).build(), ErrTypedRef},
		{"element flags 7 (ref func)", body().with(func(m *mod) { m.elements = [][]byte{{0x07, 0x64, 0x70, 0x00}} }).build(), ErrTypedRef},
		{"element flags 6 (ref null func)", body().with(func(m *mod) {
			m.elements = [][]byte{{0x06, 0x00, 0x41, 0x00, 0x0b, 0x63, 0x70, 0x00}}
		}).build(), ErrTypedRef},
		{"element kind not 0", body().with(func(m *mod) { m.elements = [][]byte{{0x01, 0x70, 0x00}} }).build(), ErrUnsupported},
		{"garbage after a section", cat(header, sect(secFunction, []byte{0, 0})), ErrMalformed},
		{"truncated", cat(header, []byte{1, 5, 1}), ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Screen(tc.wasm)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Screen = %v, want %v", err, tc.want)
			}
			if _, ierr := Instrument(tc.wasm); ierr == nil {
				t.Fatalf("Instrument accepts what Screen refuses (%v)", err)
			}
			t.Log(err)
		})
	}
}

func (m *mod) with(f func(*mod)) *mod { f(m); return m }

// Modules wazero reads alike pass Screen: the short forms of every place
// a type appears.
func TestScreenAcceptsShortForms(t *testing.T) {
	for name, wasm := range map[string][]byte{
		"sum":    sumModule().build(),
		"tamper": tamperModule().build(),
		"select t i32 and funcref, ref.null, v128.const": (&mod{types: []fnType{{}}, funcs: []uint32{0}, bodies: [][]byte{{
			0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x01, 0x7f, 0x1a,
			0xd0, 0x70, 0xd0, 0x70, 0x41, 0, 0x1c, 0x01, 0x70, 0x1a,
			0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x1a,
		}}}).build(),
		// i16x8.shr_s as toolchains encode it (LEB128 8c 01): wazero reads
		// i16x8.shr_s; nop. Screen follows; only the meter refuses it.
		"simd sub-opcode byte with its high bit set": (&mod{types: []fnType{{}}, funcs: []uint32{0}, bodies: [][]byte{{
			0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x41, 1, 0xfd, 0x8c, 0x01, 0x1a,
		}}}).build(),
		"element flags 5 funcref": (&mod{types: []fnType{{}}, funcs: []uint32{0}, table: 1, bodies: [][]byte{{}},
			elements: [][]byte{{0x05, 0x70, 0x01, 0xd2, 0x00, 0x0b}}}).build(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := Screen(wasm); err != nil {
				t.Fatalf("Screen: %v", err)
			}
		})
	}
}

// The fuel is emptied after every call_indirect, as after host calls, and
// Verify insists on it.
func TestCallIndirectEmptiesFuel(t *testing.T) {
	m := &mod{types: []fnType{{}}, funcs: []uint32{0, 0}, table: 1, exports: []export{{"f", 0, 0}},
		elements: [][]byte{{0x00, 0x41, 0x00, 0x0b, 0x01, 0x01}},
		bodies:   [][]byte{{0x41, 0, 0x11, 0x00, 0x00}, {}}}
	out := instrumented(t, m.build())
	// call_indirect (type 0, table 0), then i32.const 0 global.set $fuel
	// (the fuel is global 0, the tick function 0).
	seq := []byte{0x11, 0x00, 0x00, 0x41, 0x00, 0x24, 0x00}
	i := indexOf(out, seq)
	if i < 0 {
		t.Fatalf("no fuel emptying after call_indirect in %x", out)
	}
	tampered := append([]byte(nil), out...)
	copy(tampered[i+3:], []byte{0x01, 0x01, 0x01, 0x01})
	if err := Verify(tampered); !errors.Is(err, ErrUnmetered) {
		t.Fatalf("Verify without the emptying = %v, want ErrUnmetered", err)
	}
	rt, ticks := newRuntime(t, 1<<20, 0)
	if _, err := call(t, rt, out, "f"); err != nil {
		t.Fatal(err)
	}
	// The entry check ticks (fuel starts at 0), and the check after the
	// emptied call_indirect ticks again.
	if got := ticks.Load(); got != 2 {
		t.Fatalf("%d ticks, want 2", got)
	}
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// BenchmarkScreen: the extra read of a module before any compilation,
// against Instrument (which includes one) on the same module, and Verify
// (which includes one) on Instrument's result.
func BenchmarkScreen(b *testing.B) {
	wasm := enginewasm.Module()
	b.Run("screen", func(b *testing.B) {
		b.SetBytes(int64(len(wasm)))
		for range b.N {
			if err := Screen(wasm); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("instrument", func(b *testing.B) {
		b.SetBytes(int64(len(wasm)))
		for range b.N {
			if _, err := Instrument(wasm); err != nil {
				b.Fatal(err)
			}
		}
	})
	metered, err := Instrument(wasm)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("verify", func(b *testing.B) {
		b.SetBytes(int64(len(metered)))
		for range b.N {
			if err := Verify(metered); err != nil {
				b.Fatal(err)
			}
		}
	})
}
