package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// Module is a compiled, validated guest module. Compiled code is shared by
// every instance of every tenant; memory never is.
type Module struct {
	// Digest is the sha256 (hex) of the module's bytes.
	Digest string
	// Exports are the module's exported function names, sorted.
	Exports []string
	// ABIVersion is what plasm_abi_version returned when the module was
	// validated; it always equals abi.Version for a Module that exists.
	ABIVersion int32
	// Metered says the module runs metered (meter.go): rewritten to count
	// its own fuel, without wazero's loop checks. Otherwise it runs with
	// them.
	Metered bool

	host     *Host
	compiled wazero.CompiledModule
	// rt is the runtime that compiled it: the host's metered or checked
	// one, or its in-memory twin (cachedir.go).
	rt        wazero.Runtime
	minMemory uint64
	// grown is the largest linear memory an instance has reached (see
	// ceilingMemory.Reallocate).
	grown atomic.Uint64

	// spares are instances that have served no tenant, ready for a
	// tenant's first call (see spares.go). The first is the instance made
	// to validate the module.
	mu     sync.Mutex
	spares []*instance
	closed bool
}

type moduleEntry struct {
	ready chan struct{}
	m     *Module
	err   error
}

// Module compiles wasm, validates it against the ABI and caches it by
// digest: later calls with the same bytes return the same *Module. A module
// that imports anything but WASI preview1, lacks a required export, has a
// mistyped export, or reports a version other than abi.Version fails with
// an error wrapping ErrABI.
//
// The ABI version is read eagerly, from an instance created here, so a bad
// module is refused when it is registered rather than on a tenant's call.
func (h *Host) Module(ctx context.Context, wasm []byte) (*Module, error) {
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	e, ok := h.modules[digest]
	if !ok {
		e = &moduleEntry{ready: make(chan struct{})}
		h.modules[digest] = e
	}
	h.mu.Unlock()

	if ok {
		select {
		case <-e.ready:
			if e.err != nil && ctx.Err() == nil &&
				(errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
				// The load we waited for died with its caller's context,
				// not because of the bytes; try again under ours.
				return h.Module(ctx, wasm)
			}
			return e.m, e.err
		case <-ctx.Done():
			return nil, fmt.Errorf("sandbox: module %s: %w", digest[:12], ctx.Err())
		}
	}

	e.m, e.err = h.load(ctx, digest, wasm)
	if e.err != nil {
		// Forget failures so a caller can retry (e.g. after a cancelled
		// compilation); the bytes are not trusted either way.
		h.mu.Lock()
		delete(h.modules, digest)
		h.mu.Unlock()
	}
	close(e.ready)
	if e.err == nil {
		h.kickRefill()
	}
	return e.m, e.err
}

func (h *Host) load(ctx context.Context, digest string, wasm []byte) (*Module, error) {
	short := digest[:12]
	// Compilation is a one-off per module and process; use every core.
	c, err := h.compile(ctx, digest, wasm)
	if err != nil {
		return nil, fmt.Errorf("sandbox: compile module %s: %w", short, err)
	}
	m := &Module{Digest: digest, Metered: c.metered, host: h, compiled: c.cm, rt: c.rt}
	if err := m.checkShape(); err != nil {
		_ = c.cm.Close(ctx)
		return nil, fmt.Errorf("sandbox: module %s: %w", short, err)
	}

	lim := DefaultLimits().clamp(h.ceiling)
	in, f := h.instantiate(ctx, m, lim)
	if f != nil {
		_ = c.cm.Close(ctx)
		return nil, fmt.Errorf("sandbox: module %s: instantiate: %w", short, f)
	}
	version, f := in.version(ctx, lim)
	if f != nil {
		in.close()
		_ = c.cm.Close(ctx)
		return nil, fmt.Errorf("sandbox: module %s: %w", short, f)
	}
	if version != abi.Version {
		in.close()
		_ = c.cm.Close(ctx)
		return nil, fmt.Errorf("sandbox: module %s: %w: plasm_abi_version returned %d, host speaks %d", short, ErrABI, version, abi.Version)
	}
	m.ABIVersion = version
	if h.spares > 0 {
		// The refill is kicked by Module once the entry is ready: kicked
		// here, a refill running at once would skip this module (not ready
		// yet) and never be woken for it again.
		m.spares = append(m.spares, in)
	} else {
		in.close()
	}
	return m, nil
}

