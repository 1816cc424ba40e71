package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
)

// msg is the payload every benchmark round-trips; it matches
// runtime/sandbox's BenchmarkSandboxCall so the numbers line up.
var msg = bytes.Repeat([]byte("plasmd!\n"), 8) // 64 bytes

// Built once in TestMain: compiling the engine and the Extism kernel is the
// slow part and is not what any benchmark measures.
var (
	plasmdHost   *sandbox.Host
	plasmdEngine *sandbox.Module // the real embedded engine
	plasmdPing   *sandbox.Module // testdata/plasmdping, the trivial guest
	echoWasm     []byte          // testdata/extismecho
	buildDir     string          // TestMain's temporary directory for built guests
)

// plasmd always runs guest calls under a deadline and a memory ceiling;
// the "Limited" Extism variants are configured with the same values.
var (
	plasmdLimits = sandbox.DefaultLimits()
	extismPages  = uint32(plasmdLimits.MemoryBytes / (64 << 10))
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "plasmd-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildDir = dir

	echoWasm, err = buildGuest(dir, "extismecho")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the Extism guest:", err)
		return 1
	}
	if goworkWasm, err = buildGuest(dir, "gowork"); err != nil {
		fmt.Fprintln(os.Stderr, "building the Go workloads guest:", err)
		return 1
	}
	pingWasm, err := buildGuest(dir, "plasmdping")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the trivial plasmd guest:", err)
		return 1
	}

	// A persistent compilation cache keeps repeated runs from recompiling
	// the engine; it only shortens set-up, the warm paths never touch it.
	cacheDir := os.Getenv("PLASMD_WASM_BENCH_CACHE")
	if cacheDir == "" {
		cacheDir = filepath.Join(os.TempDir(), fmt.Sprintf("plasmd-wasm-bench-cache-%d", os.Getuid()))
	}
	plasmdHost, err = sandbox.New(ctx, sandbox.Config{CacheDir: cacheDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if plasmdEngine, err = plasmdHost.Module(ctx, enginewasm.Wasm); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		return 1
	}
	if plasmdPing, err = plasmdHost.Module(ctx, pingWasm); err != nil {
		fmt.Fprintln(os.Stderr, "plasmdping:", err)
		return 1
	}
	code := m.Run()
	if err := plasmdHost.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// buildGuest compiles testdata/<name> with the standard Go toolchain as a
// wasip1 reactor, the same way plasmd's engine is built.
func buildGuest(dir, name string) ([]byte, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("go tool not found in PATH: %w", err)
	}
	dst := filepath.Join(dir, name+".wasm")
	cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-o", dst, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", name, err, out)
	}
	return os.ReadFile(dst)
}

// extismPlugin compiles the echo guest. limited applies plasmd's default
// deadline and memory ceiling; otherwise the plugin runs with Extism's
// defaults (no deadline, so wazero skips its cancellation checks).
func extismPlugin(tb testing.TB, limited bool) *extism.CompiledPlugin {
	tb.Helper()
	ctx := context.Background()
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: echoWasm}}}
	if limited {
		manifest.Timeout = uint64(plasmdLimits.CallTimeout / time.Millisecond)
		manifest.Memory = &extism.ManifestMemory{MaxPages: extismPages}
	}
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{EnableWasi: true}, nil)
	if err != nil {
		tb.Fatalf("extism: compile: %v", err)
	}
	tb.Cleanup(func() { _ = cp.Close(ctx) })
	return cp
}

func extismInstance(tb testing.TB, cp *extism.CompiledPlugin) *extism.Plugin {
	tb.Helper()
	ctx := context.Background()
	p, err := cp.Instance(ctx, extism.PluginInstanceConfig{})
	if err != nil {
		tb.Fatalf("extism: instance: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close(ctx) })
	return p
}

func extismEcho(p *extism.Plugin) ([]byte, error) {
	rc, out, err := p.Call("echo", msg)
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, fmt.Errorf("echo returned %d", rc)
	}
	return out, nil
}

// TestEquivalent checks that every benchmarked path really echoes msg, so
// the benchmarks compare like with like.
func TestEquivalent(t *testing.T) {
	ctx := context.Background()
	tn := plasmdHost.Tenant("equivalent", sandbox.TenantSpec{Module: plasmdEngine})
	t.Cleanup(tn.Close)
	trivial := plasmdHost.Tenant("equivalent-trivial", sandbox.TenantSpec{Module: plasmdPing})
	t.Cleanup(trivial.Close)

	native := func() ([]byte, error) {
		out := engine.New().Handle(abi.ExportPing, msg)
		if len(out) == 0 || out[0] != abi.StatusOK {
			return nil, fmt.Errorf("status %v", out)
		}
		return out[1:], nil
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) func() ([]byte, error)
	}{
		{"native", func(*testing.T) func() ([]byte, error) { return native }},
		{"plasmd", func(*testing.T) func() ([]byte, error) {
			return func() ([]byte, error) { return tn.Ping(ctx, msg) }
		}},
		{"plasmd-trivial", func(*testing.T) func() ([]byte, error) {
			return func() ([]byte, error) { return trivial.Ping(ctx, msg) }
		}},
		{"extism", func(t *testing.T) func() ([]byte, error) {
			p := extismInstance(t, extismPlugin(t, false))
			return func() ([]byte, error) { return extismEcho(p) }
		}},
		{"extism-limited", func(t *testing.T) func() ([]byte, error) {
			p := extismInstance(t, extismPlugin(t, true))
			return func() ([]byte, error) { return extismEcho(p) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := tc.setup(t)
			for range 3 { // repeated, because warm reuse is what is measured
				out, err := call()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, msg) {
					t.Fatalf("got %q, want %q", out, msg)
				}
			}
		})
	}
}

