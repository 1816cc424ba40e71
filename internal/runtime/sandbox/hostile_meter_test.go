package sandbox

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// Hand-assembled hostile guests (no toolchain) for the meter: each echoes
// like nativeRecursionWasm, except that plasm_ping("hostile") calls
// spin(40), whose body is the misbehaviour. The meter, not wazero, is what
// has to stop them.
var meterHostiles = map[string][]byte{
	// A loop with nothing in it: no call, no function entry.
	"tight-loop": {0x03, 0x40, 0x0c, 0x00, 0x0b},
	// spin(d) { if d { spin(d-1); spin(d-1) } }: 2^40 calls, no loop.
	"exp-recursion": {0x20, 0x00, 0x04, 0x40,
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x03,
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x03,
		0x0b},
	// A loop of bulk memory and SIMD: memory.fill and memory.copy over a
	// page, and v128 load, add, store.
	"simd-bulk": {0x03, 0x40,
		0x41, 0x00, 0x41, 0x00, 0x41, 0x80, 0x80, 0x04, 0xfc, 0x0b, 0x00, // memory.fill(0, 0, 65536)
		0x41, 0x00, 0x41, 0x00, 0xfd, 0x00, 0x04, 0x00, // v128.load
		0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // v128.const
		0xfd, 0x6e, // i8x16.add
		0xfd, 0x0b, 0x04, 0x00, // v128.store
		0x41, 0x00, 0x41, 0x80, 0x20, 0x41, 0x80, 0x20, 0xfc, 0x0a, 0x00, 0x00, // memory.copy(0, 4096, 4096)
		0x0c, 0x00, 0x0b},
}

// sleepLoop sleeps 10 ms (WASI poll_oneoff on a relative monotonic clock
// subscription at 4096) in a loop: each iteration is a few instructions
// and a host call that takes the whole guest-sleep cap.
var sleepLoop = []byte{
	0x41, 0x80, 0x20, 0x41, 0x01, 0x36, 0x02, 0x10, // clock id 1 (monotonic) at 4096+16
	0x41, 0x80, 0x20, 0x42, 0x80, 0xad, 0xe2, 0x04, 0x37, 0x03, 0x18, // timeout 10,000,000 ns at 4096+24
	0x03, 0x40,
	0x41, 0x80, 0x20, 0x41, 0x80, 0xc0, 0x00, 0x41, 0x01, 0x41, 0x80, 0xc2, 0x00, 0x10, 0x00, 0x1a, // poll_oneoff(4096, 8192, 1, 8448)
	0x0c, 0x00, 0x0b,
}

// meterGuestWasm assembles an ABI module whose spin function has body
// spin; with startSpin, a start function loops forever too.
func meterGuestWasm(spin []byte, startSpin bool) []byte {
	return meterGuestWasmWith(spin, startSpin, false)
}

// meterGuestWasmWith is meterGuestWasm; with sleep, the module imports
// WASI poll_oneoff as function 0 (spin's body must then be sleepLoop:
// function indices shift by one).
func meterGuestWasmWith(spin []byte, startSpin, sleep bool) []byte {
	leb := func(v int) []byte {
		var b []byte
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	section := func(id byte, body []byte) []byte {
		return append(append([]byte{id}, leb(len(body))...), body...)
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	fn := func(code ...byte) []byte {
		body := append([]byte{0x00}, code...)
		body = append(body, 0x0b)
		return append(leb(len(body)), body...)
	}
	const i32, i64 = 0x7f, 0x7e
	shift := byte(0)
	if sleep {
		shift = 1
	}
	types := []byte{6,
		0x60, 0, 1, i32, // 0: () -> i32
		0x60, 1, i32, 1, i32, // 1: (i32) -> i32
		0x60, 1, i32, 1, i64, // 2: (i32) -> i64
		0x60, 1, i32, 0, // 3: (i32) -> ()
		0x60, 0, 0, // 4: () -> ()
		0x60, 4, i32, i32, i32, i32, 1, i32, // 5: poll_oneoff
	}
	funcs := []byte{4, 0, 1, 2, 3}
	var exports []byte
	exports = append(exports, 4)
	exports = append(append(exports, name("memory")...), 0x02, 0)
	exports = append(append(exports, name("plasm_abi_version")...), 0x00, 0+shift)
	exports = append(append(exports, name("plasm_alloc")...), 0x00, 1+shift)
	exports = append(append(exports, name("plasm_ping")...), 0x00, 2+shift)
	code := []byte{4}
	code = append(code, fn(0x41, 0x01)...)       // plasm_abi_version: 1
	code = append(code, fn(0x41, 0x80, 0x08)...) // plasm_alloc: 1024
	code = append(code, fn(                      // plasm_ping(n)
		0x20, 0x00, 0x41, 0x07, 0x46, 0x04, 0x40, // if n == 7
		0x41, 0x28, 0x10, 0x03+shift, //   spin(40)
		0x0b,
		0x42, 0xff, 0x07, 0x42, 0x20, 0x86, // 1023 << 32
		0x20, 0x00, 0x41, 0x01, 0x6a, 0xad, 0x84)...) // | (n + 1)
	code = append(code, fn(spin...)...)
	if startSpin {
		funcs = append(funcs, 4)
		funcs[0]++
		code[0]++
		code = append(code, fn(0x03, 0x40, 0x0c, 0x00, 0x0b)...)
	}
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, section(1, types)...)
	if sleep {
		imp := append([]byte{1}, name("wasi_snapshot_preview1")...)
		imp = append(append(imp, name("poll_oneoff")...), 0x00, 5)
		m = append(m, section(2, imp)...)
	}
	m = append(m, section(3, funcs)...)
	m = append(m, section(5, []byte{1, 0x00, 2})...)
	m = append(m, section(7, exports)...)
	if startSpin {
		m = append(m, section(8, []byte{4 + shift})...)
	}
	return append(m, section(10, code)...)
}

func TestMeteredHostileGuests(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	for name, spin := range meterHostiles {
		t.Run(name, func(t *testing.T) {
			m, err := testHost.Module(ctx, meterGuestWasm(spin, false))
			if err != nil {
				t.Fatal(err)
			}
			if !m.Metered {
				t.Fatal("not metered: the meter is what must stop it")
			}
			tn := testHost.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: 100 * time.Millisecond}})
			defer tn.Close()
			if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
				t.Fatalf("echo: %q, %v", got, err)
			}
			start := time.Now()
			_, err = tn.Ping(ctx, []byte("hostile"))
			t.Logf("%v (after %v)", err, time.Since(start))
			var ce *CallError
			if !errors.Is(err, ErrDeadline) || !errors.As(err, &ce) || !strings.Contains(ce.Detail, "did not return in time") {
				t.Fatalf("err = %v, want ErrDeadline", err)
			}
			if s := tn.Stats(); s.Discarded != 1 || s.Live != 0 {
				t.Fatalf("stats %+v: the instance must be discarded", s)
			}
			if got, err := tn.Ping(ctx, []byte("after")); err != nil || string(got) != "after" {
				t.Fatalf("next call: %q, %v", got, err)
			}
		})
	}
}

