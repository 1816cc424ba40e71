//go:build wasip1

// Command badversion is a hostile test guest: it reports ABI version 99.
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
func abiVersion() int32 { return 99 }

//go:wasmexport plasm_ping
func ping(n uint32) uint64 {
	msg := input[:n]
	if string(msg) == "hostile" {
		return respond(nil)
	}
	return respond(msg)
}
