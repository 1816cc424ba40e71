//go:build wasip1

// Command gowork exports internal/gowork's workloads to BenchmarkGoWasm,
// built as a wasip1 reactor the way plasmd's engine is.
package main

import "github.com/plasmd/plasmd/bench/internal/gowork"

// main is never run in a reactor; the Go toolchain still requires it.
func main() {}

//go:wasmexport gowork_run
func run(kind, n uint32) uint64 { return gowork.Run(int(kind), int(n)) }
