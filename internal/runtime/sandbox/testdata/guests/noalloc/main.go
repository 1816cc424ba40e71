//go:build wasip1

// Command noalloc is a test guest that omits plasm_alloc, so the host must
// refuse it when the module is registered.
package main

func main() {}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport plasm_ping
func ping(n uint32) uint64 { return 0 }
