package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
)

// A compiled-module cache speeds a start up; it is never required. wazero,
// though, fails CompileModule on any error its file cache meets (an entry
// another user wrote 0600, a directory it cannot list or write, a file
// where an entry or directory should be, a truncated entry), and a failed
// compile would refuse a catalog or, for the metered runtime, drop a
// module to wazero's loop checks. So New probes the directory once and,
// when it is not fully usable, logs why and runs as with no cache
// (compiled in memory, no meter memo); a fault met later (the directory
// changed under a running process, an entry damaged on disk) is retried
// once, then that one module is compiled again and its entry replaced
// (recompiled), logged; a cache fault never unmeters a module.

// ErrCache marks a compile that failed in the compiled-module cache, not
// in the module, and could not be done again beside it either.
var ErrCache = errors.New("sandbox: compiled-module cache unusable")

// wazeroMagic starts every entry wazero's compiler writes.
var wazeroMagic = []byte("WAZEVO")

// checkCacheDir returns why dir cannot serve as the cache, or nil: every
// directory plasmd writes in must be a writable directory only this user
// can write (checkPrivate, checkParents) and every entry it may read a readable
// regular file starting with its format's magic.
func checkCacheDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// dir itself may be a symlink the operator made; what it resolves to
	// is judged.
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := checkPrivate(dir, fi); err != nil {
		return err
	}
	if err := checkParents(dir); err != nil {
		return err
	}
	if err := probeWrite(dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	// wazero names its directory wazero-<version>-<arch>-<os>.
	suffix := "-" + goruntime.GOARCH + "-" + goruntime.GOOS
	for _, e := range ents {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(name, "wazero-") && strings.HasSuffix(name, suffix):
			err = checkEntries(path, wazeroMagic)
		case name == meterMemoDir:
			err = checkMemoDir(path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkMemoDir checks the meter memo's directory: one subdirectory of
// entries per executable. Anything else in it (a stray file, a symlink,
// never followed) is the memo's prune to remove, not a reason to turn the
// cache off.
func checkMemoDir(dir string) error {
	if err := checkWritableDir(dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() { // DirEntry types come from lstat: a symlink is not a dir
			continue
		}
		// Corrupt memo entries are the memo's to ignore and replace
		// (metermemo.go); only what stops it from doing so counts here.
		if err := checkEntries(filepath.Join(dir, e.Name()), nil); err != nil {
			return err
		}
	}
	return nil
}

// checkEntries checks a directory of cache entries.
func checkEntries(dir string, magic []byte) error {
	if err := checkWritableDir(dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			continue // another process's write in flight
		}
		if err := checkEntry(filepath.Join(dir, e.Name()), magic); err != nil {
			return err
		}
	}
	return nil
}

// checkEntry opens one entry and checks it starts with magic (nil: a
// meter memo entry). An entry gone meanwhile (a concurrent prune) is
// fine: a miss is what the cache is built for. The open neither follows
// a symlink nor blocks on a FIFO (O_NONBLOCK), so whoever could write the
// directory cannot hang the start. A memo entry that is a symlink, FIFO
// or device is the memo's to refuse and replace (readMemoEntry reads only
// regular files); one that is a directory, which no store can replace,
// and any odd wazero entry, which wazero would open and block on, make
// the cache unusable.
func checkEntry(path string, magic []byte) error {
	f, fi, err := openCacheEntry(path, oNoAtime)
	if errors.Is(err, fs.ErrPermission) && oNoAtime != 0 {
		// O_NOATIME is refused for another user's file; open it plainly,
		// so the owner check below says whose it is.
		f, fi, err = openCacheEntry(path, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if magic == nil && err != nil {
		// A memo entry this process cannot open (a symlink, a socket,
		// another mode) is the memo's to refuse and replace.
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		if magic == nil && !fi.IsDir() {
			return nil
		}
		return fmt.Errorf("%s: not a cache entry (not a regular file)", path)
	}
	if err := checkPrivate(path, fi); err != nil {
		// An entry others can rewrite in place is as open as a directory
		// they can write (a memo entry's HMAC does not stop its owner).
		return err
	}
	if magic == nil {
		return nil
	}
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Equal(head, magic) {
		return fmt.Errorf("%s: not a cache entry (bad header)", path)
	}
	return nil
}

// checkWritableDir checks that dir, inside the cache directory, is a
// private directory (not a symlink: one could point plasmd's writes and
// reads anywhere) this process can create files in.
func checkWritableDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink; only the cache directory itself may be one", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := checkPrivate(dir, fi); err != nil {
		return err
	}
	return probeWrite(dir)
}

// probeWrite checks that this process can create files in dir, by
// creating one: permission bits do not say (root ignores them, ACLs and
// read-only mounts overrule them).
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".plasmd-probe-*.tmp")
	if err != nil {
		return err
	}
	name := f.Name()
	err = f.Close()
	return errors.Join(err, os.Remove(name))
}

// checkPrivate refuses a directory or entry another user owns or that
// group or others may write: wazero's entries are machine code, checked
// only by a CRC, so whoever can write one, or the directory it is in, can
// have plasmd run their code in place of a module's. The same rule as
// ssh's for its keys.
func checkPrivate(path string, fi fs.FileInfo) error {
	if uid, ok := fileOwner(fi); ok && int(uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this process's uid %d: its owner could plant machine code plasmd would run", path, uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o): anyone who can write it could plant machine code plasmd would run; make it 0700 (entries 0600)", path, perm)
	}
	return nil
}

