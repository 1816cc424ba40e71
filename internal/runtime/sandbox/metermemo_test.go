package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// memoModule is a small hand-assembled module (no Go toolchain needed)
// and its digest; the tests trust it with MeterAll.
func memoModule(t *testing.T) ([]byte, string) {
	t.Helper()
	wasm := meterGuestWasm(meterHostiles["tight-loop"], false)
	sum := sha256.Sum256(wasm)
	return wasm, hex.EncodeToString(sum[:])
}

// countInstrument counts calls of instrument until the test ends.
func countInstrument(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	instrument = func(b []byte) ([]byte, error) { n.Add(1); return wasmmeter.Instrument(b) }
	t.Cleanup(func() { instrument = wasmmeter.Instrument })
	return &n
}

// memoLoad makes a host on dir (setup may change its memo before the
// module is loaded), loads wasm and returns whether it runs metered and
// the memo's hit and write counts.
func memoLoad(t *testing.T, dir string, meter func(string) bool, wasm []byte, setup func(*Host)) (metered bool, hits, writes int64) {
	t.Helper()
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: dir, Spares: -1, Meter: meter})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if setup != nil {
		setup(h)
	}
	m, err := h.Module(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	tn := h.Tenant(t.Name(), TenantSpec{Module: m, Limits: DefaultLimits()})
	defer tn.Close()
	if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	return m.Metered, h.memo.hits.Load(), h.memo.writes.Load()
}

func memoEntries(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, meterMemoDir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A second host on the same cache directory meters a trusted module from
// the memo: no instrumentation, one hit; the entry is private.
func TestMeterMemoAcrossHosts(t *testing.T) {
	checkNoLeaks(t)
	dir := t.TempDir()
	wasm, _ := memoModule(t)
	calls := countInstrument(t)

	metered, hits, writes := memoLoad(t, dir, MeterAll, wasm, nil)
	if !metered || hits != 0 || writes != 1 || calls.Load() != 1 {
		t.Fatalf("first host: metered %v, hits %d, writes %d, instrumented %d", metered, hits, writes, calls.Load())
	}
	entries := memoEntries(t, dir)
	if len(entries) != 1 {
		t.Fatalf("memo entries %v, want one", entries)
	}
	for path, want := range map[string]os.FileMode{filepath.Join(dir, meterMemoDir): 0o700, filepath.Dir(entries[0]): 0o700, entries[0]: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %o", path, fi.Mode(), err, want)
		}
	}

	metered, hits, writes = memoLoad(t, dir, MeterAll, wasm, nil)
	if !metered || hits != 1 || writes != 0 || calls.Load() != 1 {
		t.Fatalf("second host: metered %v, hits %d, writes %d, instrumented %d", metered, hits, writes, calls.Load())
	}
}