// BenchmarkNativeCall is the ping op without any sandbox: the floor both
// Wasm hosts are measured against.
func BenchmarkNativeCall(b *testing.B) {
	e := engine.New()
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		out := e.Handle(abi.ExportPing, msg)
		if len(out) != len(msg)+1 || out[0] != abi.StatusOK {
			b.Fatal(out)
		}
	}
}

// BenchmarkPlasmdCall is a warm plasm_ping round trip through plasmd's
// sandbox with the real embedded engine: pool checkout, deadline, input
// write, guest call, envelope check, copy out.
func BenchmarkPlasmdCall(b *testing.B) {
	benchPlasmdCall(b, plasmdEngine)
}

// BenchmarkPlasmdCallTrivial is BenchmarkPlasmdCall on testdata/plasmdping,
// a guest as small as the Extism one, to separate host overhead from the
// engine's own ping handling.
func BenchmarkPlasmdCallTrivial(b *testing.B) {
	benchPlasmdCall(b, plasmdPing)
}

func benchPlasmdCall(b *testing.B, mod *sandbox.Module) {
	ctx := context.Background()
	tn := plasmdHost.Tenant("bench-call", sandbox.TenantSpec{Module: mod})
	b.Cleanup(tn.Close)
	if _, err := tn.Ping(ctx, msg); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := tn.Ping(ctx, msg)
		if err != nil || len(out) != len(msg) {
			b.Fatal(out, err)
		}
	}
}

// BenchmarkExtismCall is a warm echo call on one Extism plugin instance
// reused for every call (CompiledPlugin.Instance once, Plugin.Call in the
// loop), with Extism's default configuration: no deadline, no memory cap.
func BenchmarkExtismCall(b *testing.B) {
	benchExtismCall(b, false)
}

// BenchmarkExtismCallLimited is BenchmarkExtismCall with plasmd's default
// call deadline and memory ceiling set in the manifest, the configuration
// that does the same work plasmd's sandbox always does.
func BenchmarkExtismCallLimited(b *testing.B) {
	benchExtismCall(b, true)
}

func benchExtismCall(b *testing.B, limited bool) {
	p := extismInstance(b, extismPlugin(b, limited))
	// The first call runs the guest's _initialize; keep it out of the loop.
	if _, err := extismEcho(p); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := extismEcho(p)
		if err != nil || len(out) != len(msg) {
			b.Fatal(out, err)
		}
	}
}

// BenchmarkPlasmdNewInstance is a new tenant's first call on the trivial
// guest: a fresh instance of the already-compiled module is created and
// initialised (_initialize), pinged once, and closed.
func BenchmarkPlasmdNewInstance(b *testing.B) {
	benchPlasmdNewInstance(b, plasmdPing)
}

// BenchmarkPlasmdNewInstanceEngine is BenchmarkPlasmdNewInstance with the
// real engine, whose larger heap and data segments make instantiation
// dearer.
func BenchmarkPlasmdNewInstanceEngine(b *testing.B) {
	benchPlasmdNewInstance(b, plasmdEngine)
}

func benchPlasmdNewInstance(b *testing.B, mod *sandbox.Module) {
	ctx := context.Background()
	// The module's validation instance goes to the first tenant that asks;
	// hand it out before timing so every iteration instantiates.
	warm := plasmdHost.Tenant("bench-new-warm", sandbox.TenantSpec{Module: mod})
	if _, err := warm.Ping(ctx, msg); err != nil {
		b.Fatal(err)
	}
	warm.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tn := plasmdHost.Tenant("bench-new-"+strconv.Itoa(i), sandbox.TenantSpec{Module: mod})
		i++
		if _, err := tn.Ping(ctx, msg); err != nil {
			b.Fatal(err)
		}
		tn.Close()
	}
}

// BenchmarkExtismNewInstance is the Extism counterpart: a new instance of
// the compiled plugin (kernel and guest), its first echo call (which runs
// _initialize), and close.
func BenchmarkExtismNewInstance(b *testing.B) {
	ctx := context.Background()
	cp := extismPlugin(b, true)
	b.ReportAllocs()
	for b.Loop() {
		p, err := cp.Instance(ctx, extism.PluginInstanceConfig{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := extismEcho(p); err != nil {
			b.Fatal(err)
		}
		if err := p.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
