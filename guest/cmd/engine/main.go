//go:build wasip1

// Command engine is the standard plasmd engine compiled as a wasip1 reactor
// (-buildmode=c-shared). It exposes guest/engine through the exports that
// guest/abi describes; runtime/enginewasm embeds the built module and
// runtime/sandbox runs it.
//
// One instance serves one call at a time, so the package-level buffers
// below need no locking. They stay referenced between calls on purpose:
// the host writes requests into input directly and reads the last output
// after the call returns, so neither may be collected or moved in between.
package main

import (
	"unsafe"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine"
)

var (
	eng = engine.New()
	// input is the buffer plasm_alloc hands out; the host reuses it until a
	// request outgrows it.
	input []byte
	// output is the last envelope, kept alive until the next call.
	output []byte
)

// main is never run in a reactor; the Go toolchain still requires it.
func main() {}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 {
	// At least one byte, so the returned pointer always points into memory.
	if n := max(uint64(size), 1); uint64(cap(input)) < n {
		input = make([]byte, n)
	}
	input = input[:cap(input)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

//go:wasmexport plasm_ping
func ping(n uint32) uint64 { return handle(abi.ExportPing, n) }

//go:wasmexport plasm_load_catalog
func loadCatalog(n uint32) uint64 { return handle(abi.ExportLoadCatalog, n) }

//go:wasmexport plasm_plan
func planProgram(n uint32) uint64 { return handle(abi.ExportPlan, n) }

//go:wasmexport plasm_compile
func compileRequest(n uint32) uint64 { return handle(abi.ExportCompile, n) }

//go:wasmexport plasm_template
func templateRequest(n uint32) uint64 { return handle(abi.ExportTemplate, n) }

//go:wasmexport plasm_decode
func decodeResponse(n uint32) uint64 { return handle(abi.ExportDecode, n) }

//go:wasmexport plasm_decode_spec
func decodeSpec(n uint32) uint64 { return handle(abi.ExportDecodeSpec, n) }

func handle(export string, n uint32) uint64 {
	if uint64(n) > uint64(len(input)) {
		// A length past the buffer is a host bug; answer with an error
		// envelope rather than reading memory the host never wrote.
		output = append(output[:0], abi.StatusError)
		output = append(output, `{"code":"bad_request","message":"input length exceeds the plasm_alloc buffer"}`...)
	} else {
		output = eng.Handle(export, input[:n])
	}
	if len(output) == 0 {
		return abi.PackResult(0, 0)
	}
	return abi.PackResult(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(output)))), uint32(len(output)))
}
