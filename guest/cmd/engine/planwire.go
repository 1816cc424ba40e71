//go:build wasip1 && !plasmd_noplanwire

package main

import "github.com/plasmd/plasmd/guest/abi"

// The plasm_plan_wire export tells a host that plan headers may ask for
// the binary plan form. Building with -tags plasmd_noplanwire leaves it
// out, which is how the sandbox's tests get an engine that a host must
// treat as one from before the binary form (TestPlanWireCompat).

//go:wasmexport plasm_plan_wire
func planWire(n uint32) uint64 { return handle(abi.ExportPlanWire, n) }
