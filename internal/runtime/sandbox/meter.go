package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// meterRefill is the fuel one tick hands a metered guest: the number of
// wasm instructions it may run before the host looks at its deadline
// again. A unit (an instruction; a check charges 4 for itself; bulk
// operations 1 per 16 bytes) took 0.28–0.48 ns of CPU in
// BenchmarkMeterTick (a one-instruction loop, loop-free recursion, a SIMD
// and bulk-memory loop, the engine planning and decoding), so a guest
// returns to Go every 0.3–0.5 ms of its CPU time: that is how late past
// its deadline a spinning guest stops (plus any wait for a core),
// and how long the Go scheduler may wait to preempt it. See docs/decisions.md
// "Guests are metered, not checked at every loop".
const meterRefill = 1 << 20

// A tick must cover the dearest check, or the fuel would wrap.
const _ = uint(meterRefill - wasmmeter.MaxCost)

// newMeteredRuntime returns the runtime metered modules run in: the same
// configuration as the checked one without wazero's termination checks,
// with WASI, the host module and the meter's tick.
func newMeteredRuntime(ctx context.Context, rc wazero.RuntimeConfig, tick api.GoModuleFunc) (wazero.Runtime, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, rc.WithCloseOnContextDone(false))
	err := func() error {
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			return fmt.Errorf("instantiate WASI: %w", err)
		}
		if err := instantiateHostModule(ctx, rt); err != nil {
			return fmt.Errorf("instantiate host module: %w", err)
		}
		_, err := rt.NewHostModuleBuilder(wasmmeter.ImportModule).NewFunctionBuilder().
			WithGoModuleFunction(tick, nil, []api.ValueType{api.ValueTypeI32}).
			Export(wasmmeter.ImportName).Instantiate(ctx)
		if err != nil {
			return fmt.Errorf("instantiate meter: %w", err)
		}
		return nil
	}()
	if err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	return rt, nil
}

// meterTick is called when a metered guest has used its fuel. The context
// is the call's (or the instantiation's): once it is over the call ends
// with the exit error wazero's own check raises, so classify reports a
// deadline or a cancellation exactly as for a checked guest. A module
// closed under a running call (tenant or host closing) ends the same way
// wazero's check ends it.
func (h *Host) meterTick(ctx context.Context, mod api.Module, stack []uint64) {
	h.meterTicks.Add(1)
	if err := ctx.Err(); err != nil {
		code := sys.ExitCodeDeadlineExceeded
		if errors.Is(err, context.Canceled) {
			code = sys.ExitCodeContextCanceled
		}
		panic(sys.NewExitError(code))
	}
	if mod.IsClosed() {
		panic(sys.NewExitError(0))
	}
	stack[0] = meterRefill
}

var errInvalid = errors.New("invalid module")

// screen must pass before any wazero compilation of guest bytes, metered
// or checked (see wasmmeter.Screen): wazero v1.12's validator and
// compilers read typed function references differently, so such a module
// could run code nobody validated, or crash the whole process with a
// panic in a compile worker goroutine. Refusals are final: no fallback.
func screen(wasm []byte) error {
	if err := wasmmeter.Screen(wasm); err != nil {
		return fmt.Errorf("%w: module refused before compilation: %w", ErrABI, err)
	}
	return nil
}

// instrument is wasmmeter.Instrument; the fallback test replaces it.
var instrument = wasmmeter.Instrument

// validated remembers module digests wazero has validated (process-wide:
// validity depends only on the bytes and the features, which every Host
// shares), so each Host does not pay for it again.
var validated sync.Map // digest → struct{}

