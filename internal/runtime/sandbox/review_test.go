package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// Reproductions of a security review: modules wazero v1.12 reads one way
// and the meter, before the fix, another, so a loop ran unmetered in the
// runtime without wazero's loop checks, or a compile worker panicked and
// took the process down.

// reviewWatchdog bounds a hostile call whose CallTimeout is 100 ms: a
// bound on a failure (an unstoppable guest) that would otherwise hang the
// test binary, not a timing threshold.
const reviewWatchdog = 30 * time.Second

// refusedTypedRef fails unless Module refused wasm before compiling it,
// with ErrABI and wasmmeter.ErrTypedRef. If it was accepted, the hostile
// call is run under the watchdog to show what that costs.
func refusedTypedRef(t *testing.T, wasm []byte) {
	t.Helper()
	m, err := testHost.Module(context.Background(), wasm)
	if errors.Is(err, ErrABI) && errors.Is(err, wasmmeter.ErrTypedRef) {
		t.Log(err)
		return
	}
	t.Errorf("Module = %v, want ErrABI and wasmmeter.ErrTypedRef", err)
	if err == nil {
		hostileStops(t, m)
	}
}

// hostileStops fails unless m's hostile call, with a 100 ms CallTimeout,
// ends with ErrDeadline before reviewWatchdog.
func hostileStops(t *testing.T, m *Module) {
	t.Helper()
	ctx := context.Background()
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: 100 * time.Millisecond}})
	if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	done := make(chan error, 1)
	go func() { _, err := tn.Ping(ctx, []byte("hostile")); done <- err }()
	select {
	case err := <-done:
		tn.Close()
		if !errors.Is(err, ErrDeadline) {
			t.Errorf("hostile call = %v, want ErrDeadline", err)
		}
	case <-time.After(reviewWatchdog):
		t.Errorf("hostile call with a 100ms CallTimeout still running after %v (metered=%v)", reviewWatchdog, m.Metered)
	}
}

// reviewGuestWasm is meterGuestWasm with 24 more (unused) types, so that
// type index 28 exists.
func reviewGuestWasm(spin []byte) []byte {
	m := meterGuestWasm(spin, false)
	// The type section is the first section: id 1, size (1 byte), count 5.
	if m[8] != 1 || m[9] >= 0x80 {
		panic("layout")
	}
	size := int(m[9])
	types := append([]byte{29}, m[11:10+size]...)
	for i := int(m[10]); i < 29; i++ {
		types = append(types, 0x60, 2, 0x7f, 0x7f, 0)
	}
	out := append([]byte(nil), m[:8]...)
	out = append(out, 1)
	n := len(types)
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	out = append(out, byte(n))
	out = append(out, types...)
	return append(out, m[10+size:]...)
}

var hiddenLoopSpin = func() []byte {
	b := []byte{
		0x41, 0, 0x41, 0, 0x41, 0, 0x41, 0, 0x41, 0,
		0x1c, 0x01, 0x63, 0x1c, // validator: select (ref null 28); compiler and meter: select_t, then 0x1c again
		0x1a, 0x1a, 0x1a, // drop drop drop; the meter reads 0x1a as a count and skips 26 bytes
		0x03, 0x40, 0x0c, 0x00, 0x0b, // loop br 0 end
	}
	for i := 0; i < 19; i++ {
		b = append(b, 0x01)
	}
	return b
}()

func TestReviewSandboxHiddenLoop(t *testing.T) {
	refusedTypedRef(t, reviewGuestWasm(hiddenLoopSpin))
}

// compilerPanicWasm: wazero's validator reads select (ref null 32) then
// i32.eqz; wazevo reads select, then local.get 69, and panics on it.
func compilerPanicWasm() []byte {
	m := meterGuestWasm([]byte{0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x01, 0x63, 0x20, 0x45, 0x1a}, false)
	size := int(m[9])
	types := append([]byte{33}, m[11:10+size]...)
	for i := int(m[10]); i < 33; i++ {
		types = append(types, 0x60, 2, 0x7f, 0x7f, 0)
	}
	out := append([]byte(nil), m[:8]...)
	out = append(out, 1, byte(len(types)|0x80), byte(len(types)>>7))
	out = append(out, types...)
	return append(out, m[10+size:]...)
}