// A corrupt entry is ignored, the module is metered afresh and the entry
// rewritten, so the next host hits it.
func TestMeterMemoCorruptIgnored(t *testing.T) {
	checkNoLeaks(t)
	wasm, _ := memoModule(t)
	for _, tc := range []struct {
		name    string
		corrupt func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"truncated header", func(b []byte) []byte { return b[:memoHeader-1] }},
		{"truncated bytes", func(b []byte) []byte { return b[:len(b)-1] }},
		{"flipped byte", func(b []byte) []byte { b[len(b)-5] ^= 1; return b }},
		{"bad magic", func(b []byte) []byte { b[0] ^= 1; return b }},
		{"another module's digest", func(b []byte) []byte { b[len(memoMagic)] ^= 1; return b }},
		{"another ceiling", func(b []byte) []byte { b[len(memoMagic)+sha256.Size] ^= 1; return b }},
		{"bad mac", func(b []byte) []byte { b[memoHeader-1] ^= 1; return b }},
		{"appended", func(b []byte) []byte { return append(b, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := countInstrument(t)
			memoLoad(t, dir, MeterAll, wasm, nil)
			entries := memoEntries(t, dir)
			if len(entries) != 1 {
				t.Fatalf("memo entries %v, want one", entries)
			}
			good, err := os.ReadFile(entries[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(entries[0], tc.corrupt(bytes.Clone(good)), 0o600); err != nil {
				t.Fatal(err)
			}
			metered, hits, writes := memoLoad(t, dir, MeterAll, wasm, nil)
			if !metered || hits != 0 || writes != 1 || calls.Load() != 2 {
				t.Fatalf("corrupt entry: metered %v, hits %d, writes %d, instrumented %d", metered, hits, writes, calls.Load())
			}
			if again, err := os.ReadFile(entries[0]); err != nil || !bytes.Equal(again, good) {
				t.Fatalf("entry not rewritten: %v", err)
			}
			if _, hits, _ := memoLoad(t, dir, MeterAll, wasm, nil); hits != 1 {
				t.Fatalf("rewritten entry not hit: hits %d", hits)
			}
		})
	}
}

// Another executable (or the same one under another memory ceiling) keys
// its own entries; an executable that cannot be hashed uses none.
func TestMeterMemoKeyedByExecutable(t *testing.T) {
	checkNoLeaks(t)
	dir := t.TempDir()
	wasm, _ := memoModule(t)
	memoLoad(t, dir, MeterAll, wasm, nil)
	other := func(h *Host) { h.memo.exe = func() (string, error) { return "another plasmd", nil } }
	if metered, hits, writes := memoLoad(t, dir, MeterAll, wasm, other); !metered || hits != 0 || writes != 1 {
		t.Fatalf("other executable: metered %v, hits %d, writes %d", metered, hits, writes)
	}
	// Both executables keep their entries (TestMeterMemoPrune).
	if entries := memoEntries(t, dir); len(entries) != 2 {
		t.Fatalf("memo entries %v, want one per executable", entries)
	}
	if _, hits, _ := memoLoad(t, dir, MeterAll, wasm, other); hits != 1 {
		t.Fatalf("other executable's own entry not hit: hits %d", hits)
	}
	if _, hits, writes := memoLoad(t, dir, MeterAll, wasm, nil); hits != 1 || writes != 0 {
		t.Fatalf("first executable after the other stored: hits %d, writes %d", hits, writes)
	}
	ceiling := func(h *Host) { h.memo.pages /= 2 }
	if _, hits, writes := memoLoad(t, dir, MeterAll, wasm, ceiling); hits != 0 || writes != 1 {
		t.Fatalf("other ceiling: hits %d, writes %d", hits, writes)
	}
	unnamed := func(h *Host) { h.memo.exe = func() (string, error) { return "", errors.New("no executable") } }
	if metered, hits, writes := memoLoad(t, dir, MeterAll, wasm, unnamed); !metered || hits != 0 || writes != 0 {
		t.Fatalf("unhashable executable: metered %v, hits %d, writes %d", metered, hits, writes)
	}
}

// A module the host does not trust is neither read from nor written to
// the memo, even when an entry for it exists.
func TestMeterMemoUntrustedUnaffected(t *testing.T) {
	checkNoLeaks(t)
	dir := t.TempDir()
	wasm, _ := memoModule(t)
	if metered, hits, writes := memoLoad(t, dir, nil, wasm, nil); metered || hits != 0 || writes != 0 {
		t.Fatalf("untrusted: metered %v, hits %d, writes %d", metered, hits, writes)
	}
	if entries := memoEntries(t, dir); len(entries) != 0 {
		t.Fatalf("untrusted module left memo entries %v", entries)
	}
	memoLoad(t, dir, MeterAll, wasm, nil) // trusted once: an entry now exists
	if metered, hits, writes := memoLoad(t, dir, nil, wasm, nil); metered || hits != 0 || writes != 0 {
		t.Fatalf("untrusted with an entry: metered %v, hits %d, writes %d", metered, hits, writes)
	}
}

// An entry whose checksum is right but whose bytes are not metered (here
// the original module) fails wasmmeter.Verify: it is refused, the module
// is instrumented afresh and the entry replaced.
func TestMeterMemoUnverifiedRefused(t *testing.T) {
	checkNoLeaks(t)
	dir := t.TempDir()
	wasm, digest := memoModule(t)
	if err := wasmmeter.Verify(wasm); err == nil {
		t.Fatal("Verify accepts the unmetered module; the test proves nothing")
	}
	calls := countInstrument(t)
	plant := func(h *Host) {
		if err := h.memo.store(digest, wasm); err != nil {
			t.Fatal(err)
		}
	}
	metered, hits, writes := memoLoad(t, dir, MeterAll, wasm, plant)
	if !metered || hits != 0 || writes != 2 || calls.Load() != 1 {
		t.Fatalf("planted entry: metered %v, hits %d, writes %d (plant + rewrite), instrumented %d", metered, hits, writes, calls.Load())
	}
	var out []byte
	check := func(h *Host) {
		var err error
		if out, err = h.memo.load(digest); err != nil || wasmmeter.Verify(out) != nil || bytes.Equal(out, wasm) {
			t.Fatalf("entry not replaced by metered bytes: %v", err)
		}
	}
	if _, hits, _ := memoLoad(t, dir, MeterAll, wasm, check); hits != 1 {
		t.Fatalf("replaced entry not hit: hits %d", hits)
	}
}

// TestMeterMemoRefusesSymlinkedDir: a store never prunes through a
// symlink planted at the memo directory, which would delete what the
// link points at.
func TestMeterMemoRefusesSymlinkedDir(t *testing.T) {
	cache, victim := t.TempDir(), t.TempDir()
	keep := filepath.Join(victim, "precious")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(cache, meterMemoDir)); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	m := newMeterMemo(cache, 1)
	m.exe = func() (string, error) { return strings.Repeat("ab", 32), nil }
	if err := m.store(strings.Repeat("cd", 32), []byte("\x00asm")); err == nil {
		t.Fatal("store through a symlinked memo directory succeeded")
	}
	if got, err := os.ReadDir(victim); err != nil || len(got) != 1 || got[0].Name() != "precious" {
		t.Fatalf("the symlink's target changed: %v %v", got, err)
	}
}

// TestMeterMemoBoundToSource: Verify accepts any metered module, so an
// entry must also be the one made from the module being loaded. A
// validly metered module of another source planted under this module's
// key (its entry file copied there, or written with this module's digest
// in the header but without the executable's key) is refused, the module
// is instrumented afresh, and the entry rebuilt from it.
func TestMeterMemoBoundToSource(t *testing.T) {
	checkNoLeaks(t)
	wasm, digest := memoModule(t)
	other := meterGuestWasm(meterHostiles["exp-recursion"], false)
	otherSum := sha256.Sum256(other)
	otherDigest := hex.EncodeToString(otherSum[:])
	otherMetered, err := wasmmeter.Instrument(other)
	if err != nil || wasmmeter.Verify(otherMetered) != nil {
		t.Fatalf("instrument the other module: %v", err)
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, m *meterMemo) []byte // the entry's bytes
	}{
		{"another module's entry copied", func(t *testing.T, m *meterMemo) []byte {
			if err := m.store(otherDigest, otherMetered); err != nil {
				t.Fatal(err)
			}
			path, _ := m.path(otherDigest)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{"forged without the key", func(t *testing.T, m *meterMemo) []byte {
			input, _ := hex.DecodeString(digest)
			return append(memoEntryHeader(memoKey("a guess"), input, m.pages, otherMetered), otherMetered...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := countInstrument(t)
			plant := func(h *Host) {
				entry := tc.plant(t, h.memo)
				path, err := h.memo.path(digest)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, entry, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			metered, hits, _ := memoLoad(t, dir, MeterAll, wasm, plant)
			if !metered || hits != 0 || calls.Load() != 1 {
				t.Fatalf("planted entry: metered %v, hits %d, instrumented %d; want it refused and the module metered afresh", metered, hits, calls.Load())
			}
			var out []byte
			check := func(h *Host) {
				var err error
				if out, err = h.memo.load(digest); err != nil {
					t.Fatalf("rebuilt entry: %v", err)
				}
			}
			if _, hits, _ := memoLoad(t, dir, MeterAll, wasm, check); hits != 1 {
				t.Fatalf("rebuilt entry not hit: hits %d", hits)
			}
			want, err := wasmmeter.Instrument(wasm)
			if err != nil || !bytes.Equal(out, want) {
				t.Fatalf("the entry now holds %d bytes, not this module's metered bytes (%d): %v", len(out), len(want), err)
			}
		})
	}
}

// An entry is read as a cache directory's writer may have left it: a
// FIFO neither hangs the load nor is read, a symlink is not followed
// (not even to a good entry), and no more than the bound is read.
func TestMeterMemoEntryFileKinds(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		limit int64
		ok    bool
	}{
		{regular, 8, true},
		{regular, 7, false},
		{fifo, 1 << 20, false},
		{link, 1 << 20, false},
		{zero, 1 << 20, false},
		{filepath.Join(dir, "missing"), 8, false},
	} {
		b, err := readMemoEntry(tc.path, tc.limit)
		if tc.ok != (err == nil) {
			t.Errorf("%s (limit %d): %d bytes, %v; want ok %v", filepath.Base(tc.path), tc.limit, len(b), err, tc.ok)
		}
	}

	// Through a host: a FIFO in an entry's place is ignored and replaced.
	wasm, _ := memoModule(t)
	cache := t.TempDir()
	memoLoad(t, cache, MeterAll, wasm, nil)
	entries := memoEntries(t, cache)
	if len(entries) != 1 {
		t.Fatalf("memo entries %v, want one", entries)
	}
	if err := os.Remove(entries[0]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(entries[0], 0o600); err != nil {
		t.Fatal(err)
	}
	if metered, hits, writes := memoLoad(t, cache, MeterAll, wasm, nil); !metered || hits != 0 || writes != 1 {
		t.Fatalf("FIFO entry: metered %v, hits %d, writes %d", metered, hits, writes)
	}
	if _, hits, _ := memoLoad(t, cache, MeterAll, wasm, nil); hits != 1 {
		t.Fatalf("replaced entry not hit: hits %d", hits)
	}
}
