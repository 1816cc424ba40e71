package wasmdata_test

import (
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
)

// BenchmarkMerge merges the engine's data section (some 55,000 segments),
// as the server does once per process before compiling the engine.
func BenchmarkMerge(b *testing.B) {
	wasm := enginewasm.Wasm
	b.SetBytes(int64(len(wasm)))
	for range b.N {
		if _, _, _, err := wasmdata.Merge(wasm, enginewasm.MaxDataGap); err != nil {
			b.Fatal(err)
		}
	}
}
