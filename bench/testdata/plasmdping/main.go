//go:build wasip1

// Command plasmdping is the smallest guest plasmd's sandbox accepts: the
// ABI version, the input allocator and plasm_ping, nothing else. It is the
// plasmd counterpart of testdata/extismecho, so the two hosts can be
// compared on guests of the same size and work, apart from the full engine.
package main

import (
	"unsafe"

	"github.com/plasmd/plasmd/guest/abi"
)

// input and output stay referenced between calls because the host writes
// into input and reads output after the export returns.
var input, output []byte

// main is never run in a reactor; the Go toolchain still requires it.
func main() {}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 {
	if n := max(uint64(size), 1); uint64(cap(input)) < n {
		input = make([]byte, n)
	}
	input = input[:cap(input)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

//go:wasmexport plasm_ping
func ping(n uint32) uint64 {
	if uint64(n) > uint64(len(input)) {
		// Only a host bug gets here; answer in-band, as the engine does.
		output = append(output[:0], abi.StatusError)
		output = append(output, `{"code":"bad_request","message":"input length exceeds the plasm_alloc buffer"}`...)
	} else {
		output = append(output[:0], abi.StatusOK)
		output = append(output, input[:n]...)
	}
	return abi.PackResult(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(output)))), uint32(len(output)))
}
