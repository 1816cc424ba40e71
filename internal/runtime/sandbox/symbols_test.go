package sandbox

import (
	"context"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// TestPlanSendsSymbolsOnce checks through the engine module that a plan
// call names the session's symbol map by digest and carries the map only
// when the instance does not hold it yet: the first call on a fresh
// instance takes two guest entries (refused, then sent with the map), the
// next ones one, and each resolves the map's symbols.
func TestPlanSendsSymbolsOnce(t *testing.T) {
	ctx := context.Background()
	obs := &exportCounter{n: map[string]int{}}
	lim := DefaultLimits()
	lim.MaxInstances = 1
	eng := demoEngine(t, obs, "sym", lim)

	var sm symbol.Map
	sm.Add(symbol.Wave{Entities: []symbol.Entity{{EntryID: "tracker", Name: "Issue"}}})
	sym, err := EncodeSymbols(&sm)
	if err != nil {
		t.Fatal(err)
	}
	req := &abi.PlanRequest{Program: `e1("iss-1")`, Entries: []string{"tracker"}}
	for i, want := range []int{2, 3, 4} {
		p, err := eng.PlanWith(ctx, req, sym)
		if err != nil {
			t.Fatalf("plan %d: %v", i, err)
		}
		if len(p.Nodes) != 1 || p.Nodes[0].Entity != "Issue" {
			t.Fatalf("plan %d: e1 did not resolve to Issue: %+v", i, p.Nodes)
		}
		if n := obs.count(abi.ExportPlan); n != want {
			t.Fatalf("after plan %d: %d plasm_plan entries, want %d", i, n, want)
		}
	}
	// Without symbols the same program is an unknown entity, not a retry.
	if _, err := eng.PlanWith(ctx, req, nil); err == nil {
		t.Fatal("e1 resolved without a symbol map")
	}
	if n := obs.count(abi.ExportPlan); n != 5 {
		t.Fatalf("%d plasm_plan entries, want 5", n)
	}
}
