package oldmeter

import (
	"errors"
	"fmt"
)

// ErrTooLarge: the module declares (or could grow at run time) tables,
// globals or segments whose host-side bookkeeping would be far larger than
// the module itself. wazero v1.12 keeps those in Go memory, outside the
// linear memory that Limits.MemoryBytes bounds, and allocates most of them
// again for every instance; measured with bare wazero, one 17-byte module
// declaring a table of 2^27 funcref elements costs ~1 GB of Go heap per
// instance. Screen refuses such modules before any compilation.
var ErrTooLarge = errors.New("wasmmeter: module would make the host allocate too much memory")

// Caps on what a module may declare, counted over imports and definitions
// together. Each is far above what the Go toolchain (GOOS=wasip1) emits
// for the engine and the demo vendor module (figures of Nov 2026: engine
// 6.0 MB, ledger 3.6 MB), so only a module built to exhaust the host meets
// them. The per-instance costs are wazero v1.12's, measured with a probe.
const (
	// MaxTables: Go emits one table (the funcref table of indirect
	// calls). wazero accepts up to 2^27 elements per table; three million
	// empty tables cost ~220 MB per instance.
	MaxTables = 4
	// MaxTableElements bounds the sum of the tables' minimum sizes
	// (8 bytes of host memory each per instance: 8 MB at the cap). Go
	// emits one table of a few thousand (engine 7,321, ledger 6,412).
	// Declared maximums are not counted: table.grow is refused (see
	// screenBody), so no table outgrows its minimum.
	MaxTableElements = 1 << 20
	// MaxGlobals: Go emits 8. Two million i32 globals (10 MB) cost
	// ~250 MB at compile and 30-60 MB per instance.
	MaxGlobals = 1 << 14
	// MaxElementSegments: Go emits one active segment. Three million
	// empty passive segments (9 MB) cost ~200 MB at compile and ~65 MB
	// per instance.
	MaxElementSegments = 1 << 12
	// MaxSegmentElements bounds the elements of all element segments
	// together: a passive segment is copied into every instance, ~40
	// bytes an element (3 million: ~115 MB per instance). Go emits a few
	// thousand (engine 3,225, ledger 2,316).
	MaxSegmentElements = 1 << 18
	// MaxDataSegments: each costs ~22 bytes per instance however empty
	// (3 million: ~65 MB per instance). Go emits one per static datum:
	// engine 56,659, ledger 40,079, so the cap leaves ~4x room for the
	// engine to grow (~6 MB per instance at the cap). The bytes of data
	// segments are not capped: wazero shares them with the compiled
	// module, so they are bounded by the module's own size.
	MaxDataSegments = 1 << 18
	// MaxFunctionLocals bounds the locals one function declares (its
	// parameters are not counted). wazero v1.12 sizes a slice by the
	// declared sum before reading a local, and its interpreter (the
	// validating runtime) compiles per local: measured, 2^16 locals in
	// one function cost ~25 MB of Go heap to compile, 2^20 ~435 MB, and a
	// 30-byte module declaring 2^32-1 crashes the process out of memory.
	// Go emits at most 20 per function (engine and ledger alike); at the
	// cap one function costs ~1 MB.
	MaxFunctionLocals = 1 << 12
	// MaxModuleLocals bounds the locals of all functions together. Go
	// emits 14,947 in the engine (3,247 functions) and 9,402 in the
	// ledger (2,316), so the cap leaves ~17x room; 64 functions of 4,096
	// locals (the cap) cost ~17 MB to compile with the interpreter,
	// ~2 MB with the compiler. Sums are uint64: no declared count wraps.
	MaxModuleLocals = 1 << 18
)

// caps counts, while Screen reads a module, what the Max constants bound.
type caps struct {
	tables, tableElems, globals, elemSegs, segElems, dataSegs, locals uint64
	// bodies counts the function bodies read; slack is how many locals
	// past the caps each may declare (see screen).
	bodies, slack uint64
}

// add adds n to *count and refuses the module once it passes max; at is
// the module byte of the declaration that did.
func add(count *uint64, n uint64, max uint64, what string, at int) error {
	*count += n
	if *count > max {
		return fmt.Errorf("%w: %d %s, at most %d are accepted, at module byte %d", ErrTooLarge, *count, what, max, at)
	}
	return nil
}
