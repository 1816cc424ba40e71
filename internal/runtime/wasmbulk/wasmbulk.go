// Package wasmbulk inlines short constant-length bulk memory operations
// of a Go-compiled Wasm module: the load-time preparation of our own
// engine that replaces `memory.copy` and `memory.fill` of a small
// constant length with straight-line loads and stores.
//
// Why: Go's wasm backend emits every struct copy over 16 bytes as
// `dst src i32.const N memory.copy 0 0` (OpWasmLoweredMove) and every
// zeroing over 32 bytes as `dst i32.const 0 i32.const N memory.fill 0`
// (OpWasmLoweredZero; cmd/compile/internal/wasm/ssa.go). wazero v1.12's
// optimizing compiler turns each memory.copy into a call out to Go's
// runtime.memmove that spills the caller's registers, and each
// memory.fill into a loop of such calls on doubling chunks (wazevo's
// frontend/lower.go, OpcodeMiscMemoryCopy/Fill). A plan makes thousands of
// them; natively each is a few word moves.
//
// What is rewritten: an `i32.const N` (minimally encoded, 1 <= N <= the
// bound) directly followed by `memory.copy 0 0` or `memory.fill 0` (the
// bytes fc 0a 00 00 and fc 0b 00, as Go writes them). The operands are
// popped into fresh locals added to that function (two i32, and an i64
// for a fill whose value is not the constant 0 right before), then the N
// bytes are moved by i64 loads and stores, with i32, i16 and i8 ones for
// the tail, at memarg offsets 0..N-1: the piece ending at N first, then
// the others forward. wazero checks the bounds of the first access and,
// knowing [addr, addr+N) safe, elides the checks of the others (see
// pieces). Every other byte of the module is kept: other sections, and
// functions without such a site, are copied as they are.
//
// Semantics, for the modules it is meant for (Go's output):
//   - Overlap: memory.copy is a memmove; a copy in pieces is one only when
//     the ranges do not partially overlap. Go guarantees that of every
//     Move it lowers: cmd/compile/internal/ssa/_gen/genericOps.go ("Normally
//     we require that the source and destination of Move do not overlap"),
//     whose one exception (memmove inlined as a Move, where all loads must
//     come before all stores) is never taken on wasm: isInlinableMemmove in
//     ssa/rewrite.go returns false for GOARCH=wasm. Go's memmove itself
//     (runtime/memmove_wasm.s) uses a non-constant length and is left
//     alone. A module not written by Go may rely on memmove semantics:
//     never rewrite one (uploaded modules are not rewritten).
//   - Traps: with N >= 1 the pieces cover [dst, dst+N) and [src, src+N)
//     exactly, with 33-bit effective addresses like memory.copy's bounds
//     check, so the rewrite traps exactly when the original does. The
//     first piece is the one that reaches N, so a trap comes before any
//     store, and like memory.copy a trapping copy stores nothing; were it
//     otherwise, a trapped engine instance is discarded (the sandbox never
//     reuses it), so partial writes would not be observed either. N = 0 is
//     not rewritten: memory.copy traps on an out-of-range address even
//     then, and no load or store would.
//
// Input is hostile in principle (the fuzz test feeds anything): a module
// it cannot read is ErrMalformed, a shape it does not rewrite (SIMD or
// other instructions outside WebAssembly 2.0's scalar set, long-form
// types) is ErrUnsupported; the caller then keeps the original bytes.
// Sections and instructions are read by wasmbin (EachSection, and the
// shared Decoder in the reading described at decoder), the same code the
// meter and Screen read with; this package owns only the rewrite.
package wasmbulk

