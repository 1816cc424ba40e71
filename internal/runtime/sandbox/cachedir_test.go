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
	"time"
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
		{"cache dir writable by others", false, func(t *testing.T, dir string) {
			populateCache(t, dir)
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"wazero dir writable by its group", false, func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Dir(populateCache(t, dir)[0]), 0o770); err != nil {
				t.Fatal(err)
			}
		}},
		{"cache dir owned by another user", false, func(t *testing.T, dir string) {
			if !isRoot() {
				t.Skip("only root can give a directory away")
			}
			populateCache(t, dir)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
		{"entry writable by others", false, func(t *testing.T, dir string) {
			if err := os.Chmod(populateCache(t, dir)[0], 0o666); err != nil {
				t.Fatal(err)
			}
		}},
		{"entry owned by another user", false, func(t *testing.T, dir string) {
			if !isRoot() {
				t.Skip("only root can give a file away")
			}
			if err := os.Chown(populateCache(t, dir)[0], 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
		{"parent writable by others without the sticky bit", false, func(t *testing.T, dir string) {
			populateCache(t, dir)
			if err := os.Chmod(filepath.Dir(dir), 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"wazero dir is a symlink", false, func(t *testing.T, dir string) {
			wdir := filepath.Dir(populateCache(t, dir)[0])
			elsewhere := filepath.Join(t.TempDir(), "w")
			if err := os.Rename(wdir, elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, wdir); err != nil {
				t.Fatal(err)
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

// A parent others may write is fine with the sticky bit (as /tmp has it):
// they cannot rename this user's directory out of it.
func TestCacheDirStickyParentUsable(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := checkCacheDir(filepath.Join(parent, "cache")); err != nil {
		t.Fatalf("refused a cache under a sticky shared parent: %v", err)
	}
}

// The start-up probe reads every entry's header without marking it read:
// otherwise every entry would look used today to the prune, and neither
// the 30-day age nor the least-recently-used order would mean anything
// (review finding).
func TestProbeLeavesAccessTime(t *testing.T) {
	if oNoAtime == 0 {
		t.Skip("access times are not read on this platform")
	}
	dir := t.TempDir()
	entry := populateCache(t, dir)[0]
	then := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(entry, then, then); err != nil {
		t.Fatal(err)
	}
	if err := checkCacheDir(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(entry)
	if err != nil {
		t.Fatal(err)
	}
	if used := lastUse(fi); !used.Equal(then) {
		t.Errorf("the probe moved the entry's last use from %v to %v", then, used)
	}
}

// What the meter memo refuses and replaces itself (a socket or another
// odd file as an entry, a stray file or a symlink among its executables'
// directories) does not turn the whole cache off; the symlink's target is
// neither written nor read.
func TestCacheProbeLeavesMemoToMemo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, memo string)
	}{
		{"entry is a socket", func(t *testing.T, memo string) {
			ents, _ := filepath.Glob(filepath.Join(memo, "*", "*"))
			if len(ents) == 0 {
				t.Fatal("no memo entry")
			}
			if err := os.Remove(ents[0]); err != nil {
				t.Fatal(err)
			}
			// A socket path must fit sun_path: bind it short, then move it.
			short, err := os.MkdirTemp("", "s")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(short)
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fd)
			if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(short, "s")}); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(short, "s"), ents[0]); err != nil {
				t.Fatal(err)
			}
		}},
		{"stray file among executables", func(t *testing.T, memo string) {
			if err := os.WriteFile(filepath.Join(memo, "stray"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlinked executable dir", func(t *testing.T, memo string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(memo, "linked")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			populateCache(t, dir)
			tc.break_(t, filepath.Join(dir, meterMemoDir))
			if err := checkCacheDir(dir); err != nil {
				t.Errorf("cache turned off for what the memo replaces: %v", err)
			}
		})
	}
}

// A cache entry that cannot be read (one that went bad under a running
// host, after its probe, or one truncated past its header, which the
// probe passes) costs one compile, logged, and nothing else: the module
// loads, stays metered and runs, and its entry is replaced, so the next
// start is warm again. It once failed with ErrCache at every start until
// someone cleared the directory. It never drops the module to wazero's
// loop checks, whose log then said reason=<nil> (a shadowed error).
func TestCacheFaultRecompiles(t *testing.T) {
	checkNoLeaks(t)
	for _, tc := range []struct {
		name        string
		beforeStart bool
		break_      func(t *testing.T, entry string)
	}{
		{"entry became a directory", false, func(t *testing.T, e string) {
			if err := os.Remove(e); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(e, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"entry truncated past its header", true, func(t *testing.T, e string) {
			b, err := os.ReadFile(e)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(e, b[:len(b)/2], 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			entries := populateCache(t, dir)
			if tc.beforeStart {
				for _, e := range entries {
					tc.break_(t, e)
				}
			}
			for start := range 2 {
				var logs logBuffer
				ctx := context.Background()
				h, err := New(ctx, Config{CacheDir: dir, Spares: -1, Meter: MeterAll, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				if err != nil {
					t.Fatal(err)
				}
				if h.cache == nil {
					t.Fatalf("start %d: the probe disabled the cache; this case is about entries it passes:\n%s", start, logs.String())
				}
				meteredBytes.Range(func(k, _ any) bool { meteredBytes.Delete(k); return true })
				if !tc.beforeStart && start == 0 {
					for _, e := range entries {
						tc.break_(t, e)
					}
				}
				wasm, _ := memoModule(t)
				m, err := h.Module(ctx, wasm)
				if err != nil {
					h.Close(ctx)
					t.Fatalf("start %d: load failed for a cache entry: %v\n%s", start, err, logs.String())
				}
				if !m.Metered {
					t.Errorf("start %d: module unmetered because of the cache", start)
				}
				if healed := m.rt == h.mrt; healed != (start == 1) {
					t.Errorf("start %d: module in the host's own runtime: %v, want %v", start, healed, start == 1)
				}
				tn := h.Tenant(t.Name(), TenantSpec{Module: m, Limits: DefaultLimits()})
				if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
					t.Errorf("start %d: echo: %q, %v", start, got, err)
				}
				tn.Close()
				out := logs.String()
				if n, want := strings.Count(out, "compiling this module again"), 1-start; n != want {
					t.Errorf("start %d: recompile logged %d times, want %d:\n%s", start, n, want, out)
				}
				if strings.Contains(out, "not metered") {
					t.Errorf("start %d: fell back to loop checks for a cache fault:\n%s", start, out)
				}
				if err := h.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
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
	b.Run("prune", func(b *testing.B) {
		// Nothing to remove: the cost every start pays before the probe.
		for b.Loop() {
			if res := pruneCompiled(dir, DefaultCacheMaxBytes, time.Now()); res.removed != 0 {
				b.Fatalf("pruned %d entries", res.removed)
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
