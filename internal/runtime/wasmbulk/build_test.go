package wasmbulk

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// Hand-built test modules: one memory of one page exported as "mem", and
// one function "run" (d, s, v i32) with the given instructions as its body
// (without the final end) and locals (the encoded declarations after their
// count, groups of them).

func sect(id byte, payload []byte) []byte {
	return append(wasmbin.AppendU32([]byte{id}, uint32(len(payload))), payload...)
}

func testModule(body []byte, groups uint32, decls []byte) []byte {
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	m = append(m, sect(1, []byte{1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0})...) // (i32 i32 i32) → ()
	m = append(m, sect(3, []byte{1, 0})...)
	m = append(m, sect(5, []byte{1, 0, 1})...) // memory: min 1 page
	exports := []byte{2, 3, 'm', 'e', 'm', 2, 0, 3, 'r', 'u', 'n', 0, 0}
	m = append(m, sect(7, exports)...)
	fn := wasmbin.AppendU32(nil, groups)
	fn = append(fn, decls...)
	fn = append(fn, body...)
	fn = append(fn, 0x0b)
	code := append([]byte{1}, wasmbin.AppendU32(nil, uint32(len(fn)))...)
	return append(m, sect(10, append(code, fn...))...)
}

// Instruction snippets.
func i32c(v int32) []byte { return wasmbin.AppendS32([]byte{opI32Const}, v) }
func get(i uint32) []byte { return wasmbin.AppendU32([]byte{opLocalGet}, i) }
func memCopy() []byte     { return []byte{prefixMisc, miscCopy, 0, 0} }
func memFill() []byte     { return []byte{prefixMisc, miscFill, 0} }
func cat(parts ...[]byte) (b []byte) {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// copyAt is memory.copy(d+dOff, s+sOff, n) with d, s the parameters.
func copyAt(dOff, sOff, n int32) []byte {
	return cat(get(0), i32c(dOff), []byte{0x6a}, get(1), i32c(sOff), []byte{0x6a}, i32c(n), memCopy())
}

// zeroAt is Go's zeroing: memory.fill(d+off, 0, n).
func zeroAt(off, n int32) []byte {
	return cat(get(0), i32c(off), []byte{0x6a}, i32c(0), i32c(n), memFill())
}

// fillAt is memory.fill(d+off, v, n) with v the third parameter.
func fillAt(off, n int32) []byte {
	return cat(get(0), i32c(off), []byte{0x6a}, get(2), i32c(n), memFill())
}

// compiles fails t unless wazero's optimizing compiler takes m.
func compiles(t testing.TB, m []byte) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, m); err != nil {
		t.Fatalf("wazero refuses the module: %v", err)
	}
}
