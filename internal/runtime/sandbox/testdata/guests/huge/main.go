//go:build wasip1

// Command huge is a hostile test guest: plasm_ping("hostile") returns a 2 MiB output.
// Any other message is echoed like the standard engine's plasm_ping.
package main

import (
	"unsafe"
)

var input, output []byte

func main() {}

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 {
	if uint64(cap(input)) < uint64(max(size, 1)) {
		input = make([]byte, max(size, 1))
	}
	input = input[:cap(input)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

func respond(msg []byte) uint64 {
	output = append(append(output[:0], 0), msg...)
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(output))))<<32 | uint64(len(output))
}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport plasm_ping
func ping(n uint32) uint64 {
	msg := input[:n]
	if string(msg) == "hostile" {
		big := make([]byte, 2<<20)
		return respond(big)
	}
	return respond(msg)
}
