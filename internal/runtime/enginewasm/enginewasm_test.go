package enginewasm

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
)

// TestModuleMergesData: Module is the engine with a few dozen data
// segments, and it compiles and initialises (the reactor's _initialize
// runs the Go runtime over the merged data). The server suite runs every
// engine call on it.
func TestModuleMergesData(t *testing.T) {
	if _, before, after, err := wasmdata.Merge(Wasm, MaxDataGap); err != nil || before < 1000 || after > 100 {
		t.Fatalf("merge: %d → %d segments, %v", before, after, err)
	}
	if len(Module()) == len(Wasm) {
		t.Fatal("Module is the unmerged engine")
	}
	ctx := context.Background()
	// The server tests' compilation cache: compiling the engine takes
	// seconds, a minute under -race.
	cache, err := wazero.NewCompilationCacheWithDir(sandboxtest.CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cm, err := rt.CompileModule(ctx, Module())
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	if m.ExportedFunction("plasm_alloc") == nil {
		t.Fatal("no plasm_alloc export")
	}
}