// compile compiles wasm into the metered runtime when the host trusts it
// (Config.Meter) and it can be metered, else into the checked one, so
// every module is one or the other.
func (h *Host) compile(ctx context.Context, digest string, wasm []byte) (compiled, error) {
	screenOnce := func() error {
		if _, ok := screened.Load(digest); ok {
			return nil
		}
		if err := screen(wasm); err != nil {
			return err
		}
		if len(wasm) >= memoMinBytes {
			screened.Store(digest, struct{}{})
		}
		return nil
	}
	cctx := experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0))
	if h.mrt != nil && h.trusted(digest) {
		// Bytes this executable metered before need neither the screen
		// nor the rewrite (metermemo.go); Verify still reads them.
		metered := h.remembered(digest, len(wasm))
		var err error
		if metered == nil {
			if err = screenOnce(); err != nil {
				return compiled{}, err
			}
			if metered, err = h.meter(ctx, digest, wasm); err == nil {
				if err := h.memo.store(digest, metered); err != nil {
					h.log.Warn("meter memo not written", slog.String("module", digest[:12]), slog.Any("reason", err))
				}
			}
		}
		if err == nil {
			var c compiled
			if c.cm, c.rt, err = h.compileIn(cctx, true, digest, metered); err == nil {
				c.metered = true
				return c, nil
			}
			if ctx.Err() != nil || errors.Is(err, ErrCache) {
				return compiled{}, err
			}
			err = fmt.Errorf("%w: compile metered module: %w", errMeteredRefused, err)
		}
		if ctx.Err() != nil || !meterDeclined(err) {
			// Only the meter's own refusals fall back; anything else
			// (a cancelled load, an I/O error) is the load's failure.
			return compiled{}, err
		}
		if !errors.Is(err, errInvalid) {
			// An invalid module fails below with wazero's own message.
			h.log.Warn("module not metered; it runs with wazero's loop checks",
				slog.String("module", digest[:12]), slog.Any("reason", err))
		}
	}
	// A module met in the memo was not screened in this process.
	if err := screenOnce(); err != nil {
		return compiled{}, err
	}
	cm, rt, err := h.compileIn(cctx, false, digest, wasm)
	return compiled{cm: cm, rt: rt}, err
}

// compiled is a compiled module, the runtime that holds it and whether
// it is the metered rewrite.
type compiled struct {
	cm      wazero.CompiledModule
	rt      wazero.Runtime
	metered bool
}

// errMeteredRefused: wazero refused the meter's output although the
// original validated and Verify passed it (a meter bug): the module runs
// with wazero's checks rather than not at all.
var errMeteredRefused = errors.New("wazero refused the metered bytes")

// meterDeclined reports whether err is one of the documented reasons a
// trusted module runs with wazero's loop checks instead of the meter: the
// meter cannot rewrite it (wasmmeter.ErrUnsupported, ErrMalformed,
// ErrTooLarge), its output failed Verify (ErrUnmetered), wazero refused
// the output, or the original is invalid (which then fails with wazero's
// own message).
func meterDeclined(err error) bool {
	for _, target := range []error{wasmmeter.ErrUnsupported, wasmmeter.ErrMalformed, wasmmeter.ErrTooLarge, wasmmeter.ErrUnmetered, errMeteredRefused, errInvalid} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// compileIn compiles wasm in the metered runtime or the checked one and
// returns the runtime that holds the result. A fault in the file cache is
// retried once (a failed write leaves the module compiled in memory, so
// the retry succeeds); one that persists (an entry damaged on disk, or
// unreadable to this user) compiles the module again and replaces its
// entry (recompile), logged: the cache can make a load slower, never fail
// it. ErrCache is left for when that fails too.
func (h *Host) compileIn(ctx context.Context, metered bool, digest string, wasm []byte) (wazero.CompiledModule, wazero.Runtime, error) {
	rt := h.rt
	if metered {
		rt = h.mrt
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err == nil || ctx.Err() != nil || !cacheFault(err) {
		if err == nil {
			h.maybePruneCache()
		}
		return cm, rt, err
	}
	if cm, err = rt.CompileModule(ctx, wasm); err == nil || !cacheFault(err) {
		return cm, rt, err
	}
	h.log.Warn("compiled-module cache entry unusable; compiling this module again and replacing its entry",
		slog.String("module", digest[:12]), slog.String("dir", h.cacheDir), slog.Any("reason", err))
	cm, rt, rerr := h.recompile(ctx, metered, wasm)
	if rerr != nil && ctx.Err() == nil && cacheFault(rerr) {
		return nil, nil, fmt.Errorf("%w (start plasmd with --cache-dir off, or remove the directory): %w", ErrCache, errors.Join(err, rerr))
	}
	return cm, rt, rerr
}

// remembered returns digest's instrumented bytes if this process or, by
// the memo on disk, an earlier run of this executable made them and they
// pass wasmmeter.Verify now; else nil, and the caller meters afresh (and
// the store after it replaces a bad entry).
func (h *Host) remembered(digest string, size int) []byte {
	if out, ok := meteredBytes.Load(digest); ok {
		return out.([]byte)
	}
	out, err := h.memo.load(digest)
	if err == nil && out != nil {
		if err = wasmmeter.Verify(out); err != nil {
			err = fmt.Errorf("%w: %w", errMemoCorrupt, err)
		}
	}
	if err != nil {
		h.log.Warn("meter memo ignored", slog.String("module", digest[:12]), slog.Any("reason", err))
		return nil
	}
	if out == nil {
		return nil
	}
	h.memo.hits.Add(1)
	if size >= memoMinBytes {
		meteredBytes.Store(digest, out)
	}
	return out
}

// meter instruments wasm, validates the original bytes (so no
// out-of-range index can come to name the meter's global or import once
// indices shift) and verifies the result. Instrumenting first lets the
// cheap parser refuse garbage before wazero decodes it.
func (h *Host) meter(ctx context.Context, digest string, wasm []byte) ([]byte, error) {
	if out, ok := meteredBytes.Load(digest); ok {
		return out.([]byte), nil
	}
	out, err := instrument(wasm)
	if err != nil {
		return nil, err
	}
	if _, ok := validated.Load(digest); !ok {
		cm, err := h.vrt.CompileModule(ctx, wasm)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errInvalid, err)
		}
		_ = cm.Close(ctx)
		validated.Store(digest, struct{}{})
	}
	if err := wasmmeter.Verify(out); err != nil {
		return nil, err
	}
	if len(wasm) >= memoMinBytes {
		meteredBytes.Store(digest, out)
	}
	return out, nil
}