// checkParents refuses a cache directory whose parents another user could
// rename it out of and replace: a parent owned by someone other than this
// user or root, or that group or others may write without the sticky bit
// (/tmp has it). wazero opens entries by path at every compile, long after
// the probe. The rule ssh applies to the directories above its keys.
func checkParents(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		uid, ok := fileOwner(fi)
		switch {
		case ok && uid != 0 && int(uid) != os.Geteuid():
			return fmt.Errorf("%s, above the cache directory, belongs to uid %d: its owner could swap the cache for their own", p, uid)
		case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
			return fmt.Errorf("%s, above the cache directory, is writable by group or others without the sticky bit (mode %04o): anyone could swap the cache for their own", p, fi.Mode().Perm())
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// cacheFault reports whether a compile failed in wazero's file cache:
// its reads and writes fail with the os package's errors, its decoding of
// an entry with a "compilationcache:" message.
func cacheFault(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le) || strings.Contains(err.Error(), "compilationcache:")
}

// openCache prunes the compiled-module cache in dir to maxBytes
// (Config.CacheMaxBytes), opens it and returns dir, or logs why it cannot
// and returns "": the host then compiles in memory and keeps no meter
// memo. The prune comes first: what it removes, the probe need not read,
// and an old version's entry it removes cannot disable the cache.
func (h *Host) openCache(dir string, maxBytes int64) string {
	if dir == "" {
		return ""
	}
	h.cacheMax = maxBytes
	if h.cacheMax == 0 {
		h.cacheMax = DefaultCacheMaxBytes
	}
	h.pruneCache(dir)
	err := checkCacheDir(dir)
	if err == nil {
		var cache wazero.CompilationCache
		if cache, err = wazero.NewCompilationCacheWithDir(dir); err == nil {
			h.cache, h.cacheDir = cache, dir
			return dir
		}
	}
	h.log.Warn("compiled-module cache disabled: its directory is not usable by this process; compiling in memory",
		slog.String("dir", dir), slog.Any("reason", err))
	return ""
}

// recompiled holds the runtimes of modules whose cache entry could not be
// read (truncated or corrupted on disk, unreadable to this user): wazero
// fails such a compile and neither removes nor replaces the entry, so
// every later start failed the same way until someone cleared the
// directory. The host compiles such a module again in a new runtime whose
// cache is a fresh directory beside the entries, then moves the entry that
// compile wrote over the bad one: the load succeeds and the next start is
// warm again. The new entry is named by wazero's own key, so the host need
// not know how wazero derives it. Compiled code belongs to the runtime that
// compiled it, so each such runtime lives until the host closes.
type recompiled struct {
	config wazero.RuntimeConfig // the host's, without its cache
	mu     sync.Mutex
	rts    []wazero.Runtime
	closed bool // the host closed: a heal finishing now closes its runtime
}

// recompile compiles wasm as above and returns it with its runtime.
func (h *Host) recompile(ctx context.Context, metered bool, wasm []byte) (wazero.CompiledModule, wazero.Runtime, error) {
	tmp, err := os.MkdirTemp(h.cacheDir, ".plasmd-recompile-*")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	cache, err := wazero.NewCompilationCacheWithDir(tmp)
	if err != nil {
		return nil, nil, err
	}
	rc := h.recompiled.config.WithCompilationCache(cache)
	// The runtime outlives the load that needed it.
	rctx := context.WithoutCancel(ctx)
	var rt wazero.Runtime
	if metered {
		rt, err = newMeteredRuntime(rctx, rc, h.meterTick)
	} else {
		rt, err = newCheckedRuntime(rctx, rc)
	}
	if err != nil {
		return nil, nil, err
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		_ = rt.Close(rctx)
		return nil, nil, err
	}
	h.recompiled.mu.Lock()
	if h.recompiled.closed {
		h.recompiled.mu.Unlock()
		_ = rt.Close(rctx)
		return nil, nil, ErrClosed
	}
	h.recompiled.rts = append(h.recompiled.rts, rt)
	h.recompiled.mu.Unlock()
	if err := replaceEntries(tmp, h.cacheDir); err != nil {
		h.log.Warn("compiled-module cache entry not replaced; the next start compiles this module again",
			slog.String("dir", h.cacheDir), slog.Any("reason", err))
	}
	return cm, rt, nil
}

// replaceEntries moves the entries under from's wazero directories to the
// same names under to's, over what is there: a bad entry, even one that
// became a directory. It follows no symlink (RemoveAll removes a link,
// never its target).
func replaceEntries(from, to string) error {
	written, err := filepath.Glob(filepath.Join(from, "wazero-*", "*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, src := range written {
		if strings.HasSuffix(src, ".tmp") {
			continue
		}
		rel, _ := filepath.Rel(from, src)
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			errs = append(errs, err)
			continue
		}
		if fi, err := os.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
			_ = os.RemoveAll(dst)
		}
		errs = append(errs, os.Rename(src, dst))
	}
	return errors.Join(errs...)
}

func (r *recompiled) close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	for _, rt := range r.rts {
		err = errors.Join(err, rt.Close(ctx))
	}
	r.rts, r.closed = nil, true
	return err
}
