package sandbox

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// wazero never removes what it writes to the compiled-module cache: every
// engine a new plasmd embeds, every vendor module a tenant replaces and
// every wazero upgrade adds entries of 5-40 MB, and the default cache
// directory is the user's, so a server running for months, or an MCP host
// updating plasmd, would fill the disk (a test machine's cache reached
// 14 GB and failed CI with "no space left on device"). The host therefore
// bounds the directory itself, least recently used first.
//
// "Used" is the later of an entry's modification and access times: wazero
// writes an entry once (a temporary file renamed into place) and only
// reads it after, and Linux's default relatime marks a read at most once
// a day, which is all the resolution an age counted in weeks needs. On a
// noatime mount the order degrades to write order, which costs a
// recompile of an old but busy module now and then, never a wrong
// answer: the cache is an accelerator, and a removed entry is a miss.
// Removing an entry another process is reading is safe (it holds the open
// file), and one it is about to open is a miss.

// DefaultCacheMaxBytes bounds the compiled-module cache when
// Config.CacheMaxBytes is zero: room for the engines of a few plasmd
// versions and a few dozen vendor modules.
const DefaultCacheMaxBytes = 1 << 30

const (
	// cacheMaxAge removes an entry unused this long whatever the total:
	// a module no process has loaded for a month is a past version's.
	cacheMaxAge = 30 * 24 * time.Hour
	// cacheKeepRecent shields entries used this recently from the size
	// bound: they are some running process's working set, and one just
	// written may be about to be read. The bound is then exceeded, and
	// the log says so.
	cacheKeepRecent = time.Hour
	// cachePruneEvery is how often a long-running host prunes again,
	// after a compile: a server compiles vendor modules for months.
	cachePruneEvery = 10 * time.Minute
	// cacheTmpAge is when a temporary file is taken for the write of a
	// process that died before renaming it into place.
	cacheTmpAge = time.Hour
)

// pruneResult is what one prune did.
type pruneResult struct {
	removed      int   // entries and stale temporary files removed
	freed, kept  int64 // bytes removed and left
	failed       int   // removals refused (another user's entry, a read-only mount)
	overBoundNow bool  // kept > the bound: the recent working set alone exceeds it
}

// cachedFile is one entry as prune sees it.
type cachedFile struct {
	path string
	size int64
	used time.Time
}

// pruneCompiled bounds the compiled-module entries under dir (every
// wazero-* directory: other wazero versions' entries included, since no
// process of this version reads them and an older binary still running
// keeps its own fresh) to maxBytes (negative: no size bound) and removes
// entries unused for cacheMaxAge. It follows no symlink and touches
// nothing but regular files in wazero's directories: the meter memo
// bounds its own (metermemo.go).
func pruneCompiled(dir string, maxBytes int64, now time.Time) pruneResult {
	var res pruneResult
	var files []cachedFile
	subs, _ := os.ReadDir(dir)
	for _, sub := range subs {
		if strings.HasPrefix(sub.Name(), ".plasmd-") {
			res.leftover(filepath.Join(dir, sub.Name()), now)
			continue
		}
		if !sub.IsDir() || !strings.HasPrefix(sub.Name(), "wazero-") {
			continue
		}
		files = append(files, res.scan(filepath.Join(dir, sub.Name()), now)...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.After(files[j].used) })
	for _, f := range files {
		age := now.Sub(f.used)
		over := maxBytes >= 0 && res.kept+f.size > maxBytes
		if age <= cacheMaxAge && (!over || age <= cacheKeepRecent) {
			res.kept += f.size
			continue
		}
		res.remove(f)
	}
	res.overBoundNow = maxBytes >= 0 && res.kept > maxBytes
	return res
}

// scan lists one wazero directory's entries and removes its stale
// temporary files; a young one is another process's write in flight and
// counts toward the total.
func (res *pruneResult) scan(dir string, now time.Time) []cachedFile {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	files := make([]cachedFile, 0, len(ents))
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue // a symlink or a directory is not wazero's; the start-up probe refuses it
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		f := cachedFile{path: filepath.Join(dir, e.Name()), size: fi.Size(), used: lastUse(fi)}
		if strings.HasSuffix(e.Name(), ".tmp") {
			if now.Sub(fi.ModTime()) > cacheTmpAge {
				res.remove(f)
			} else {
				res.kept += f.size
			}
			continue
		}
		files = append(files, f)
	}
	return files
}

// leftover removes what a plasmd process that died left at the top of
// the cache directory (a write probe, a recompile's directory), once it
// is older than cacheTmpAge; a younger one may be in use. RemoveAll
// follows no symlink.
func (res *pruneResult) leftover(path string, now time.Time) {
	fi, err := os.Lstat(path)
	if err != nil || now.Sub(fi.ModTime()) <= cacheTmpAge {
		return
	}
	if os.RemoveAll(path) != nil {
		res.failed++
		return
	}
	res.removed++
}

func (res *pruneResult) remove(f cachedFile) {
	if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
		res.failed++
		res.kept += f.size
		return
	}
	res.removed++
	res.freed += f.size
}

// lastUse is the later of fi's modification and access times.
func lastUse(fi fs.FileInfo) time.Time {
	used := fi.ModTime()
	if at, ok := accessTime(fi); ok && at.After(used) {
		used = at
	}
	return used
}

// pruneCache prunes the cache directory dir and logs what it did.
func (h *Host) pruneCache(dir string) {
	h.pruned.Store(h.now().UnixNano())
	res := pruneCompiled(dir, h.cacheMax, h.now())
	attrs := []any{slog.String("dir", dir), slog.Int("removed", res.removed),
		slog.Int64("freed_bytes", res.freed), slog.Int64("kept_bytes", res.kept)}
	switch {
	case res.failed > 0:
		h.log.Warn("compiled-module cache: some entries could not be removed", append(attrs, slog.Int("failed", res.failed))...)
	case res.overBoundNow:
		h.log.Warn("compiled-module cache is over its size bound with entries used in the last hour; they are kept",
			append(attrs, slog.Int64("bound_bytes", h.cacheMax))...)
	case res.removed > 0:
		h.log.Info("compiled-module cache pruned", attrs...)
	}
}

// maybePruneCache prunes in the background when cachePruneEvery has
// passed since the last prune; at most one runs at a time, and Close
// waits for it.
func (h *Host) maybePruneCache() {
	last := h.pruned.Load()
	now := h.now().UnixNano()
	if h.cacheDir == "" || time.Duration(now-last) < cachePruneEvery || !h.pruned.CompareAndSwap(last, now) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return // Close is waiting on bg
	}
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		h.pruneCache(h.cacheDir)
	}()
}
