package sandbox

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// planWire is the plan wire version to ask the tenant's engine for:
// plan.WireVersion when its module exports abi.ExportPlanWire, else 0, so
// an older engine (which refuses a header that asks) answers JSON as
// before.
func (e *Engine) planWire() int {
	t := e.Tenant
	t.mu.Lock()
	mod := t.module
	t.mu.Unlock()
	if mod != nil && mod.HasExport(abi.ExportPlanWire) {
		return plan.WireVersion
	}
	return 0
}

// decodePlan reads a plasm_plan answer in either form: the binary wire
// form starts with plan.WireTag, which no JSON text starts with. The
// binary decoder replaced encoding/json reflection here, which was ~15%
// of a sandboxed plan's CPU (docs/decisions.md).
func decodePlan(b []byte) (*plan.Plan, error) {
	if len(b) > 0 && b[0] == plan.WireTag {
		return plan.DecodeBinary(b)
	}
	var p plan.Plan
	if err := abi.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
