package engine

import (
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// A plan header that asks for the engine's wire version gets the binary
// form; any other (none: an older host; another version: a newer one)
// gets JSON, and both decode to the same plan.
func TestPlanWireAnswer(t *testing.T) {
	e := loaded(t)
	frame := func(wire int) []byte {
		h := abi.AppendPlanHeader(nil, &abi.PlanRequest{Program: "a = Item.limit(2)[name]\na, Item(\"a1\")", Entries: []string{"shop"}, PlanWire: wire})
		return abi.AppendFrameRaw(nil, h, nil)
	}
	ok, js := call(e, abi.ExportPlan, frame(0))
	if !ok || js[0] != '{' {
		t.Fatalf("plan without PlanWire: ok %v, %q", ok, js)
	}
	var want plan.Plan
	if err := abi.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	ok, bin := call(e, abi.ExportPlan, frame(plan.WireVersion))
	if !ok || bin[0] != plan.WireTag {
		t.Fatalf("plan with PlanWire %d: ok %v, first byte %#x", plan.WireVersion, ok, bin[0])
	}
	got, err := plan.DecodeBinary(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("binary plan %+v\nJSON plan %+v", got, &want)
	}
	if ok, other := call(e, abi.ExportPlan, frame(plan.WireVersion+1)); !ok || string(other) != string(js) {
		t.Fatalf("plan with another wire version: ok %v, %q; want the JSON answer", ok, other)
	}
	var v int
	if wantOK(t, e, abi.ExportPlanWire, nil, &v); v != plan.WireVersion {
		t.Fatalf("%s answered %d, want %d", abi.ExportPlanWire, v, plan.WireVersion)
	}
}