// A guest that sleeps in a loop spends its time in a host call, not in
// instructions: the meter empties the fuel after every host call, so the
// deadline is seen when the first sleep after it returns.
func TestMeteredSleeperStops(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	m, err := testHost.Module(ctx, meterGuestWasmWith(sleepLoop, false, true))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Metered {
		t.Fatal("not metered")
	}
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: 100 * time.Millisecond}})
	defer tn.Close()
	if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	// The caller gives up long before 2^20 fuel units of 10 ms sleeps
	// (hours) would have run: a sleeper the meter did not stop fails the
	// test here, at a deadline no working meter reaches.
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	_, err = tn.Ping(cctx, []byte("hostile"))
	t.Logf("%v (after %v)", err, time.Since(start))
	if !errors.Is(err, ErrDeadline) || cctx.Err() != nil {
		t.Fatalf("err = %v, want ErrDeadline from the 100 ms call timeout", err)
	}
	if s := tn.Stats(); s.Discarded != 1 || s.Live != 0 {
		t.Fatalf("stats %+v: the instance must be discarded", s)
	}
}

// A start function that never returns is stopped by the meter at the
// caller's deadline, and the module is refused.
func TestMeteredStartSpins(t *testing.T) {
	checkNoLeaks(t)
	wasm := meterGuestWasm(meterHostiles["tight-loop"], true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := testHost.Module(ctx, wasm)
	if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "did not return in time") {
		t.Fatalf("load of a module spinning in its start function: %v, want ErrDeadline", err)
	}
}

// TestCallerCancelMetered: a cancelled caller stops a metered spinner with
// context.Canceled, as it does a checked one.
func TestCallerCancelMetered(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	m, err := testHost.Module(ctx, meterGuestWasm(meterHostiles["tight-loop"], false))
	if err != nil {
		t.Fatal(err)
	}
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: time.Minute}})
	defer tn.Close()
	cctx, stop := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, stop)
	_, err = tn.Ping(cctx, []byte("hostile"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTrap) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if s := tn.Stats(); s.Discarded != 1 {
		t.Fatalf("cancelled instance kept: %+v", s)
	}
}