func TestReviewCompilerPanic(t *testing.T) {
	out := compilerPanicWasm()
	// Before the fix, wazevo panicked in a compile worker goroutine here
	// and the test process died.
	refusedTypedRef(t, out)
	ins, err := testHost.Inspect(context.Background(), out)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if len(ins.Problems) != 1 || !strings.Contains(ins.Problems[0], "typed function references are not accepted") {
		t.Fatalf("Inspect problems %q, want the typed function reference refusal", ins.Problems)
	}
}

func TestReviewSandboxSIMDHiddenLoop(t *testing.T) {
	spin := []byte{
		0x02, 0x40, 0x0c, 0x00, // block; br 0
		0xfd, 0x8c, 0x00, // wazero: i16x8.shr_s; unreachable. meter: v128.const, 16 bytes
		0x0b, 0x02, 0x40, 0x03, 0x40, 0x0c, 0x00, 0x0b, // end; block; loop br 0 end
		0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
		0x0b,
	}
	m, err := testHost.Module(context.Background(), meterGuestWasm(spin, false))
	if err != nil {
		t.Fatal(err)
	}
	// wazero's validator and compilers read the sub-opcode alike (one
	// byte); only the meter would not, so the module runs checked.
	if m.Metered {
		t.Error("metered: the meter accepted a SIMD sub-opcode it reads differently from wazero")
	}
	hostileStops(t, m)
}

// sections splits a module into (id, payload) pairs.
func reviewSections(m []byte) (ids []byte, payloads [][]byte) {
	pos := 8
	for pos < len(m) {
		id := m[pos]
		pos++
		var n, shift int
		for {
			b := m[pos]
			pos++
			n |= int(b&0x7f) << shift
			shift += 7
			if b < 0x80 {
				break
			}
		}
		ids = append(ids, id)
		payloads = append(payloads, m[pos:pos+n])
		pos += n
	}
	return
}

func reviewSection(id byte, p []byte) []byte {
	out := []byte{id}
	n := len(p)
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	return append(append(out, byte(n)), p...)
}

// The sleeper of TestMeteredSleeperStops, calling poll_oneoff through a
// table: the element segment's long-form type (0x63 0x23) hides ref.func
// of the import from the meter, and call_indirect is not followed by the
// fuel emptying a direct host call gets.
func TestReviewSandboxIndirectSleeper(t *testing.T) {
	spin := append([]byte(nil), sleepLoop[:19]...)
	spin = append(spin, 0x41, 0, 0x41, 0, 0x41, 1, 0xfc, 0x0c, 0x00, 0x00) // table.init 0 0
	spin = append(spin, 0x03, 0x40)
	spin = append(spin, sleepLoop[21:34]...)             // poll_oneoff's arguments
	spin = append(spin, 0x41, 0, 0x11, 0x05, 0x00, 0x1a) // call_indirect (type 5) table[0]; drop
	spin = append(spin, 0x0c, 0x00, 0x0b)
	m := meterGuestWasmWith(spin, false, true)
	ids, ps := reviewSections(m)
	out := append([]byte(nil), m[:8]...)
	for i, id := range ids {
		p := ps[i]
		if id == 1 {
			np := append([]byte{36}, p[1:]...)
			for k := int(p[0]); k < 36; k++ {
				np = append(np, 0x60, 0, 0)
			}
			p = np
		}
		if id == 10 { // element segment before the code
			seg := []byte{1, 0x05, 0x63, 0x23, 0x23, 0xd2, 0x00, 0x0b}
			for k := 0; k < 34; k++ {
				seg = append(seg, 0xd0, 0x70, 0x0b)
			}
			out = append(out, reviewSection(9, seg)...)
		}
		out = append(out, reviewSection(id, p)...)
		if id == 3 {
			out = append(out, reviewSection(4, []byte{1, 0x70, 0, 1})...) // table of 1 funcref
		}
	}
	refusedTypedRef(t, out)
}

// The checked path (a module the meter refuses) is screened too: the
// refusal comes before any compilation, not only before metering.
func TestTypedRefRefusedOnCheckedPath(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir, Spares: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	instrument = func([]byte) ([]byte, error) { return nil, fmt.Errorf("%w: injected", wasmmeter.ErrUnsupported) }
	defer func() { instrument = wasmmeter.Instrument }()
	_, err = h.Module(ctx, compilerPanicWasm())
	if !errors.Is(err, ErrABI) || !errors.Is(err, wasmmeter.ErrTypedRef) {
		t.Fatalf("Module = %v, want ErrABI and wasmmeter.ErrTypedRef", err)
	}
}
