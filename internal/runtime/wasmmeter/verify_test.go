package wasmmeter

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// tamperModule is sumModule plus a body that writes global 0 with a
// marker constant and one that fills memory, so tests can find and patch
// those instructions after instrumentation.
func tamperModule() *mod {
	m := sumModule()
	m.memory = true
	m.types = append(m.types, fnType{params: []byte{tI32}})
	m.funcs = append(m.funcs, 3, 3)
	m.bodies = append(m.bodies,
		[]byte{0x41, 0x3a, 0x24, 0x00},                               // global.set 0 (i32.const 58)
		[]byte{0x41, 0x00, 0x41, 0x2a, 0x20, 0x00, 0xfc, 0x0b, 0x00}, // memory.fill(0, 42, n)
	)
	m.exports = append(m.exports, export{"set", 0, 5}, export{"fill", 0, 6}, export{"memory", 2, 0})
	return m
}

// checkSeq is the encoded check sequence charging cost, for the small
// module's indices (fuel global 2, tick function 1).
func checkSeq(cost byte) []byte {
	return appendCheck(nil, 2, 1, uint32(cost))
}

func TestVerifyCatchesTampering(t *testing.T) {
	orig := tamperModule().build()
	good := instrumented(t, orig)
	entry := checkSeq(1 + checkCost)
	if !bytes.Contains(good, entry) {
		t.Fatal("test assumes a check of a walk of 1 (function entry before a loop)")
	}
	replaceFirst := func(b, old, new []byte) []byte {
		i := bytes.Index(b, old)
		if i < 0 {
			t.Fatalf("pattern %x not found", old)
		}
		out := bytes.Clone(b)
		copy(out[i:], new)
		return out
	}
	nops := func(n int) []byte { return bytes.Repeat([]byte{0x01}, n) }
	fuelSet := []byte{0x41, 0x3a, 0x24, 0x02}
	bulk := appendBulkCharge(nil, 2, 1, 1)
	tests := []struct {
		name string
		b    []byte
	}{
		// The same length in nops: sizes stay right, the check is gone.
		{"check removed", replaceFirst(good, entry, nops(len(entry)))},
		{"stray global.set of the fuel", replaceFirst(good, []byte{0x41, 0x3a, 0x24, 0x00}, fuelSet)},
		{"fuel exported", replaceFirst(good, append(str("started"), 3, 0), append(str("started"), 3, 2))},
		{"bulk charge removed", replaceFirst(good, bulk, nops(len(bulk)))},
		{"charge lowered", lowerACost(t, good)},
		{"fuel not emptied after a host call", replaceFirst(good, []byte{0x10, 0x00, 0x41, 0x00, 0x24, 0x02}, append([]byte{0x10, 0x00}, nops(4)...))},
		{"tick in a table", replaceFirst(good, append([]byte{0, opI32Const, 0, opEnd, 1}, 2), append([]byte{0, opI32Const, 0, opEnd, 1}, 1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.b)
			if !errors.Is(err, ErrUnmetered) {
				t.Fatalf("Verify = %v, want ErrUnmetered", err)
			}
			t.Log(err)
		})
	}
}

// lowerACost makes the first check with a walk of 2 or more charge one
// less than its walk.
func lowerACost(t *testing.T, b []byte) []byte {
	for c := byte(checkCost + 2); c < 64; c++ {
		if i := bytes.Index(b, checkSeq(c)); i >= 0 {
			out := bytes.Clone(b)
			copy(out[i:], checkSeq(c-checkCost-1))
			return out
		}
	}
	t.Fatal("no check with a walk of 2..59")
	return nil
}

// An index out of range in the original would name the fuel once
// instrumented: wazero refuses the original, and Verify refuses the
// instrumented bytes too.
func TestOutOfRangeGlobalNeverMetered(t *testing.T) {
	ctx := context.Background()
	orig := (&mod{
		types:   []fnType{{}},
		funcs:   []uint32{0},
		exports: []export{{"f", 0, 0}},
		bodies:  [][]byte{{0x23, 0x00, 0x1a}}, // global.get 0; drop: there is no global 0
	}).build()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, orig); err == nil {
		t.Fatal("wazero accepted a global.get out of range")
	}
	out, err := Instrument(orig)
	if err != nil {
		t.Fatalf("Instrument: %v (the test wants it to get as far as Verify)", err)
	}
	if err := Verify(out); !errors.Is(err, ErrUnmetered) {
		t.Fatalf("Verify = %v, want ErrUnmetered: the instrumented module reads the fuel", err)
	}
}

