package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"

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
// changed under a running process) fails that one compile with ErrCache,
// after one retry, and never unmeters a module.

// ErrCache marks a compile that failed in the compiled-module cache, not
// in the module: the cache directory changed under the running process.
var ErrCache = errors.New("sandbox: compiled-module cache unusable")

// wazeroMagic starts every entry wazero's compiler writes.
var wazeroMagic = []byte("WAZEVO")

// checkCacheDir returns why dir cannot serve as the cache, or nil: every
// directory plasmd writes in must be a writable directory and every entry
// it may read a readable regular file starting with its format's magic.
func checkCacheDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := checkWritableDir(dir); err != nil {
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
// entries per executable.
func checkMemoDir(dir string) error {
	if err := checkWritableDir(dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
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
	f, fi, err := openCacheEntry(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if magic == nil && errors.Is(err, syscall.ELOOP) {
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

// checkWritableDir checks that dir is a directory this process can create
// files in, by creating one: permission bits do not say (root ignores
// them, ACLs and read-only mounts overrule them).
func checkWritableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".plasmd-probe-*.tmp")
	if err != nil {
		return err
	}
	name := f.Name()
	err = f.Close()
	return errors.Join(err, os.Remove(name))
}

// cacheFault reports whether a compile failed in wazero's file cache:
// its reads and writes fail with the os package's errors, its decoding of
// an entry with a "compilationcache:" message.
func cacheFault(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le) || strings.Contains(err.Error(), "compilationcache:")
}

// openCache opens the compiled-module cache in dir and returns dir, or
// logs why it cannot and returns "": the host then compiles in memory and
// keeps no meter memo.
func (h *Host) openCache(dir string) string {
	if dir == "" {
		return ""
	}
	err := checkCacheDir(dir)
	if err == nil {
		var cache wazero.CompilationCache
		if cache, err = wazero.NewCompilationCacheWithDir(dir); err == nil {
			h.cache = cache
			return dir
		}
	}
	h.log.Warn("compiled-module cache disabled: its directory is not usable by this process; compiling in memory",
		slog.String("dir", dir), slog.Any("reason", err))
	return ""
}
