package sandbox

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

func bombSect(id byte, p []byte) []byte {
	return append(append([]byte{id}, wasmbin.AppendU32(nil, uint32(len(p)))...), p...)
}

// localsBomb is the reviewer's module (H2, 30 bytes): one function
// declaring 2^32-1 i32 locals in one declaration. wazero v1.12 would
// size a slice by the count and its interpreter compile per local.
func localsBomb() []byte {
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	m = append(m, bombSect(1, []byte{1, 0x60, 0, 0})...)
	m = append(m, bombSect(3, []byte{1, 0})...)
	body := append(append([]byte{1}, wasmbin.AppendU32(nil, 1<<32-1)...), 0x7f, 0x0b)
	return append(m, bombSect(10, append([]byte{1}, append(wasmbin.AppendU32(nil, uint32(len(body))), body...)...))...)
}

// namesBomb is the reviewer's 24-byte module (H1): only a "name" custom
// section whose local-names subsection says function 0 has 2^32-1 local
// names. wazero v1.12 would make a map of that many entries (~96 GB).
func namesBomb() []byte {
	sub := append([]byte{1, 0}, wasmbin.AppendU32(nil, 1<<32-1)...)
	p := append([]byte{4, 'n', 'a', 'm', 'e', 2}, wasmbin.AppendU32(nil, uint32(len(sub)))...)
	return append([]byte{0, 'a', 's', 'm', 1, 0, 0, 0}, bombSect(0, append(p, sub...))...)
}

// bombs are modules of a few bytes that would make wazero allocate
// gigabytes (or crash the process out of memory) while decoding them.
var bombs = []struct {
	name string
	wasm func() []byte
	size int
	at   string // the module byte the refusal names
}{
	{"one table of 2^27 elements", hugeTableWasm, 17, "at module byte 11"},
	{"2^32-1 local names", namesBomb, 24, "at module byte 19"},
	{"2^32-1 locals", localsBomb, 30, "at module byte 23"},
}

// TestBombsRefused: Host.Module (metered and checked hosts) and
// Host.Inspect refuse each bomb with ErrTooLarge before compiling it,
// allocating next to nothing. Screen's refusal is asserted first: if it
// ever regressed, the test fails there instead of handing the bomb to
// wazero and crashing the test process.
func TestBombsRefused(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	checked, err := New(ctx, Config{CacheDir: testCacheDir, Spares: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer checked.Close(ctx)
	// The checked host asks TrustedEngine before the screen (a trusted
	// module met in the meter memo skips it); its digests are computed
	// once per process, inlining the engine, which is not the bomb's doing.
	TrustedEngine("")
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			wasm := b.wasm()
			if len(wasm) != b.size {
				t.Fatalf("module is %d bytes, want %d", len(wasm), b.size)
			}
			if err := wasmmeter.Screen(wasm); !errors.Is(err, wasmmeter.ErrTooLarge) || !strings.Contains(err.Error(), b.at) {
				t.Fatalf("Screen = %v, want ErrTooLarge %s (not compiling the bomb)", err, b.at)
			}
			for name, h := range map[string]*Host{"metered": testHost, "checked": checked} {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				m, err := h.Module(ctx, wasm)
				ins, ierr := h.Inspect(ctx, wasm)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrABI) || !errors.Is(err, wasmmeter.ErrTooLarge) ||
					!strings.Contains(err.Error(), "refused before compilation") || !strings.Contains(err.Error(), b.at) {
					t.Fatalf("%s: Module = %v, %v; want the screen's ErrTooLarge %s", name, m, err, b.at)
				}
				if ierr != nil || len(ins.Problems) != 1 || !strings.Contains(ins.Problems[0], "too much memory") ||
					!strings.Contains(ins.Problems[0], b.at) {
					t.Fatalf("%s: Inspect = %+v, %v; want one ErrTooLarge problem %s", name, ins, ierr, b.at)
				}
				// Everything allocated meanwhile, freed or not, with room for
				// the test host's background work: the bombs ask for gigabytes.
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
					t.Fatalf("%s: refusing a %d-byte module allocated %d MB", name, len(wasm), grew>>20)
				}
			}
		})
	}
}

// TestGoModulesRunMetered: the engine and the demo vendor module pass the
// caps and load metered.
func TestGoModulesRunMetered(t *testing.T) {
	ledger, err := os.ReadFile("../../../demo/catalogs/ledger/module.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for name, wasm := range map[string][]byte{"engine": enginewasm.Wasm, "ledger": ledger} {
		m, err := testHost.Module(context.Background(), wasm)
		if err != nil {
			t.Fatalf("%s: Module = %v", name, err)
		}
		if !m.Metered {
			t.Errorf("%s: not metered", name)
		}
	}
}
