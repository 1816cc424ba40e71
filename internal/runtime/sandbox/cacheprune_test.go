package sandbox

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cacheFile is one file a prune test lays out: its path under the cache
// dir, its size and when it was last used (both of its times).
type cacheFile struct {
	path string
	size int
	used time.Duration // before now
}

func layOut(t *testing.T, dir string, now time.Time, files []cacheFile) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, f.size), 0o600); err != nil {
			t.Fatal(err)
		}
		at := now.Add(-f.used)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		// A directory written last with the file (a recompile's) is as old.
		if top, _, nested := strings.Cut(f.path, "/"); nested {
			if err := os.Chtimes(filepath.Join(dir, top), at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// remaining lists the regular files left under dir, relative to it.
func remaining(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() || d.Type()&os.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(left)
	return left
}

// pruneCompiled keeps the most recently used entries within the bound,
// drops any unused for cacheMaxAge, keeps the last hour's even over the
// bound, clears temporary files a dead process left, and touches nothing
// but wazero's entries: the meter memo, other files, symlinks and their
// targets stay.
func TestPruneCompiled(t *testing.T) {
	const day = 24 * time.Hour
	now := time.Now().Truncate(time.Second)
	for _, tc := range []struct {
		name    string
		max     int64
		files   []cacheFile
		want    []string
		overNow bool
	}{
		{
			name: "least recently used beyond the bound",
			max:  250,
			files: []cacheFile{
				{"wazero-v1-amd64-linux/new", 100, 2 * time.Hour},
				{"wazero-v1-amd64-linux/mid", 100, 3 * day},
				{"wazero-v1-amd64-linux/old", 100, 9 * day},
			},
			want: []string{"wazero-v1-amd64-linux/mid", "wazero-v1-amd64-linux/new"},
		},
		{
			name: "every wazero version's directory counts in one order",
			max:  150,
			files: []cacheFile{
				{"wazero-v1-amd64-linux/a", 100, 5 * day},
				{"wazero-v2-amd64-linux/b", 100, 2 * day},
			},
			want: []string{"wazero-v2-amd64-linux/b"},
		},
		{
			name: "unused for the maximum age, whatever the room",
			max:  -1,
			files: []cacheFile{
				{"wazero-v1-amd64-linux/fresh", 10, 29 * day},
				{"wazero-v1-amd64-linux/stale", 10, 31 * day},
			},
			want: []string{"wazero-v1-amd64-linux/fresh"},
		},
		{
			name: "the last hour's entries stay over the bound",
			max:  50,
			files: []cacheFile{
				{"wazero-v1-amd64-linux/a", 100, 10 * time.Minute},
				{"wazero-v1-amd64-linux/b", 100, 20 * time.Minute},
				{"wazero-v1-amd64-linux/c", 100, 2 * time.Hour},
			},
			want:    []string{"wazero-v1-amd64-linux/a", "wazero-v1-amd64-linux/b"},
			overNow: true,
		},
		{
			name: "temporary files: a dead writer's go, a live one's stay",
			max:  -1,
			files: []cacheFile{
				{"wazero-v1-amd64-linux/e.123.tmp", 10, 2 * time.Hour},
				{"wazero-v1-amd64-linux/f.456.tmp", 10, time.Minute},
			},
			want: []string{"wazero-v1-amd64-linux/f.456.tmp"},
		},
		{
			name: "a dead process's probe file and recompile directory go, a live one's stay",
			max:  -1,
			files: []cacheFile{
				{".plasmd-probe-1.tmp", 1, 2 * time.Hour},
				{".plasmd-probe-2.tmp", 1, time.Minute},
				{".plasmd-recompile-9/wazero-v1-amd64-linux/e", 10, 2 * time.Hour},
				{".plasmd-recompile-8/wazero-v1-amd64-linux/e", 10, time.Minute},
			},
			want: []string{".plasmd-probe-2.tmp", ".plasmd-recompile-8/wazero-v1-amd64-linux/e"},
		},
		{
			name: "only wazero's entries are the prune's",
			max:  0,
			files: []cacheFile{
				{"plasmd-meter-memo/exe/m", 10, 40 * day},
				{"notes.txt", 10, 40 * day},
				{"wazero-v1-amd64-linux/gone", 10, 40 * day},
			},
			want: []string{"notes.txt", "plasmd-meter-memo/exe/m"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			layOut(t, dir, now, tc.files)
			res := pruneCompiled(dir, tc.max, now)
			if got := remaining(t, dir); !slices.Equal(got, tc.want) {
				t.Errorf("left %q, want %q", got, tc.want)
			}
			if res.overBoundNow != tc.overNow {
				t.Errorf("over the bound %v, want %v", res.overBoundNow, tc.overNow)
			}
			if res.failed != 0 {
				t.Errorf("%d removals failed", res.failed)
			}
		})
	}
}

// A symlink among the entries is neither followed nor counted: its
// target, outside the cache, survives any prune.
func TestPruneCompiledLeavesSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-60 * 24 * time.Hour)
	if err := os.Chtimes(target, old, old); err != nil {
		t.Fatal(err)
	}
	wdir := filepath.Join(dir, "wazero-v1-amd64-linux")
	if err := os.MkdirAll(wdir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(wdir, "link")); err != nil {
		t.Fatal(err)
	}
	pruneCompiled(dir, 0, time.Now())
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("symlink target pruned: %v", err)
	}
	if got := remaining(t, dir); !slices.Equal(got, []string{"wazero-v1-amd64-linux/link"}) {
		t.Errorf("left %q", got)
	}
}

// The host prunes its cache at start, to Config.CacheMaxBytes, and a
// long-running host prunes again after a compile once cachePruneEvery has
// passed on its clock, in the background, which Close waits for.
func TestHostPrunesCache(t *testing.T) {
	checkNoLeaks(t)
	dir := t.TempDir()
	clock := time.Now()
	layOut(t, dir, clock, []cacheFile{
		{"wazero-v0-amd64-linux/old", 1000, 40 * 24 * time.Hour},
	})
	var logs logBuffer
	ctx := context.Background()
	now := func() time.Time { return clock }
	h, err := New(ctx, Config{CacheDir: dir, CacheMaxBytes: 1 << 40, Spares: -1, Meter: MeterAll, now: now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if got := remaining(t, dir); slices.Contains(got, "wazero-v0-amd64-linux/old") {
		t.Errorf("start kept an entry unused for 40 days: %q", got)
	}
	if !strings.Contains(logs.String(), "compiled-module cache pruned") {
		t.Errorf("start prune not logged:\n%s", logs.String())
	}

	// Lay out an entry that is stale by the time the host's clock has
	// moved on, then load a module: the compile prunes again.
	layOut(t, dir, clock, []cacheFile{{"wazero-v0-amd64-linux/later", 1000, 40 * 24 * time.Hour}})
	clock = clock.Add(cachePruneEvery + time.Second)
	wasm, _ := memoModule(t)
	if _, err := h.Module(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	left := remaining(t, dir)
	if slices.Contains(left, "wazero-v0-amd64-linux/later") {
		t.Errorf("no prune after a compile past cachePruneEvery: %q", left)
	}
	if !slices.ContainsFunc(left, func(p string) bool { return strings.HasPrefix(p, "wazero-") && !strings.HasPrefix(p, "wazero-v0") }) {
		t.Errorf("the module just compiled was pruned: %q", left)
	}
}
