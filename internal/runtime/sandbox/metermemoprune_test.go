package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pruneMemo is a memo on cache for the executable named exe (no host, no
// module: prune sees directories and sizes only).
func pruneMemo(cache, exe string) *meterMemo {
	m := newMeterMemo(cache, 1)
	m.exe = func() (string, error) { return exe, nil }
	return m
}

// age dates exe's directory d ago, as if it was last used then.
func age(t *testing.T, cache, exe string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	if err := os.Chtimes(filepath.Join(cache, meterMemoDir, exeDir(exe)), when, when); err != nil {
		t.Fatal(err)
	}
}

// exesLeft names the executables among exes whose directory is left.
func exesLeft(t *testing.T, cache string, exes ...string) []string {
	t.Helper()
	var out []string
	for _, e := range exes {
		if _, err := os.Stat(filepath.Join(cache, meterMemoDir, exeDir(e))); err == nil {
			out = append(out, e)
		}
	}
	return out
}

const pruneDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestMeterMemoPrune: a store keeps its own directory and the most
// recently used others within a count, a size and an age; two binaries
// sharing a cache dir keep each other's entries, and one that only reads
// is marked used.
func TestMeterMemoPrune(t *testing.T) {
	entry := bytes.Repeat([]byte{1}, 1000)
	store := func(t *testing.T, m *meterMemo) {
		t.Helper()
		if err := m.store(pruneDigest, entry); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("two live binaries", func(t *testing.T) {
		cache := t.TempDir()
		a, b := pruneMemo(cache, "release"), pruneMemo(cache, "dev build")
		for i := 0; i < 3; i++ { // alternately, as two processes would
			store(t, a)
			store(t, b)
		}
		for _, m := range []*meterMemo{a, b} {
			if got, err := m.load(pruneDigest); err != nil || !bytes.Equal(got, entry) {
				t.Fatalf("entry gone: %v", err)
			}
		}
	})
	t.Run("count", func(t *testing.T) {
		cache := t.TempDir()
		var exes []string
		for i := 0; i < memoMaxExecutables+2; i++ {
			exes = append(exes, fmt.Sprintf("build %d", i))
			store(t, pruneMemo(cache, exes[i]))
			age(t, cache, exes[i], time.Duration(memoMaxExecutables+2-i)*time.Minute) // older builds, older use
		}
		want := exes[len(exes)-memoMaxExecutables:]
		if got := exesLeft(t, cache, exes...); !slices.Equal(got, want) {
			t.Fatalf("left %q, want the %d most recently used %q", got, memoMaxExecutables, want)
		}
	})
	t.Run("least recently used goes first", func(t *testing.T) {
		cache := t.TempDir()
		exes := []string{"a", "b", "c", "d"}
		for _, e := range exes {
			store(t, pruneMemo(cache, e))
		}
		age(t, cache, "a", time.Minute)
		age(t, cache, "b", 3*time.Hour) // the least recently used
		age(t, cache, "c", time.Hour)
		age(t, cache, "d", 2*time.Minute)
		store(t, pruneMemo(cache, "e"))
		if got := exesLeft(t, cache, append(exes, "e")...); !slices.Equal(got, []string{"a", "c", "d", "e"}) {
			t.Fatalf("left %q", got)
		}
	})
	t.Run("age", func(t *testing.T) {
		cache := t.TempDir()
		store(t, pruneMemo(cache, "stale"))
		store(t, pruneMemo(cache, "recent"))
		age(t, cache, "stale", memoMaxAge+time.Hour)
		age(t, cache, "recent", memoMaxAge-time.Hour)
		store(t, pruneMemo(cache, "new"))
		if got := exesLeft(t, cache, "stale", "recent", "new"); !slices.Equal(got, []string{"recent", "new"}) {
			t.Fatalf("left %q", got)
		}
	})
	t.Run("a reader is marked used", func(t *testing.T) {
		cache := t.TempDir()
		store(t, pruneMemo(cache, "reader"))
		age(t, cache, "reader", memoMaxAge+time.Hour)
		if got, err := pruneMemo(cache, "reader").load(pruneDigest); err != nil || got == nil {
			t.Fatalf("load: %v", err)
		}
		store(t, pruneMemo(cache, "writer"))
		if got := exesLeft(t, cache, "reader", "writer"); len(got) != 2 {
			t.Fatalf("left %q: the reader's entry was taken for a stale one", got)
		}
	})
	t.Run("size", func(t *testing.T) {
		cache := t.TempDir()
		for i, e := range []string{"old", "mid", "new"} {
			m := pruneMemo(cache, e)
			m.maxBytes = int64(2*len(entry) + 2*memoHeader + 100)
			store(t, m)
			age(t, cache, e, time.Duration(3-i)*time.Minute)
		}
		// Room for two entries: the store's own and the most recent other.
		if got := exesLeft(t, cache, "old", "mid", "new"); !slices.Equal(got, []string{"mid", "new"}) {
			t.Fatalf("left %q", got)
		}
	})
	t.Run("leftovers", func(t *testing.T) {
		cache := t.TempDir()
		m := pruneMemo(cache, "self")
		store(t, m)
		own := filepath.Dir(func() string { p, _ := m.path(pruneDigest); return p }())
		stale, fresh := filepath.Join(own, "x.1.tmp"), filepath.Join(own, "x.2.tmp")
		for _, p := range []string{stale, fresh} {
			if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Now().Add(-memoTmpAge - time.Minute)
		if err := os.Chtimes(stale, old, old); err != nil {
			t.Fatal(err)
		}
		// A symlink among the executables' directories is removed as a
		// link; what it points at is untouched.
		victim := t.TempDir()
		if err := os.WriteFile(filepath.Join(victim, "precious"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(cache, meterMemoDir, "0000000000000000")
		if err := os.Symlink(victim, link); err != nil {
			t.Skipf("symlinks: %v", err)
		}
		m2 := pruneMemo(cache, "self")
		if err := m2.store(strings.Repeat("ab", 32), entry); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Errorf("a stale temporary file is left: %v", err)
		}
		if _, err := os.Stat(fresh); err != nil {
			t.Errorf("a store in progress lost its temporary file: %v", err)
		}
		if _, err := os.Lstat(link); !os.IsNotExist(err) {
			t.Errorf("the symlink is left: %v", err)
		}
		if got, err := os.ReadDir(victim); err != nil || len(got) != 1 {
			t.Fatalf("the symlink's target changed: %v %v", got, err)
		}
	})
}

// TestMeterMemoOwnDirBounded: the storing executable's own directory is
// held to the byte bound too, its oldest entries going first; before, a
// long-lived binary meeting many modules grew it without limit.
func TestMeterMemoOwnDirBounded(t *testing.T) {
	cache := t.TempDir()
	entry := bytes.Repeat([]byte{2}, 1000)
	m := pruneMemo(cache, "self")
	m.maxBytes = int64(2 * (len(entry) + memoHeader))
	digests := []string{strings.Repeat("a1", 32), strings.Repeat("b2", 32), strings.Repeat("c3", 32)}
	for i, d := range digests {
		if err := m.store(d, entry); err != nil {
			t.Fatal(err)
		}
		// Date each entry by its store, a minute apart, oldest first.
		p, _ := m.path(d)
		when := time.Now().Add(time.Duration(i-len(digests)) * time.Minute)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	var left []string
	for _, d := range digests {
		if got, err := m.load(d); err == nil && got != nil {
			left = append(left, d)
		}
	}
	if !slices.Equal(left, digests[1:]) {
		t.Fatalf("entries left %v, want the two newest %v", left, digests[1:])
	}
	p, _ := m.path(digests[0])
	if n := m.dirBytes(filepath.Dir(p)); n > m.maxBytes {
		t.Fatalf("own directory holds %d bytes, over the bound %d", n, m.maxBytes)
	}
}

// TestMeterMemoOwnDirLeastUsed: the own directory's bound drops the
// least recently used entry, not the oldest written: an entry read
// since (its access time) outlives a younger one nobody read.
func TestMeterMemoOwnDirLeastUsed(t *testing.T) {
	cache := t.TempDir()
	entry := bytes.Repeat([]byte{3}, 1000)
	m := pruneMemo(cache, "self")
	m.maxBytes = int64(2 * (len(entry) + memoHeader))
	read, unread, incoming := strings.Repeat("a1", 32), strings.Repeat("b2", 32), strings.Repeat("c3", 32)
	now := time.Now()
	for i, d := range []string{read, unread} {
		if err := m.store(d, entry); err != nil {
			t.Fatal(err)
		}
		p, _ := m.path(d)
		written := now.Add(time.Duration(i-3) * time.Hour)
		used := written
		if d == read {
			used = now.Add(-time.Minute) // written first, read last
		}
		if err := os.Chtimes(p, used, written); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.store(incoming, entry); err != nil {
		t.Fatal(err)
	}
	p, _ := m.path(unread)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the unread entry stayed (%v); the bound should drop it before the one read", err)
	}
	for _, d := range []string{read, incoming} {
		if p, _ := m.path(d); fileMissing(p) {
			t.Errorf("entry %s… dropped", d[:4])
		}
	}
}

func fileMissing(p string) bool {
	_, err := os.Stat(p)
	return err != nil
}

// TestMeterMemoRetouch: a process that only reads marks its directory
// used again once the last mark is a day old, so a server running for
// weeks on a warm memo is not pruned as stale by another binary's store.
func TestMeterMemoRetouch(t *testing.T) {
	cache := t.TempDir()
	m := pruneMemo(cache, "server")
	clock := time.Now()
	m.now = func() time.Time { return clock }
	if err := m.store(pruneDigest, []byte("metered")); err != nil {
		t.Fatal(err)
	}
	p, _ := m.path(pruneDigest)
	dir := filepath.Dir(p)
	mtime := func() time.Time {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	old := clock.Add(-memoMaxAge + time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour) // within a day of the store's mark
	if _, err := m.load(pruneDigest); err != nil {
		t.Fatal(err)
	}
	if !mtime().Equal(old) {
		t.Fatalf("touched again within a day: %v", mtime())
	}
	clock = clock.Add(memoTouchEvery) // a day later
	if _, err := m.load(pruneDigest); err != nil {
		t.Fatal(err)
	}
	if got := mtime(); !got.Equal(clock) {
		t.Fatalf("directory dated %v after a day of reads, want %v", got, clock)
	}
	// Another binary's store a week after the first mark keeps it.
	clock = clock.Add(memoMaxAge - 2*time.Hour)
	w := pruneMemo(cache, "writer")
	w.now = m.now
	if err := w.store(pruneDigest, []byte("metered")); err != nil {
		t.Fatal(err)
	}
	if got := exesLeft(t, cache, "server", "writer"); len(got) != 2 {
		t.Fatalf("left %q: the reading server was taken for a stale binary", got)
	}
}