// checkShape validates imports and export signatures without running
// anything.
func (m *Module) checkShape() error {
	for _, imp := range m.compiled.ImportedFunctions() {
		if mod, name, _ := imp.Import(); m.Metered && mod == wasmmeter.ImportModule && name == wasmmeter.ImportName {
			continue // the meter's own (Instrument refuses a module that imports from it)
		}
		if err := checkImport(imp); err != nil {
			return err
		}
	}
	if len(m.compiled.ImportedMemories()) > 0 {
		return fmt.Errorf("%w: imports a memory; a guest must define its own", ErrABI)
	}
	mem, ok := m.compiled.ExportedMemories()["memory"]
	if !ok {
		return fmt.Errorf("%w: does not export its memory as \"memory\"", ErrABI)
	}
	m.minMemory = uint64(mem.Min()) * wasmPage

	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	fns := m.compiled.ExportedFunctions()
	want := func(name string, params, results []api.ValueType) error {
		def, ok := fns[name]
		if !ok {
			return fmt.Errorf("%w: missing export %s", ErrABI, name)
		}
		if !slices.Equal(def.ParamTypes(), params) || !slices.Equal(def.ResultTypes(), results) {
			return fmt.Errorf("%w: export %s has signature %s, want %s",
				ErrABI, name, signature(def.ParamTypes(), def.ResultTypes()), signature(params, results))
		}
		return nil
	}
	if err := want(abi.ExportVersion, nil, []api.ValueType{i32}); err != nil {
		return err
	}
	if err := want(abi.ExportAlloc, []api.ValueType{i32}, []api.ValueType{i32}); err != nil {
		return err
	}
	for name := range fns {
		m.Exports = append(m.Exports, name)
		if strings.HasPrefix(name, "plasm_") && name != abi.ExportVersion && name != abi.ExportAlloc {
			if err := want(name, []api.ValueType{i32}, []api.ValueType{i64}); err != nil {
				return err
			}
		}
	}
	slices.Sort(m.Exports)
	return nil
}

func signature(params, results []api.ValueType) string {
	name := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(s, ",") + ")"
	}
	return name(params) + "->" + name(results)
}

// HasExport reports whether the module exports a function named name.
func (m *Module) HasExport(name string) bool {
	_, ok := slices.BinarySearch(m.Exports, name)
	return ok
}

// instantiate creates and initialises an instance under lim's memory
// ceiling and start timeout.
func (h *Host) instantiate(ctx context.Context, m *Module, lim Limits) (*instance, *failure) {
	if m.minMemory > lim.MemoryBytes {
		return nil, &failure{kind: ErrMemoryLimit,
			detail: fmt.Sprintf("module needs %d bytes of memory at start, limit %d", m.minMemory, lim.MemoryBytes)}
	}
	mem := &ceilingMemory{limit: lim.MemoryBytes, grown: &m.grown}
	log := &guestLog{}
	ictx, cancel := context.WithTimeout(ctx, lim.startTimeout())
	defer cancel()
	ictx = experimental.WithMemoryAllocator(ictx, experimental.MemoryAllocatorFunc(func(_, _ uint64) experimental.LinearMemory {
		return mem
	}))
	mod, err := m.rt.InstantiateModule(ictx, m.compiled, h.modCfg.WithStdout(log).WithStderr(log))
	if err != nil {
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		in := &instance{memory: mem, log: log}
		return nil, in.classify(ictx, "_initialize", err)
	}
	in := &instance{
		mod:    mod,
		mem:    mod.Memory(),
		memory: mem,
		log:    log,
		fns:    make(map[string]api.Function, 8),
		loaded: map[string]string{},
	}
	if in.mem == nil {
		in.close()
		return nil, &failure{kind: ErrABI, detail: "instance has no memory"}
	}
	return in, nil
}

// version calls plasm_abi_version.
func (in *instance) version(ctx context.Context, lim Limits) (int32, *failure) {
	cctx, cancel := context.WithTimeout(ctx, lim.startTimeout())
	defer cancel()
	in.stack[0] = 0
	if err := in.function(abi.ExportVersion).CallWithStack(cctx, in.stack[:]); err != nil {
		return 0, in.classify(cctx, abi.ExportVersion, err)
	}
	return int32(uint32(in.stack[0])), nil
}
