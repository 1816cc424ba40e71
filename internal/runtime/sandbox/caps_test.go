package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// hugeTableWasm is 17 bytes declaring one funcref table of 2^27 elements:
// wazero v1.12 would allocate ~1 GB of Go heap for it in every instance.
func hugeTableWasm() []byte {
	return []byte{
		0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
		0x04, 0x07, // table section, 7 bytes
		0x01, 0x70, 0x00, 0x80, 0x80, 0x80, 0x40, // one funcref table, min 2^27, no max
	}
}

// TestHugeTableRefused: Module refuses the module with ErrTooLarge before
// compiling it, on the metered and the checked path, and the host's heap
// does not grow by the gigabyte the table would take.
func TestHugeTableRefused(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	checked, err := New(ctx, Config{CacheDir: testCacheDir, Spares: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer checked.Close(ctx)
	wasm := hugeTableWasm()
	if len(wasm) != 17 {
		t.Fatalf("module is %d bytes", len(wasm))
	}
	for name, h := range map[string]*Host{"metered": testHost, "checked": checked} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			m, err := h.Module(ctx, wasm)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrABI) || !errors.Is(err, wasmmeter.ErrTooLarge) {
				t.Fatalf("Module = %v, %v; want ErrABI and wasmmeter.ErrTooLarge", m, err)
			}
			if !strings.Contains(err.Error(), "refused before compilation") || !strings.Contains(err.Error(), "at module byte 11") {
				t.Fatalf("Module = %v: want the screen's refusal naming module byte 11", err)
			}
			// Everything allocated meanwhile, freed or not: a few KB for the
			// refusal; the table alone would be 1 GB. The bound leaves room
			// for the test host's own background work.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Fatalf("Module allocated %d MB refusing a 17-byte module", grew>>20)
			}
		})
	}
}

// TestInspectHugeTable: `plasmd module check` lists the refusal as a
// problem in words, not as an unreadable module.
func TestInspectHugeTable(t *testing.T) {
	ins, err := testHost.Inspect(context.Background(), hugeTableWasm())
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	want := fmt.Sprintf("134217728 table elements (the tables' minimum sizes together), at most %d are accepted", wasmmeter.MaxTableElements)
	if len(ins.Problems) != 1 || !strings.Contains(ins.Problems[0], want) ||
		!strings.Contains(ins.Problems[0], "would make the host allocate too much memory") {
		t.Fatalf("Inspect problems %q, want %q", ins.Problems, want)
	}
	t.Log(ins.Problems[0])
}
