package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/plasmd/plasmd/bench/internal/gowork"
)

// rustKinds are the gowork workloads testdata/rustwork has (no json: no
// serde in the registries these machines reach).
var rustKinds = []string{"sort", "fib", "map"}

// errNoRust: no Rust compiler here can build wasm32-unknown-unknown.
var errNoRust = errors.New("no rustc with the wasm32-unknown-unknown standard library (Debian: apt-get install rustc libstd-rust-dev-wasm32 lld; or set PLASMD_RUSTC)")

// rustc finds a Rust compiler whose sysroot has the wasm32 standard
// library: $PLASMD_RUSTC, Debian's /usr/bin/rustc, then rustc in PATH
// (rustup's usually has only the host target).
func rustc() (string, error) {
	candidates := []string{os.Getenv("PLASMD_RUSTC"), "/usr/bin/rustc"}
	if p, err := exec.LookPath("rustc"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		out, err := exec.Command(c, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		lib := filepath.Join(strings.TrimSpace(string(out)), "lib", "rustlib", "wasm32-unknown-unknown")
		if _, err := os.Stat(lib); err == nil {
			return c, nil
		}
	}
	return "", errNoRust
}

var rustwork = struct {
	sync.Once
	native string                               // the native binary
	run    map[wasmMode]map[string]api.Function // by mode, then workload
	err    error
}{}

// rustworkBuild compiles testdata/rustwork at opt-level 3 twice, to
// wasm32-unknown-unknown and natively, with the same compiler, and
// instantiates the Wasm once per mode. It skips without a compiler.
func rustworkBuild(tb testing.TB) {
	tb.Helper()
	rustwork.Do(func() {
		rc, err := rustc()
		if err != nil {
			rustwork.err = err
			return
		}
		dir := filepath.Join(buildDir, "rustwork")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			rustwork.err = err
			return
		}
		wasmPath := filepath.Join(dir, "work.wasm")
		rustwork.native = filepath.Join(dir, "native")
		for _, args := range [][]string{
			{"--crate-type", "cdylib", "--target", "wasm32-unknown-unknown", "-C", "strip=symbols", "-o", wasmPath, "testdata/rustwork/work.rs"},
			{"-o", rustwork.native, "testdata/rustwork/native.rs"},
		} {
			cmd := exec.Command(rc, append([]string{"--edition", "2021", "-C", "opt-level=3"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				rustwork.err = fmt.Errorf("%s %s: %w\n%s", rc, strings.Join(args, " "), err, out)
				return
			}
		}
		wasm, err := os.ReadFile(wasmPath)
		if err != nil {
			rustwork.err = err
			return
		}
		rustwork.run = map[wasmMode]map[string]api.Function{}
		for _, m := range wasmModes {
			mod, err := instantiateMode(context.Background(), wasm, m.mode, false)
			if err != nil {
				rustwork.err = fmt.Errorf("rustwork %s: %w", m.name, err)
				return
			}
			fns := map[string]api.Function{}
			for _, k := range rustKinds {
				fns[k] = mod.ExportedFunction("rustwork_" + k)
			}
			rustwork.run[m.mode] = fns
		}
	})
	if errors.Is(rustwork.err, errNoRust) {
		tb.Skip(rustwork.err)
	}
	if rustwork.err != nil {
		tb.Fatal(rustwork.err)
	}
}

// nativeRun is what the native binary printed: the median wall and
// thread-CPU nanoseconds of one run, and the workload's checksum.
type nativeRun struct {
	wallNs, cpuNs float64
	sum           uint64
}

func rustNative(tb testing.TB, kind string, n, iters int) nativeRun {
	tb.Helper()
	out, err := exec.Command(rustwork.native, kind, strconv.Itoa(n), strconv.Itoa(iters)).Output()
	if err != nil {
		tb.Fatalf("rustwork native %s: %v", kind, err)
	}
	var r nativeRun
	if _, err := fmt.Sscan(string(out), &r.wallNs, &r.cpuNs, &r.sum); err != nil {
		tb.Fatalf("rustwork native %s printed %q: %v", kind, out, err)
	}
	return r
}

func goworkSize(kind string) (int, int) {
	for i, k := range gowork.Kinds {
		if k == kind {
			return i, goworkSizes[i]
		}
	}
	panic("no gowork workload " + kind)
}

// TestRustWasmSame: the Rust workloads compute what the Go ones compute,
// natively and in every mode, so the two benchmarks compare equal work.
func TestRustWasmSame(t *testing.T) {
	rustworkBuild(t)
	for _, kind := range rustKinds {
		gi, n := goworkSize(kind)
		want := gowork.Run(gi, n)
		if got := rustNative(t, kind, n, 1).sum; got != want {
			t.Errorf("%s: Rust native %d, Go %d", kind, got, want)
		}
		for _, m := range wasmModes {
			res, err := rustwork.run[m.mode][kind].Call(context.Background(), uint64(n))
			if err != nil {
				t.Fatalf("%s (%s): %v", kind, m.name, err)
			}
			if res[0] != want {
				t.Errorf("%s (%s): Rust wasm %d, Go %d", kind, m.name, res[0], want)
			}
		}
	}
}

// BenchmarkRustWasm is BenchmarkGoWasm's workloads written in Rust: what
// a guest costs under wazero when Go did not compile it. native runs in
// a child process (the Rust binary times itself; ns/op is the median of
// b.N runs); the Wasm runs here. Read wasm-metered/native beside
// BenchmarkGoWasm's same ratio: docs/decisions.md "What a guest in
// another language would cost".
func BenchmarkRustWasm(b *testing.B) {
	rustworkBuild(b)
	for _, kind := range rustKinds {
		_, n := goworkSize(kind)
		b.Run(kind+"/native", func(b *testing.B) {
			r := rustNative(b, kind, n, b.N)
			b.ReportMetric(r.wallNs, "ns/op")
			b.ReportMetric(r.cpuNs, "cpu-ns/op")
		})
		for _, m := range wasmModes {
			b.Run(kind+"/"+m.name, func(b *testing.B) {
				fn := rustwork.run[m.mode][kind]
				cpuLoop(b, func() {
					if _, err := fn.Call(context.Background(), uint64(n)); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}
