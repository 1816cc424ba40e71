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

import _ "embed"

// Wasm is the standard engine module. Callers must not modify it.
//
//go:embed engine.wasm
var Wasm []byte
