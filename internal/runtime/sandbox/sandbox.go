// Package sandbox owns plasmd's WebAssembly execution: the process's
// wazero runtimes (metered modules run in one without wazero's loop
// checks, the rare module the meter cannot rewrite in one with them; see
// meter.go), the modules compiled into them (once each, by digest), the
// per-tenant pools of initialised instances, and the limits every call
// runs under (deadline, memory ceiling, input and output caps).
//
// Isolation rules it enforces:
//   - an instance belongs to one tenant for its whole life and serves one
//     call at a time;
//   - an instance that traps, exits, overruns its deadline or memory
//     ceiling, or breaks the ABI is closed and never reused;
//   - guests get WASI preview1 without filesystem, environment or arguments;
//     their stdout/stderr go to a small per-instance buffer used only for
//     error details, never to the process's stdout.
//
// Typical use: one Host per process, Module(enginewasm.Wasm) once, then
// Host.Tenant(id, spec) per tenant and the typed calls on *Tenant.
package sandbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

const wasmPage = 64 << 10

// DefaultMaxMemoryBytes is the process-wide ceiling on any one instance's
// memory when Config.MaxMemoryBytes is zero.
const DefaultMaxMemoryBytes = 1 << 30

// Config configures a Host.
type Config struct {
	// CacheDir, when set, persists compiled machine code there so restarts
	// skip compilation. The directory is created if missing.
	CacheDir string
	// CacheMaxBytes bounds CacheDir's compiled modules, least recently
	// used first (cacheprune.go); entries used in the last hour are kept
	// even above it. Zero means DefaultCacheMaxBytes; negative, no size
	// bound (entries unused for 30 days still go).
	CacheMaxBytes int64
	// MaxMemoryBytes is the ceiling no instance may exceed whatever its
	// tenant's Limits say (rounded down to whole 64 KiB pages). Zero means
	// DefaultMaxMemoryBytes.
	MaxMemoryBytes uint64
	// MaxInstances caps tenant instances across all tenants (spares not
	// included). When a tenant needs a new instance at the cap, the least
	// recently used idle instance of another tenant is closed; a busy one
	// never is. Zero means no global cap.
	MaxInstances int
	// Spares is how many tenant-neutral instances of each module are kept
	// ready, so a tenant's first call skips instantiation. They are made
	// with SpareLimits' memory ceiling and only tenants with that ceiling
	// take them. Zero means DefaultSpares; negative disables the pool.
	Spares int
	// Observer receives call and instance events (metrics); nil ignores
	// them.
	Observer Observer
	// MaxRunning bounds guest calls running at once across all tenants,
	// shared fairly among them (cpu.go). Zero means one per usable core:
	// Go's GOMAXPROCS, which follows a container's CPU quota where
	// runtime.NumCPU counts every core of the machine; negative means no
	// bound.
	MaxRunning int
	// Logger receives the host's own events (a pool quarantined for
	// spinning to its deadline); nil discards them.
	Logger *slog.Logger
	// Meter says, by the sha256 (hex) of a module's bytes, whether it may
	// run metered (meter.go) instead of with wazero's check at every loop.
	// The meter stops a guest only if its reading of the bytes agrees with
	// wazero's; that is tested on the modules we build, not proven for
	// every hostile module, so only modules the operator trusts belong
	// here. Nil means TrustedEngine: the engine embedded in this binary.
	Meter func(digest string) bool

	// noLoopChecks turns wazero's termination checks off. Only the
	// loop-check experiment (loopcheck_bench_test.go) sets it: without the
	// checks a deadline cannot stop a guest, so no shipped host may.
	noLoopChecks bool
	// noMeter runs every module with wazero's loop checks instead of
	// metering it (meter.go): the baseline of the loop-check benchmark.
	noMeter bool
	// noQuarantine turns quarantine (quarantine.go) off, for the CPU-share
	// benchmark's baseline.
	noQuarantine bool
	// now is the clock quarantine (a call's running time, strikes,
	// spells) and cache pruning read; nil means time.Now. Tests give a
	// fake one, so whether a call is a strike does not depend on the
	// machine's speed.
	now func() time.Time
}

// DefaultSpares is the spare-pool size per module when Config.Spares is 0.
const DefaultSpares = 2

// SpareLimits returns the limits spares are made with: DefaultLimits under
// the host's memory ceiling. A tenant whose effective MemoryBytes differs
// never takes a spare.
func (h *Host) SpareLimits() Limits { return DefaultLimits().clamp(h.ceiling) }

// EffectiveLimits returns l with defaults filled in and the host's memory
// ceiling applied: what a tenant configured with l actually runs under.
func (h *Host) EffectiveLimits(l Limits) Limits { return l.clamp(h.ceiling) }

