package sandbox

import (
	"context"
	"fmt"
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
