//go:build wasip1

// Command extismecho is the Extism side of the call-overhead benchmark: an
// Extism plugin whose "echo" export returns its input unchanged, the same
// contract as plasmd's plasm_ping. It is built with the standard Go
// toolchain (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared) and talks to the
// Extism kernel through its raw imports, because Extism's Go PDK is not
// available to this module. The copy loops move eight bytes per kernel
// call, the way a PDK-based plugin does, so the benchmark charges Extism
// for the host round trips a real plugin would make.
package main

import "encoding/binary"

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func kernelAlloc(size uint64) uint64

//go:wasmimport extism:host/env store_u64
func storeU64(offset, value uint64)

//go:wasmimport extism:host/env store_u8
func storeU8(offset uint64, value uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset, length uint64)

// buf is reused across calls: one instance serves one call at a time, and
// reusing it keeps the guest's own allocation out of the measurement.
var buf []byte

// main is never run in a reactor; the Go toolchain still requires it.
func main() {}

//go:wasmexport echo
func echo() int32 {
	n := inputLength()
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]

	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], inputLoadU64(i))
	}
	for ; i < n; i++ {
		buf[i] = byte(inputLoadU8(i))
	}

	out := kernelAlloc(n)
	i = 0
	for ; i+8 <= n; i += 8 {
		storeU64(out+i, binary.LittleEndian.Uint64(buf[i:]))
	}
	for ; i < n; i++ {
		storeU8(out+i, uint32(buf[i]))
	}
	outputSet(out, n)
	return 0
}
