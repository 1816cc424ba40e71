//go:build wasip1

// Command initloop is a hostile test guest whose package initialisation
// never ends, so instantiating it (the module's _initialize) must fail with
// a deadline rather than hold a slot forever.
package main

var spins uint64

func init() {
	for {
		spins++
	}
}

func main() {}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 { return 0 }

//go:wasmexport plasm_ping
func ping(size uint32) uint64 { return 0 }
