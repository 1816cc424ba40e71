// Package enginewasm embeds the standard engine module: guest/cmd/engine
// compiled for wasip1 as a reactor (-buildmode=c-shared).
//
// engine.wasm is a build artefact that is committed so that a plain
// `go build ./cmd/plasmd` needs no wasm toolchain step. `make engine`
// rebuilds it with -trimpath and -buildvcs=false, which makes the bytes a
// pure function of the sources and the Go version: two machines with the same
// toolchain produce the same file. `make check-engine` (run by `make test`)
// rebuilds into a temporary file, compares the bytes, and fails with
// "engine.wasm is stale: run make engine" when the committed file no longer
// matches the guest sources.
package enginewasm

import (
	_ "embed"
	"sync"

	"github.com/plasmd/plasmd/internal/runtime/wasmbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
)

// Wasm is the standard engine module. Callers must not modify it.
//
//go:embed engine.wasm
var Wasm []byte

// MaxDataGap is the longest run of zeros between two data segments that
// Module merges over: under a page, so merged zeros only ever land in
// pages the data touches anyway.
const MaxDataGap = 64

// MaxInlineBulk is the longest constant-length memory.copy or
// memory.fill that Module inlines (see wasmbulk).
const MaxInlineBulk = 256

// Module returns the engine module to run: Wasm with its data segments
// merged (see wasmdata), the same initial memory from about 20 segments
// instead of 55,000, which saves wazero 1.3 MiB of segment headers in
// every live instance; then with its short constant-length memory.copy
// and memory.fill (Go's struct copies and zeroings) inlined as loads and
// stores (see wasmbulk), which wazero would otherwise compile to calls
// into Go's memmove. Callers must not modify it. Should a step ever not
// apply, its input is kept: at worst Module is Wasm itself.
var Module = sync.OnceValue(func() []byte {
	out, _, _, err := wasmdata.Merge(Wasm, MaxDataGap)
	if err != nil {
		out = Wasm
	}
	if inlined, _, err := wasmbulk.Inline(out, MaxInlineBulk); err == nil {
		out = inlined
	}
	return out
})
