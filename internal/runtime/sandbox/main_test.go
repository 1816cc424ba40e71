package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
)

// Shared across the package's tests: compiling the engine is the slow part,
// so one host (with an on-disk cache that later hosts reuse) serves most
// tests, each under its own tenant IDs.
var (
	testCacheDir string
	testHost     *Host
	testEngine   *Module
	// guestWasm maps a testdata/guests/<name> to its built module; empty
	// when the go tool is unavailable.
	guestWasm   = map[string][]byte{}
	guestReason string
)

var hostileGuests = []string{"loop", "initloop", "panic", "grow", "badptr", "huge", "badversion", "noalloc", "recurse", "abuse", "badspec"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Behaviour tests must not fail because a loaded CI machine is slow:
	// calls get deadlines no machine reaches unless a test sets its own.
	defaultCallTimeout, defaultQueueTimeout = 10*time.Minute, 10*time.Minute
	dir, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The compilation cache outlives the run: wazero keys entries by module
	// bytes, wazero version, CPU features and termination checks, and
	// compiling the engine under -race takes a minute.
	testCacheDir = sandboxtest.CacheDir()

	if err := buildGuests(filepath.Join(dir, "guests")); err != nil {
		fmt.Fprintln(os.Stderr, "building test guests:", err)
		return 1
	}

	ctx := context.Background()
	testHost, err = New(ctx, Config{CacheDir: testCacheDir, Meter: MeterAll})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Register every module up front, in parallel, so tests do not pay for
	// compilation one after another.
	var wg sync.WaitGroup
	wg.Go(func() { testEngine, err = testHost.Module(ctx, enginewasm.Wasm) })
	for name, b := range guestWasm {
		if name == "initloop" {
			continue // never loads: its start-up spins (TestModuleStartLoops)
		}
		wg.Go(func() { _, _ = testHost.Module(ctx, b) })
	}
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if !testEngine.Metered {
		fmt.Fprintln(os.Stderr, "the engine is not metered")
		return 1
	}
	code := m.Run()
	if err := testHost.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// buildGuests compiles the hostile guests with the standard toolchain. A
// missing go tool only skips the tests that need them; a failing build is
// an error.
func buildGuests(out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		guestReason = "go tool not found in PATH; hostile-guest tests need it to build testdata/guests"
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, max(1, runtime.NumCPU()/2))
	)
	for _, name := range hostileGuests {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			dst := filepath.Join(out, name+".wasm")
			cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-o", dst, "./testdata/guests/"+name)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
			msg, err := cmd.CombinedOutput()
			var b []byte
			if err == nil {
				b, err = os.ReadFile(dst)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v\n%s", name, err, msg))
				return
			}
			guestWasm[name] = b
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

func needGuests(t testing.TB) {
	t.Helper()
	if guestReason != "" {
		t.Skip(guestReason)
	}
}

// guestModule registers a built hostile guest on the shared host.
func guestModule(t testing.TB, name string) *Module {
	t.Helper()
	needGuests(t)
	m, err := testHost.Module(context.Background(), guestWasm[name])
	if err != nil {
		t.Fatalf("module %s: %v", name, err)
	}
	// What stops a hostile guest is the meter: it must be metered.
	if !m.Metered {
		t.Fatalf("module %s is not metered", name)
	}
	return m
}

// checkNoLeaks fails the test if goroutines started during it are still
// running once it ends (with time to settle, as closed modules and
// finished timers unwind asynchronously).
func checkNoLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
