package engine

import (
	"bytes"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// TestPlansReuseScratch plans several programs, valid and not, in turn on
// one engine (whose planner reuses its buffers between calls) and requires
// each answer to be byte-identical to the same program's answer on a fresh
// engine.
func TestPlansReuseScratch(t *testing.T) {
	programs := []string{
		`Item("a1")`,
		"a = Item.limit(3)\nb = a[id, name]\nb, a",
		`Item.limit(2)[name]`,
		`Item{`,
		`Nope("x")`,
		"a = Item(\"a1\")\na[name]",
	}
	answer := func(e *Engine, program string) []byte {
		return bytes.Clone(e.Handle(abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: program, Entries: []string{"shop"}}, nil)))
	}
	want := make([][]byte, len(programs))
	for i, p := range programs {
		want[i] = answer(loaded(t), p)
	}
	e := loaded(t)
	for round := range 3 {
		for i, p := range programs {
			if got := answer(e, p); !bytes.Equal(got, want[i]) {
				t.Fatalf("round %d, %q on a reused engine:\n got %s\nwant %s", round, p, got, want[i])
			}
		}
	}
}