// Host is the process's sandbox: its wazero runtimes, the compiled modules
// and the tenants. Create one per process; it is safe for concurrent use.
type Host struct {
	rt    wazero.Runtime
	cache wazero.CompilationCache
	// cacheDir is the usable cache directory ("" without one), cacheMax
	// its size bound and pruned when it was last pruned (unix ns).
	cacheDir string
	cacheMax int64
	pruned   atomic.Int64
	// recompiled holds the runtimes modules whose cache entry could not
	// be read were compiled again in (cachedir.go).
	recompiled recompiled
	ceiling    uint64
	cpu        *cpuGate // nil: guest calls are not bounded host-wide
	modCfg     wazero.ModuleConfig
	obs        Observer
	log        *slog.Logger
	noQuar     bool
	clock      func() time.Time // quarantine's clock (Config.now); nil: time.Now
	spares     int

	// rt runs modules with wazero's termination checks on; mrt runs
	// metered modules (meter.go) and vrt, an interpreter, only validates
	// their original bytes; both nil when metering is off.
	mrt, vrt   wazero.Runtime
	memo       *meterMemo // nil without a CacheDir
	trusted    func(digest string) bool
	meterTicks atomic.Uint64

	// Global instance cap: live counts tenant instances; capWaiters is
	// read without capMu on the release path so an uncontended host never
	// takes the lock there.
	maxLive    int
	capMu      sync.Mutex
	live       int
	capFreed   chan struct{}
	capWaiters atomic.Int32
	// tick orders releases for least-recently-used eviction.
	tick atomic.Uint64

	// The refill goroutine tops spare pools up; bgCtx ends it (and any
	// instantiation it is running) on Close.
	refill   chan struct{}
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	modules map[string]*moduleEntry
	tenants map[string]*Tenant

	discarded   atomic.Uint64
	evicted     atomic.Uint64
	spareTaken  atomic.Uint64
	spareFailed atomic.Uint64
}

// applyDefaults fills in what cfg leaves to the host: observer, logger,
// trust, clock and the spare-pool size.
func (h *Host) applyDefaults(cfg Config) {
	if h.obs == nil {
		h.obs = NopObserver{}
	}
	h.log, h.noQuar, h.clock = cfg.Logger, cfg.noQuarantine, cfg.now
	h.trusted = cfg.Meter
	if h.trusted == nil {
		h.trusted = TrustedEngine
	}
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case h.spares == 0:
		h.spares = DefaultSpares
	case h.spares < 0:
		h.spares = 0
	}
}

// newCheckedRuntime makes a runtime with wazero's loop checks (per rc)
// and the host modules every guest imports.
func newCheckedRuntime(ctx context.Context, rc wazero.RuntimeConfig) (wazero.Runtime, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate host module: %w", err)
	}
	return rt, nil
}