import (
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// Errors Inline returns; the module is then to be used as it is.
var (
	// ErrMalformed is wasmbin.ErrMalformed: bytes Inline cannot read.
	ErrMalformed = wasmbin.ErrMalformed
	// ErrUnsupported: well-formed bytes Inline does not rewrite.
	ErrUnsupported = errors.New("module not inlinable")
)

// Stats counts what Inline rewrote.
type Stats struct {
	Copies, Fills int // sites inlined
	Functions     int // function bodies changed
}

const (
	sectionType     = 1
	sectionFunction = 3
	sectionCode     = 10

	opLocalGet = 0x20
	opLocalSet = 0x21
	opI32Const = 0x41
	opI64Const = 0x42
	opI32And   = 0x71
	opI64Mul   = 0x7e
	opI32Wrap  = 0xa7
	opI64ExtU  = 0xad
	prefixMisc = 0xfc
	miscCopy   = 0x0a
	miscFill   = 0x0b
	typeI32    = 0x7f
	typeI64    = 0x7e
	typeFunc   = 0x60
	splat64    = 0x0101010101010101
)

// MaxLen caps Inline's bound: the inlined code grows with the length.
const MaxLen = 4096

// Inline returns module with every memory.copy and memory.fill of a
// constant length from 1 to maxLen (at most MaxLen) inlined, as the
// package comment describes. With nothing to inline it returns module
// itself.
func Inline(module []byte, maxLen uint32) ([]byte, Stats, error) {
	var st Stats
	maxLen = min(maxLen, MaxLen)
	var params []uint32 // per type
	var funcs []uint32  // type index per defined function
	var code wasmbin.Section
	found := false
	err := wasmbin.EachSection(module, func(s wasmbin.Section) error {
		var err error
		switch s.ID {
		case sectionType:
			if params, err = readTypes(&s.Payload); err != nil {
				return fmt.Errorf("type section: %w", err)
			}
		case sectionFunction:
			if funcs, err = readFunctions(&s.Payload); err != nil {
				return fmt.Errorf("function section: %w", err)
			}
		case sectionCode:
			if found {
				return fmt.Errorf("%w: two code sections", ErrMalformed)
			}
			found, code = true, s
		}
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	if !found {
		return module, st, nil
	}
	payload, err := rewriteCode(&code.Payload, params, funcs, maxLen, &st)
	if err != nil {
		return nil, st, fmt.Errorf("code section: %w", err)
	}
	if st.Functions == 0 {
		return module, st, nil
	}
	if uint64(len(payload)) > 1<<32-1 {
		return nil, st, fmt.Errorf("%w: code section of %d bytes", ErrUnsupported, len(payload))
	}
	return code.Replace(module, payload), st, nil
}

func readTypes(r *wasmbin.Reader) ([]uint32, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(r.Left())/3 { // a type takes at least 3 bytes
		return nil, fmt.Errorf("%w: %d types in %d bytes", ErrMalformed, n, r.Left())
	}
	out := make([]uint32, 0, n)
	for range n {
		at := r.Pos
		if b, err := r.Byte(); err != nil {
			return nil, err
		} else if b != typeFunc {
			return nil, fmt.Errorf("%w: type form %#x at module byte %d", ErrUnsupported, b, r.Offset(at))
		}
		var np uint32
		for i := range 2 { // params, then results: one byte per value type
			k, err := r.U32()
			if err != nil {
				return nil, err
			}
			ts, err := r.Bytes(k)
			if err != nil {
				return nil, err
			}
			for _, t := range ts {
				if t < 0x6f || t > 0x7f { // long-form reference types
					return nil, fmt.Errorf("%w: value type %#x in type at module byte %d", ErrUnsupported, t, r.Offset(at))
				}
			}
			if i == 0 {
				np = k
			}
		}
		out = append(out, np)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the last type", ErrMalformed)
	}
	return out, nil
}

func readFunctions(r *wasmbin.Reader) ([]uint32, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(r.Left()) {
		return nil, fmt.Errorf("%w: %d functions in %d bytes", ErrMalformed, n, r.Left())
	}
	out := make([]uint32, 0, n)
	for range n {
		t, err := r.U32()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the last function", ErrMalformed)
	}
	return out, nil
}

// rewriteCode returns the code section's new payload.
func rewriteCode(r *wasmbin.Reader, params, funcs []uint32, maxLen uint32, st *Stats) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	if int(n) != len(funcs) {
		return nil, fmt.Errorf("%w: %d bodies for %d functions", ErrMalformed, n, len(funcs))
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(r.Buf)+len(r.Buf)/8), n)
	var fb bodyRewriter
	for i, t := range funcs {
		if int(t) >= len(params) {
			return nil, fmt.Errorf("%w: function %d has type %d of %d", ErrMalformed, i, t, len(params))
		}
		size, err := r.U32()
		if err != nil {
			return nil, err
		}
		body, err := r.Sub(size)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		nb, changed, err := fb.rewrite(&body, params[t], maxLen, st)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		if !changed {
			nb = body.Buf
		} else {
			st.Functions++
		}
		out = wasmbin.AppendU32(out, uint32(len(nb)))
		out = append(out, nb...)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the last function body", ErrMalformed)
	}
	return out, nil
}