func TestInstrumentRefusesUnknown(t *testing.T) {
	for name, body := range map[string][]byte{
		"try (exceptions)":   {0x06, 0x40, 0x0b},
		"atomic fence":       {0xfe, 0x03, 0x00},
		"unassigned simd":    {0xfd, 0x9a, 0x01},
		"relaxed simd":       {0xfd, 0x80, 0x02},
		"simd high-bit byte": {0xfd, 0x8c, 0x01},
		"simd as wazero":     {0xfd, 0x8c, 0x00},
		"unassigned 0xfc":    {0xfc, 0x12},
		"unassigned opcode":  {0x27},
		"multi-memory load":  {0x41, 0x00, 0x28, 0x42, 0x00, 0x00, 0x1a},
		"truncated body":     {0x41},
		"branch out of body": {0x0c, 0x05},
		"tail call":          {0x12, 0x00},
		"ref.func of import": {0xd2, 0x00, 0x1a},
	} {
		t.Run(name, func(t *testing.T) {
			m := (&mod{types: []fnType{{}}, imports: []imp{{"env", "f", 0}}, funcs: []uint32{0}, memory: true, bodies: [][]byte{body}}).build()
			_, err := Instrument(m)
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Instrument = %v, want ErrUnsupported or ErrMalformed", err)
			}
		})
	}
}

// Bulk operations pay for their length: a fill larger than the fuel left
// calls the tick first.
func TestBulkOperationsCharged(t *testing.T) {
	ctx := context.Background()
	metered := instrumented(t, tamperModule().build())
	rt, ticks := newRuntime(t, MaxCost, 0)
	if err := instantiateEnv(rt); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, metered, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	before := ticks.Load()
	const calls = 5
	for range calls {
		if _, err := mod.ExportedFunction("fill").Call(ctx, 60000); err != nil {
			t.Fatal(err)
		}
	}
	// 60000 bytes are 3750 units, more than a refill of MaxCost: every
	// fill ticks.
	if got := ticks.Load() - before; got < calls {
		t.Fatalf("%d ticks for %d large fills", got, calls)
	}
	if b, ok := mod.Memory().Read(59999, 1); !ok || b[0] != 42 {
		t.Fatalf("memory not filled: %v", b)
	}
}

// fuzzing reports whether this run fuzzes (go test -fuzz) rather than
// only running the seed corpus.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// FuzzInstrument: Instrument never panics; on a module wazero accepts it
// either refuses with a typed error or produces a module wazero accepts
// and Verify passes, and whose exported functions, run without wazero's
// loop checks under a 50 ms deadline, all stop (runBounded): Verify
// shares Instrument's decoder, so only running the module under wazero's
// own reading can catch a decoder that reads bytes differently.
func FuzzInstrument(f *testing.F) {
	f.Add(sumModule().build())
	f.Add(tamperModule().build())
	for _, body := range [][]byte{{0x03, 0x40, 0x0c, 0x00, 0x0b}, {0x10, 0x00, 0x10, 0x00}} {
		f.Add((&mod{types: []fnType{{}}, funcs: []uint32{0}, exports: []export{{"f", 0, 0}}, bodies: [][]byte{body}}).build())
	}
	f.Add((&mod{types: []fnType{{}}, funcs: []uint32{0}, memory: true, bodies: [][]byte{{
		0x41, 0x00, 0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0xfd, 0x0b, 0x04, 0x00,
		0x41, 0x00, 0x41, 0x10, 0x41, 0x10, 0xfc, 0x0a, 0x00, 0x00}}}).build())
	// The engine and the ledger module seed the fuzzer's mutations only
	// when fuzzing: on a plain run TestInstrumentRealModules makes the
	// same checks on the same bytes (Instrument, Verify, wazero accepting
	// both the original and the output) and more, and each costs tens of
	// seconds under -race.
	if fuzzing() {
		f.Add(enginewasm.Module())
		if b, err := os.ReadFile("../../../demo/catalogs/ledger/module.wasm"); err == nil {
			f.Add(b)
		}
	}
	f.Add(hiddenLoopModule().build())
	names, _ := nameSection("name", append(subsec(0, []byte{1, 'm'}), subsec(2, []byte{1, 0, 1, 0, 1, 'x'})...))
	f.Add(names)
	locals, _ := localsModule([]uint32{2, 1}, []uint32{MaxFunctionLocals})
	f.Add(locals)
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { _ = rt.Close(ctx) })
	mrt := deadlineRuntime(f)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := Instrument(wasm)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTypedRef) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("untyped error: %v", err)
			}
			for _, at := range errOffsets(err) {
				if at > len(wasm) {
					t.Fatalf("%v: names module byte %d of a %d-byte module", err, at, len(wasm))
				}
			}
			return
		}
		// Only now ask wazero: its decoder spends seconds and gigabytes on
		// some framing garbage that Instrument refuses at once.
		orig, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			return // not valid: Instrument's output does not matter
		}
		_ = orig.Close(ctx)
		if err := Verify(out); err != nil {
			t.Fatalf("Verify of an instrumented valid module: %v", err)
		}
		cm, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("wazero refuses the instrumented module: %v", err)
		}
		_ = cm.Close(ctx)
		if len(wasm) < 1<<16 { // not the engine: its exports want a host
			runBounded(t, mrt, out)
		}
	})
}
