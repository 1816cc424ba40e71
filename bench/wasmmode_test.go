package bench

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// wasmMode is how a calibration guest (BenchmarkGoWasm, BenchmarkRustWasm)
// is made interruptible: not at all, by wazero's check at every loop
// header, or by plasmd's own meter, which is how the server runs the
// engine and vendor modules. The three side by side split a guest's cost
// into what its compiler costs under wazero and what interruption adds.
type wasmMode int

const (
	modeBare wasmMode = iota
	modeChecked
	modeMetered
)

var wasmModes = []struct {
	name string
	mode wasmMode
}{{"wasm", modeBare}, {"wasm-checked", modeChecked}, {"wasm-metered", modeMetered}}

// instantiateMode instantiates wasm alone in a new runtime. A wasip1
// reactor (reactor true) gets WASI and its _initialize. The metered
// tick always refills: what is measured is the meter's checks, not a
// deadline. Runtimes live as long as the benchmark process.
func instantiateMode(ctx context.Context, wasm []byte, mode wasmMode, reactor bool) (api.Module, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(mode == modeChecked))
	if reactor {
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			return nil, err
		}
	}
	if mode == modeMetered {
		// The meter rewrites only modules wazero has validated.
		if _, err := rt.CompileModule(ctx, wasm); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
		metered, err := wasmmeter.Instrument(wasm)
		if err != nil {
			return nil, fmt.Errorf("meter: %w", err)
		}
		if err := wasmmeter.Verify(metered); err != nil {
			return nil, fmt.Errorf("meter: %w", err)
		}
		refill := api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) { stack[0] = 1 << 20 })
		_, err = rt.NewHostModuleBuilder(wasmmeter.ImportModule).NewFunctionBuilder().
			WithGoModuleFunction(refill, nil, []api.ValueType{api.ValueTypeI32}).
			Export(wasmmeter.ImportName).Instantiate(ctx)
		if err != nil {
			return nil, err
		}
		wasm = metered
	}
	cfg := wazero.NewModuleConfig()
	if reactor {
		cfg = cfg.WithStartFunctions("_initialize")
	}
	return rt.InstantiateWithConfig(ctx, wasm, cfg)
}
