package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// logBuffer is a bytes.Buffer safe for the host's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// populateCache loads the memo module once on dir so it holds a wazero
// entry and a memo entry, and returns wazero's entry files.
func populateCache(t *testing.T, dir string) []string {
	t.Helper()
	wasm, _ := memoModule(t)
	if metered, _, _ := memoLoad(t, dir, MeterAll, wasm, nil); !metered {
		t.Fatal("populating host: module not metered")
	}
	entries, err := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no wazero entries in %s: %v", dir, err)
	}
	return entries
}

func isRoot() bool { return os.Geteuid() == 0 }

// A cache directory this process cannot fully use is reported once and
// the host runs as with none: it starts, the module is metered and runs,
// and no meter memo is kept. The faults are made so that root meets them
// too (CI runs as root), beside the permission ones a user meets.
func TestCacheDirUnusableIgnored(t *testing.T) {
	checkNoLeaks(t)
	for _, tc := range []struct {
		name     string
		needUser bool // chmod does not stop root
		break_   func(t *testing.T, dir string)
	}{
		{"cache dir is a file", false, func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"wazero dir is a file", false, func(t *testing.T, dir string) {
			wdir := filepath.Dir(populateCache(t, dir)[0])
			if err := os.RemoveAll(wdir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(wdir, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"entry is a directory", false, func(t *testing.T, dir string) {
			for _, e := range populateCache(t, dir) {
				if err := os.Remove(e); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(e, 0o700); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"entry is a FIFO", false, func(t *testing.T, dir string) {
			// Opening it for reading would block the start for ever.
			for _, e := range populateCache(t, dir) {
				if err := os.Remove(e); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(e, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"entry is a symlink", false, func(t *testing.T, dir string) {
			for _, e := range populateCache(t, dir) {
				if err := os.Remove(e); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/dev/zero", e); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"entry truncated", false, func(t *testing.T, dir string) {
			for _, e := range populateCache(t, dir) {
				if err := os.WriteFile(e, []byte("WAZ"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"entries unreadable", true, func(t *testing.T, dir string) {
			for _, e := range populateCache(t, dir) {
				if err := os.Chmod(e, 0); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"dir tree unreadable", true, func(t *testing.T, dir string) {
			populateCache(t, dir)
			if err := os.Chmod(dir, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needUser && isRoot() {
				t.Skip("root ignores permission bits; the other cases make faults root meets")
			}
			dir := filepath.Join(t.TempDir(), "cache")
			tc.break_(t, dir)
			var logs logBuffer
			ctx := context.Background()
			h, err := New(ctx, Config{CacheDir: dir, Spares: -1, Meter: MeterAll, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatalf("New refused an unusable cache: %v", err)
			}
			defer h.Close(ctx)
			if h.memo != nil {
				t.Error("meter memo kept on an unusable cache")
			}
			wasm, _ := memoModule(t)
			m, err := h.Module(ctx, wasm)
			if err != nil {
				t.Fatalf("module refused because of the cache: %v", err)
			}
			if !m.Metered {
				t.Error("module unmetered because of the cache")
			}
			tn := h.Tenant(t.Name(), TenantSpec{Module: m, Limits: DefaultLimits()})
			defer tn.Close()
			if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
				t.Fatalf("echo: %q, %v", got, err)
			}
			out := logs.String()
			if n := strings.Count(out, "compiled-module cache disabled"); n != 1 {
				t.Errorf("cache reported %d times, want once:\n%s", n, out)
			}
			if strings.Contains(out, "not metered") || strings.Contains(out, "meter memo") {
				t.Errorf("more than the one report:\n%s", out)
			}
		})
	}
}

// A cache entry that goes bad under a running host (after its probe)
// fails that load with ErrCache; it never drops the module to wazero's
// loop checks, whose log then said reason=<nil> (a shadowed error).
func TestCacheFaultNeverUnmeters(t *testing.T) {
	checkNoLeaks(t)
	dir := t.TempDir()
	entries := populateCache(t, dir)
	var logs logBuffer
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: dir, Spares: -1, Meter: MeterAll, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	meteredBytes.Range(func(k, _ any) bool { meteredBytes.Delete(k); return true })
	for _, e := range entries {
		if err := os.Remove(e); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(e, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	wasm, _ := memoModule(t)
	m, err := h.Module(ctx, wasm)
	if err == nil {
		t.Fatalf("loaded through a broken entry (metered %v); logs:\n%s", m.Metered, logs.String())
	}
	if !errors.Is(err, ErrCache) || !strings.Contains(err.Error(), "--cache-dir off") {
		t.Errorf("error %v, want ErrCache with the way out", err)
	}
	if out := logs.String(); strings.Contains(out, "not metered") {
		t.Errorf("fell back to loop checks for a cache fault:\n%s", out)
	}
}

// meterDeclined is the whole list of reasons a trusted module may run
// with wazero's checks; an I/O error or a cancellation is not one.
func TestMeterDeclinedReasons(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.Join(errMeteredRefused, errors.New("x")), true},
		{errInvalid, true},
		{&os.PathError{Op: "open", Path: "/c/e", Err: os.ErrPermission}, false},
		{context.Canceled, false},
		{ErrCache, false},
	} {
		if got := meterDeclined(tc.err); got != tc.want {
			t.Errorf("meterDeclined(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// BenchmarkCheckCacheDir is the probe a start pays with a cache dir (a
// one-shot MCP client pays it per call): 24 wazero entries and 8 memo
// entries. The baseline lists the same directories, the least any check
// of them costs; the probe adds an open and a 6-byte read per entry and
// a temporary file per directory.
func BenchmarkCheckCacheDir(b *testing.B) {
	dir := b.TempDir()
	wdir := filepath.Join(dir, "wazero-v0-"+goruntime.GOARCH+"-"+goruntime.GOOS)
	mdir := filepath.Join(dir, meterMemoDir, "0123456789abcdef")
	for _, d := range []string{wdir, mdir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 24 {
		if err := os.WriteFile(filepath.Join(wdir, fmt.Sprintf("%064d", i)), append([]byte("WAZEVO"), make([]byte, 4096)...), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 8 {
		if err := os.WriteFile(filepath.Join(mdir, fmt.Sprintf("%064d", i)), append(memoMagic, make([]byte, 4096)...), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("probe", func(b *testing.B) {
		for b.Loop() {
			if err := checkCacheDir(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list-baseline", func(b *testing.B) {
		for b.Loop() {
			for _, d := range []string{dir, wdir, filepath.Dir(mdir), mdir} {
				if _, err := os.ReadDir(d); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