// A module the meter cannot rewrite still loads, with wazero's checks,
// which then stop it at its deadline; a warning says so. (No valid module
// wazero 1.12 accepts with plasmd's features is known to be refused by
// Instrument, so the refusal is injected.)
func TestUnmeterableFallsBackToChecks(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	var logged strings.Builder
	// A cache directory of its own: the shared one may hold a meter memo
	// (metermemo.go) of this module, which would skip the refusing hook.
	h, err := New(ctx, Config{CacheDir: t.TempDir(), Spares: -1, Meter: MeterAll,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	instrument = func([]byte) ([]byte, error) { return nil, fmt.Errorf("%w: injected", wasmmeter.ErrUnsupported) }
	defer func() { instrument = wasmmeter.Instrument }()
	m, err := h.Module(ctx, meterGuestWasm(meterHostiles["tight-loop"], false))
	if err != nil {
		t.Fatal(err)
	}
	if m.Metered {
		t.Fatal("metered although Instrument refused")
	}
	if s := h.Stats(); s.Checked != 1 || s.Metered != 0 {
		t.Errorf("stats %+v", s)
	}
	if !strings.Contains(logged.String(), "module not metered") || !strings.Contains(logged.String(), "injected") {
		t.Errorf("no warning logged: %q", logged.String())
	}
	tn := h.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: 100 * time.Millisecond}})
	defer tn.Close()
	if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	if _, err := tn.Ping(ctx, []byte("hostile")); !errors.Is(err, ErrDeadline) {
		t.Fatalf("checked fallback: %v, want ErrDeadline", err)
	}
}

// FuzzMeterGuests is wasmmeter's FuzzInstrument seeded with this
// package's hostile guests (the Go-built ones and the hand-assembled
// ones): whatever the mutation, Instrument does not panic, and a module
// wazero accepts is refused with a typed error or becomes one wazero
// accepts and Verify passes.
//
// The Go-built guests that load metered (TestGoGuestsLoadMetered) seed
// only a real fuzzing run: loading metered means Instrument's output (made
// by this executable, now or on an earlier run through the meter memo)
// passed Verify and wazero compiled it, which is what this body checks,
// and each ~1.5 MB guest costs seconds here under -race. badversion and
// noalloc never load (their ABI is refused), so they stay seeds.
func FuzzMeterGuests(f *testing.F) {
	for _, name := range hostileGuests {
		if b := guestWasm[name]; b != nil && (fuzzing() || !loadsMetered[name]) {
			f.Add(b)
		}
	}
	for _, spin := range meterHostiles {
		f.Add(meterGuestWasm(spin, false))
	}
	f.Add(meterGuestWasm(meterHostiles["tight-loop"], true))
	f.Add(nativeRecursionWasm())
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := wasmmeter.Instrument(wasm)
		if err != nil {
			if !errors.Is(err, wasmmeter.ErrUnsupported) && !errors.Is(err, wasmmeter.ErrMalformed) &&
				!errors.Is(err, wasmmeter.ErrTypedRef) && !errors.Is(err, wasmmeter.ErrTooLarge) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		orig, err := testHost.vrt.CompileModule(ctx, wasm)
		if err != nil {
			return
		}
		_ = orig.Close(ctx)
		if err := wasmmeter.Verify(out); err != nil {
			t.Fatalf("Verify of an instrumented valid module: %v", err)
		}
		cm, err := testHost.vrt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("wazero refuses the instrumented module: %v", err)
		}
		_ = cm.Close(ctx)
	})
}

// loadsMetered names the Go-built guests that load, metered:
// TestGoGuestsLoadMetered asserts it (TestModuleStartLoops for initloop,
// whose start-up never ends).
var loadsMetered = map[string]bool{"loop": true, "initloop": true, "panic": true, "grow": true, "badptr": true, "huge": true, "recurse": true, "abuse": true, "badspec": true}

// TestGoGuestsLoadMetered: every guest in loadsMetered loads on the
// MeterAll host metered, so its instrumented bytes passed Verify and
// wazero compiled them (FuzzMeterGuests leaves them out of a plain run).
// TestMain registered them, so this costs lookups.
func TestGoGuestsLoadMetered(t *testing.T) {
	needGuests(t)
	for name := range loadsMetered {
		if name != "initloop" {
			guestModule(t, name)
		}
	}
}

// fuzzing reports whether this run fuzzes (go test -fuzz) rather than
// only running the seed corpus.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// TestDefaultMetersOnlyTheEngine: a host built with the zero Config meters
// the engine embedded in the binary and nothing else. An uploaded module
// is hostile bytes, so it keeps wazero's check at every loop (the meter's
// stop rests on its reading agreeing with wazero's, which is tested on
// modules we build); the tight loop is stopped at its deadline by that
// check.
func TestDefaultMetersOnlyTheEngine(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir, Spares: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	for _, b := range [][]byte{enginewasm.Wasm, enginewasm.Module()} {
		m, err := h.Module(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Metered {
			t.Errorf("engine %s not metered", m.Digest[:12])
		}
	}
	m, err := h.Module(ctx, meterGuestWasm(meterHostiles["tight-loop"], false))
	if err != nil {
		t.Fatal(err)
	}
	if m.Metered {
		t.Fatal("an uploaded module is metered by default")
	}
	tn := h.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: 100 * time.Millisecond}})
	defer tn.Close()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := tn.Ping(cctx, []byte("hostile")); !errors.Is(err, ErrDeadline) || cctx.Err() != nil {
		t.Fatalf("err = %v, want ErrDeadline from the 100 ms call timeout", err)
	}
	if s := h.Stats(); s.Metered != 2 || s.Checked != 1 {
		t.Errorf("stats %+v, want the two engines metered and the guest checked", s)
	}
}