// New creates the runtime and instantiates the WASI host module.
func New(ctx context.Context, cfg Config) (*Host, error) {
	ceiling := cfg.MaxMemoryBytes
	if ceiling == 0 {
		ceiling = DefaultMaxMemoryBytes
	}
	pages := ceiling / wasmPage
	if pages < 1 || pages > 1<<16 {
		return nil, fmt.Errorf("sandbox: MaxMemoryBytes %d outside 64 KiB..4 GiB", cfg.MaxMemoryBytes)
	}
	ceiling = pages * wasmPage

	rc := checkedRuntimeConfig(!cfg.noLoopChecks, pages)
	if cfg.MaxInstances < 0 {
		return nil, fmt.Errorf("sandbox: MaxInstances %d is negative", cfg.MaxInstances)
	}
	running := cfg.MaxRunning
	if running == 0 {
		running = runtime.GOMAXPROCS(0)
	}
	h := &Host{
		cpu:      newCPUGate(running),
		ceiling:  ceiling,
		obs:      cfg.Observer,
		spares:   cfg.Spares,
		maxLive:  cfg.MaxInstances,
		capFreed: make(chan struct{}),
		refill:   make(chan struct{}, 1),
		modules:  map[string]*moduleEntry{},
		tenants:  map[string]*Tenant{},
	}
	h.applyDefaults(cfg)
	h.recompiled.config = rc
	cfg.CacheDir = h.openCache(cfg.CacheDir, cfg.CacheMaxBytes)
	if h.cache != nil {
		rc = rc.WithCompilationCache(h.cache)
	}
	fail := func(err error) (*Host, error) {
		if h.rt != nil {
			_ = h.rt.Close(ctx)
		}
		if h.mrt != nil {
			_ = h.mrt.Close(ctx)
		}
		if h.cache != nil {
			_ = h.cache.Close(ctx)
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var err error
	if h.rt, err = newCheckedRuntime(ctx, rc); err != nil {
		return fail(err)
	}
	if !cfg.noMeter && !cfg.noLoopChecks {
		// The metered runtime shares the compilation cache: wazero keys
		// compiled code by the module's bytes and whether termination
		// checks are on, so neither runtime can load the other's.
		if h.mrt, err = newMeteredRuntime(ctx, rc, h.meterTick); err != nil {
			return fail(err)
		}
		h.vrt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithMemoryLimitPages(uint32(pages)).WithDebugInfoEnabled(false))
		h.memo = newMeterMemo(cfg.CacheDir, pages)
	}

	// No FS, env or args: the zero ModuleConfig grants none. Clocks are real
	// (guests measure time) but sleeping is capped so a sleeping guest
	// cannot hold a host goroutine past its deadline by much.
	h.modCfg = wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithRandSource(rand.Reader).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(boundedSleep)

	h.bgCtx, h.bgCancel = context.WithCancel(context.Background())
	if h.spares > 0 {
		h.bg.Go(h.refillLoop)
	}
	return h, nil
}

// checkedRuntimeConfig is the configuration of the runtime that runs
// modules not metered: CloseOnContextDone makes compiled code check for
// cancellation at every loop, which is what turns a deadline into a
// stopped guest instead of a stuck one.
func checkedRuntimeConfig(checks bool, pages uint64) wazero.RuntimeConfig {
	var rc wazero.RuntimeConfig
	switch runtime.GOARCH {
	case "amd64", "arm64":
		rc = wazero.NewRuntimeConfigCompiler()
	default:
		// wazero's compiler targets amd64 and arm64 only; elsewhere the
		// interpreter keeps plasmd working, just slower.
		rc = wazero.NewRuntimeConfig()
	}
	// No DWARF: wazero would otherwise parse a module's .debug_* sections
	// with debug/dwarf when compiling it and again for every trap's stack
	// trace, and those bytes are the tenant's. Traps keep function names.
	return rc.WithCloseOnContextDone(checks).WithMemoryLimitPages(uint32(pages)).WithDebugInfoEnabled(false)
}

// maxGuestSleep bounds one guest sleep; a guest that wants longer loops,
// and the deadline check between iterations stops it.
const maxGuestSleep = 10 * time.Millisecond

func boundedSleep(ns int64) {
	if ns <= 0 {
		return
	}
	time.Sleep(min(time.Duration(ns), maxGuestSleep))
}

// Close closes every tenant and module and the runtime. Calls in flight
// fail with ErrClosed; later calls too.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.bgCancel()
	tenants := make([]*Tenant, 0, len(h.tenants))
	for _, t := range h.tenants {
		tenants = append(tenants, t)
	}
	modules := make([]*moduleEntry, 0, len(h.modules))
	for _, e := range h.modules {
		modules = append(modules, e)
	}
	h.mu.Unlock()
	// The refill goroutine must be gone before the spares are dropped, or
	// it could add one after.
	h.bg.Wait()

	for _, t := range tenants {
		t.close()
	}
	for _, e := range modules {
		select {
		case <-e.ready:
			if e.m != nil {
				e.m.dropSpares()
			}
		default:
			// Still compiling: the runtime close below ends it.
		}
	}
	err := h.rt.Close(ctx)
	if h.mrt != nil {
		err = errors.Join(err, h.mrt.Close(ctx), h.vrt.Close(ctx))
	}
	err = errors.Join(err, h.recompiled.close(ctx))
	if h.cache != nil {
		err = errors.Join(err, h.cache.Close(ctx))
	}
	if err != nil {
		return fmt.Errorf("sandbox: close: %w", err)
	}
	return nil
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Stats is a snapshot of the host's pools.
type Stats struct {
	Modules int
	Tenants map[string]TenantStats
	// Live is the number of tenant instances (what Config.MaxInstances
	// caps); Spares the number of ready spares across modules.
	Live, Spares int
	// Discarded counts instances closed after a failure or a
	// reconfiguration, over the host's life; Evicted those closed for the
	// global cap.
	Discarded, Evicted uint64
	// SpareTaken counts first instances that came from the spare pool;
	// SpareFailed counts refills that failed to instantiate.
	SpareTaken, SpareFailed uint64
	// Metered and Checked count the ready modules that run metered and
	// those that run with wazero's loop checks; MeterTicks counts the
	// times a metered guest ran out of fuel and asked the host for more.
	Metered, Checked int
	MeterTicks       uint64
}

// TenantStats describes one tenant's pool.
type TenantStats struct {
	Live      int    // instances in existence (idle + serving)
	Idle      int    // instances ready for a call
	Waiting   int    // calls queued for an instance
	Created   uint64 // instances created (or adopted) so far
	FromSpare uint64 // of Created, those taken from the spare pool
	Discarded uint64 // instances closed after a failure or reconfiguration
	Evicted   uint64 // idle instances closed for the host's global cap
}

// Stats returns a snapshot for tests and metrics.
func (h *Host) Stats() Stats {
	h.mu.Lock()
	s := Stats{Modules: len(h.modules), Tenants: make(map[string]TenantStats, len(h.tenants))}
	tenants := make([]*Tenant, 0, len(h.tenants))
	for _, t := range h.tenants {
		tenants = append(tenants, t)
	}
	modules := h.readyModules()
	h.mu.Unlock()
	for _, t := range tenants {
		s.Tenants[t.id] = t.Stats()
	}
	for _, m := range modules {
		s.Spares += m.spareCount()
		if m.Metered {
			s.Metered++
		} else {
			s.Checked++
		}
	}
	s.MeterTicks = h.meterTicks.Load()
	h.capMu.Lock()
	s.Live = h.live
	h.capMu.Unlock()
	s.Discarded = h.discarded.Load()
	s.Evicted = h.evicted.Load()
	s.SpareTaken = h.spareTaken.Load()
	s.SpareFailed = h.spareFailed.Load()
	return s
}
