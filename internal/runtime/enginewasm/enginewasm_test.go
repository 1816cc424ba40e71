package enginewasm_test

import (
	"context"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
)

// TestModuleMergesData: Module is the engine with a few dozen data
// segments, and it compiles and initialises (the reactor's _initialize
// runs the Go runtime over the merged data). The server suite runs every
// engine call on it.
//
// It is loaded the way the server loads it, by a sandbox host (metered,
// instantiated, its ABI version called): the compiled code is then the
// very cache entry the other packages' tests use, where a bare wazero
// runtime compiled the unmetered bytes, an entry no other test reads and,
// cold under -race, minutes of CPU.
func TestModuleMergesData(t *testing.T) {
	if _, before, after, err := wasmdata.Merge(enginewasm.Wasm, enginewasm.MaxDataGap); err != nil || before < 1000 || after > 100 {
		t.Fatalf("merge: %d → %d segments, %v", before, after, err)
	}
	if len(enginewasm.Module()) == len(enginewasm.Wasm) {
		t.Fatal("Module is the unmerged engine")
	}
	ctx := context.Background()
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: sandboxtest.CacheDir(), Spares: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close(ctx)
	m, err := host.Module(ctx, enginewasm.Module())
	if err != nil {
		t.Fatalf("compile and initialise: %v", err)
	}
	if !m.Metered || m.ABIVersion != abi.Version || !m.HasExport(abi.ExportAlloc) {
		t.Fatalf("module: metered %v, ABI version %d, exports %v", m.Metered, m.ABIVersion, m.Exports)
	}
}
