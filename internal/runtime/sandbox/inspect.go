package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// Inspection describes a module for humans (plasmd module check): unlike
// Host.Module, which stops at the first problem, it collects every problem
// it can find, and it registers nothing.
type Inspection struct {
	Digest string
	// Exports are the exported functions with their signatures, sorted.
	Exports []Export
	// Imports are the imported functions ("module.name"), sorted.
	Imports []Export
	// Hooks are the vendor hooks the module exports (abi.Hook* names).
	Hooks []string
	// ABIVersion is what plasm_abi_version returned; HasABIVersion is false
	// when it could not be called.
	ABIVersion    int32
	HasABIVersion bool
	// Problems are reasons the host would refuse the module; empty means
	// the module is acceptable.
	Problems []string
}

// Export is a function name with its signature, e.g. "(i32)->(i64)".
type Export struct {
	Name      string
	Signature string
}

// inspectTimeout bounds instantiating the module and asking its version.
const inspectTimeout = 5 * time.Second

// Inspect compiles wasm and checks it against the ABI without registering
// it. An error is returned only when the bytes are not a module at all;
// everything else is a Problem.
func (h *Host) Inspect(ctx context.Context, wasm []byte) (*Inspection, error) {
	sum := sha256.Sum256(wasm)
	ins := &Inspection{Digest: hex.EncodeToString(sum[:])}
	if h.isClosed() {
		return nil, ErrClosed
	}
	if err := screen(wasm); err != nil {
		// Never compiled (see screen). Typed function references and
		// tables, globals or segments past the caps (ErrTooLarge) are
		// reasons to refuse a module; anything else unreadable is not one.
		if errors.Is(err, wasmmeter.ErrTypedRef) || errors.Is(err, wasmmeter.ErrTooLarge) {
			ins.Problems = append(ins.Problems, strings.TrimPrefix(err.Error(), ErrABI.Error()+": "))
			return ins, nil
		}
		return nil, fmt.Errorf("sandbox: compile module %s: %w", ins.Digest[:12], err)
	}
	compiled, rt, err := h.compileIn(ctx, false, ins.Digest, wasm)
	if err != nil {
		return nil, fmt.Errorf("sandbox: compile module %s: %w", ins.Digest[:12], err)
	}
	defer compiled.Close(context.Background())
	problem := func(err error) {
		ins.Problems = append(ins.Problems, strings.TrimPrefix(err.Error(), ErrABI.Error()+": "))
	}

	for _, imp := range compiled.ImportedFunctions() {
		mod, name, _ := imp.Import()
		ins.Imports = append(ins.Imports, Export{Name: mod + "." + name, Signature: signature(imp.ParamTypes(), imp.ResultTypes())})
		if err := checkImport(imp); err != nil {
			problem(err)
		}
	}
	if len(compiled.ImportedMemories()) > 0 {
		problem(errors.New("imports a memory; a guest must define its own"))
	}
	if _, ok := compiled.ExportedMemories()["memory"]; !ok {
		problem(errors.New(`does not export its memory as "memory"`))
	}

	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	fns := compiled.ExportedFunctions()
	shapeOK := len(ins.Problems) == 0
	check := func(name string, params, results []api.ValueType) bool {
		def, ok := fns[name]
		if !ok {
			problem(fmt.Errorf("missing export %s", name))
			return false
		}
		if !slices.Equal(def.ParamTypes(), params) || !slices.Equal(def.ResultTypes(), results) {
			problem(fmt.Errorf("export %s has signature %s, want %s", name,
				signature(def.ParamTypes(), def.ResultTypes()), signature(params, results)))
			return false
		}
		return true
	}
	versionOK := check(abi.ExportVersion, nil, []api.ValueType{i32})
	shapeOK = check(abi.ExportAlloc, []api.ValueType{i32}, []api.ValueType{i32}) && versionOK && shapeOK
	for name, def := range fns {
		ins.Exports = append(ins.Exports, Export{Name: name, Signature: signature(def.ParamTypes(), def.ResultTypes())})
		if strings.HasPrefix(name, "plasm_") && name != abi.ExportVersion && name != abi.ExportAlloc {
			shapeOK = check(name, []api.ValueType{i32}, []api.ValueType{i64}) && shapeOK
		}
	}
	for _, hook := range []string{abi.HookPrepareRequest, abi.HookDecodeResponse, abi.HookInvoke} {
		if _, ok := fns[abi.HookExport(hook)]; ok {
			ins.Hooks = append(ins.Hooks, hook)
		}
	}
	byName := func(a, b Export) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(ins.Exports, byName)
	slices.SortFunc(ins.Imports, byName)

	if !shapeOK {
		return ins, nil
	}
	// The version comes from running the module, under a deadline, with no
	// host environment: the imports answer abi-level errors if called.
	ictx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	mod, err := rt.InstantiateModule(ictx, compiled, h.modCfg.WithStdout(&guestLog{}).WithStderr(&guestLog{}))
	if err != nil {
		problem(fmt.Errorf("instantiate: %s", firstLine(err.Error())))
		return ins, nil
	}
	defer mod.Close(context.Background())
	res, err := mod.ExportedFunction(abi.ExportVersion).Call(ictx)
	if err != nil || len(res) != 1 {
		problem(fmt.Errorf("%s failed: %v", abi.ExportVersion, err))
		return ins, nil
	}
	ins.ABIVersion, ins.HasABIVersion = int32(uint32(res[0])), true
	if ins.ABIVersion != abi.Version {
		problem(fmt.Errorf("%s returned %d, host speaks %d", abi.ExportVersion, ins.ABIVersion, abi.Version))
	}
	return ins, nil
}