// memoMinBytes is the size from which a module's screening and metering
// are remembered for the process (by digest; the bytes decide both).
// Rewriting and verifying the engine takes ~0.2 s, seconds under -race,
// and every Host of a process (the server's tests make hundreds) would
// otherwise pay it again; small modules take microseconds and are not
// kept, so the set stays a handful of large trusted modules.
const memoMinBytes = 1 << 20

var (
	meteredBytes sync.Map // digest → instrumented and verified bytes
	screened     sync.Map // digest → struct{}: passed screen
)

// TrustedEngine reports whether digest is the engine embedded in this
// binary, as bytes (enginewasm.Wasm) or as the server loads it
// (enginewasm.Module): the default Config.Meter. The engine is built by
// us with the Go toolchain, and the meter's reading of it is checked by
// the tests; an uploaded module is hostile bytes, which keep wazero's own
// checks (docs/decisions.md, "Guests are metered, not checked at every
// loop").
func TrustedEngine(digest string) bool {
	d := engineDigests()
	return digest == d[0] || digest == d[1]
}

var engineDigests = sync.OnceValue(func() [2]string {
	raw := sha256.Sum256(enginewasm.Wasm)
	merged := sha256.Sum256(enginewasm.Module())
	return [2]string{hex.EncodeToString(raw[:]), hex.EncodeToString(merged[:])}
})

// ErrDigest marks a module digest that is not 64 hex digits.
var ErrDigest = errors.New("not a sha256 digest")

// TrustModules is a Config.Meter for an operator who trusts some modules
// besides the engine, named by the sha256 (hex) of their bytes, as
// `plasmd module check` prints it: those run metered, at two to three
// times the speed of wazero's check, and every other module keeps the
// check. Trust is the operator's word, never a tenant's: a metered module
// is stopped at its deadline as long as the meter reads its bytes as
// wazero does, which the tests check for the modules the Go toolchain
// writes, not for every byte a hostile author could write.
func TrustModules(digests ...string) (func(string) bool, error) {
	set := make(map[string]bool, len(digests))
	for _, d := range digests {
		d = strings.ToLower(strings.TrimSpace(d))
		if b, err := hex.DecodeString(d); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("sandbox: trusted module %q: %w", d, ErrDigest)
		}
		set[d] = true
	}
	return func(digest string) bool { return set[digest] || TrustedEngine(digest) }, nil
}

// MeterCheck reports whether wasm could run metered if trusted: it is
// screened, rewritten, validated and verified as Module would, and the
// error says why not. Nothing is compiled to run.
func (h *Host) MeterCheck(ctx context.Context, wasm []byte) error {
	if h.mrt == nil {
		return errors.New("this host meters nothing")
	}
	if err := screen(wasm); err != nil {
		return err
	}
	sum := sha256.Sum256(wasm)
	_, err := h.meter(ctx, hex.EncodeToString(sum[:]), wasm)
	return err
}

// MeterAll meters every module it can: for tests of the meter itself.
// Never for a host that loads modules it did not build.
func MeterAll(string) bool { return true }
