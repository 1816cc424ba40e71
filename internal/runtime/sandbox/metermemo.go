package sandbox

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The meter memo keeps, under Config.CacheDir, the instrumented bytes of
// trusted modules this executable has screened, validated and rewritten,
// so a later process (a one-shot MCP client starts one per call) skips
// that work for them: it was ~40% of a warm start's CPU. It is keyed by
// the module's digest, the executable's sha256 (so a new plasmd binary,
// whose meter may write different bytes, never reads an old entry) and
// the memory ceiling (wazero's validation depends on it). What it hands
// back is still checked by wasmmeter.Verify before it is compiled, so a
// wrong entry costs a re-instrumentation, never an unmetered guest. See
// docs/decisions.md, "The meter's work is remembered across processes".
//
// Verify says the bytes are metered, not whose they are: a validly
// metered module of another source under the engine's key would run in
// the engine's place. So an entry is bound to its input. Its header
// carries the sha256 of the original module bytes and the memory
// ceiling, checked on read against the module being loaded: an entry
// filed under another module's name, copied or renamed there by
// accident or on purpose, is refused and rebuilt. The header also carries
// an HMAC-SHA256 of all that and the instrumented bytes, keyed by a
// secret derived from the executable's digest (memoKey), which is also
// the integrity check (a torn write fails it). The HMAC stops an entry
// forged by someone who cannot read the running executable (a cache
// directory shared with, or restored from, a less trusted place); it does
// not stop a local attacker who can read the executable (or knows the
// digest of a released binary) and write the cache directory: they can
// compute the key. Against them the guard is the directory itself (0700,
// created by plasmd; the start-up probe refuses one another user owns or
// others can write), as for the executable they could replace as well.

// meterMemoDir is the subdirectory of Config.CacheDir the memo lives in.
const meterMemoDir = "plasmd-meter-memo"

// memoMagic starts every entry: the format's name and version.
var memoMagic = []byte("plasmd-meter-memo-v2\n")

// memoHeader is the magic, the sha256 of the original module, the memory
// ceiling in pages (8 bytes, little-endian) and the HMAC (memoMAC).
var memoHeader = len(memoMagic) + sha256.Size + 8 + sha256.Size

// meterMemo is one Host's view of the memo; nil when there is no CacheDir.
type meterMemo struct {
	dir   string
	pages uint64
	// exe names the code that produced an entry: the executable's sha256.
	// Tests replace it.
	exe func() (string, error)
	// hits and writes count entries used and written, for tests.
	hits, writes atomic.Int64
	// touched is when (Unix nanoseconds) this memo last marked its
	// directory used (touch, store); 0 before.
	touched atomic.Int64
	// now is the clock; tests replace it.
	now func() time.Time
	// maxBytes is memoMaxBytes; tests lower it.
	maxBytes int64
}

// executableDigest is the sha256 of the running executable, hashed once
// and only when a trusted module is first loaded with a CacheDir (~60 ms
// of CPU for the 59 MB plasmd binary; 27 Nov 2026). The Go build ID
// would be cheaper but is whatever -buildid says, so the bytes decide.
var executableDigest = sync.OnceValues(func() (string, error) {
	// /proc/self/exe opens the very file this process runs, even after a
	// new binary was installed under its name; os.Executable's path would
	// hash the new one, and this process's meter output would be stored
	// under the new binary's key.
	path := "/proc/self/exe"
	if _, err := os.Stat(path); err != nil {
		if path, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find executable: %w", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash executable %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

func newMeterMemo(cacheDir string, pages uint64) *meterMemo {
	if cacheDir == "" {
		return nil
	}
	return &meterMemo{dir: filepath.Join(cacheDir, meterMemoDir), pages: pages, exe: executableDigest, maxBytes: memoMaxBytes, now: time.Now}
}

// path is the entry's file for digest, or an error when the executable
// cannot be named (then nothing is read or written).
func (m *meterMemo) path(digest string) (string, error) {
	exe, err := m.exe()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(memoMagic)
	var pages [8]byte
	binary.LittleEndian.PutUint64(pages[:], m.pages)
	h.Write(pages[:])
	fmt.Fprintf(h, "%s\n%s\n", exe, digest)
	// One directory per executable, named by a prefix of its hash, so a
	// store can drop the entries of binaries no longer used (see prune).
	return filepath.Join(m.dir, exeDir(exe), hex.EncodeToString(h.Sum(nil))), nil
}

func exeDir(exe string) string {
	sum := sha256.Sum256([]byte(exe))
	return hex.EncodeToString(sum[:8])
}

var errMemoCorrupt = errors.New("meter memo entry corrupt")

// memoKey is the HMAC key of exe's entries (see the top of this file for
// what it does and does not protect against).
func memoKey(exe string) []byte {
	k := sha256.Sum256([]byte("plasmd-meter-memo-key\n" + exe))
	return k[:]
}

// memoEntryHeader is the header of the entry holding out, the
// instrumented bytes of the module whose sha256 is input, for an
// executable with key and a ceiling of pages.
func memoEntryHeader(key, input []byte, pages uint64, out []byte) []byte {
	hdr := make([]byte, 0, memoHeader)
	hdr = append(hdr, memoMagic...)
	hdr = append(hdr, input...)
	hdr = binary.LittleEndian.AppendUint64(hdr, pages)
	mac := hmac.New(sha256.New, key)
	mac.Write(hdr)
	mac.Write(out)
	return mac.Sum(hdr)
}

// load returns the instrumented bytes remembered for digest, or nil. A
// missing entry is a plain miss; an unreadable or corrupt one, or one
// made from another module or for another ceiling, is reported so the
// caller can say so, and is replaced by the next store.
func (m *meterMemo) load(digest string) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	path, err := m.path(digest)
	if err != nil {
		return nil, err
	}
	input, err := hex.DecodeString(digest)
	if err != nil || len(input) != sha256.Size {
		return nil, fmt.Errorf("meter memo: module digest %q is not a sha256", digest)
	}
	name := filepath.Base(path)
	b, err := readMemoEntry(path, int64(memoHeader)+m.maxBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read meter memo %s: %w", name, err)
	}
	if len(b) < memoHeader || !bytes.Equal(b[:len(memoMagic)], memoMagic) {
		return nil, fmt.Errorf("%w: %s: bad header", errMemoCorrupt, name)
	}
	at := len(memoMagic)
	if !bytes.Equal(b[at:at+sha256.Size], input) {
		return nil, fmt.Errorf("%w: %s: made from another module than %.12s", errMemoCorrupt, name, digest)
	}
	if binary.LittleEndian.Uint64(b[at+sha256.Size:]) != m.pages {
		return nil, fmt.Errorf("%w: %s: made for another memory ceiling", errMemoCorrupt, name)
	}
	exe, err := m.exe()
	if err != nil {
		return nil, err
	}
	out := b[memoHeader:]
	if want := memoEntryHeader(memoKey(exe), input, m.pages, out); !hmac.Equal(b[:memoHeader], want) {
		return nil, fmt.Errorf("%w: %s: authentication failed", errMemoCorrupt, name)
	}
	m.touch(path)
	return out, nil
}

// store remembers out as digest's instrumented bytes: written to a
// temporary file (0600) in the memo's directory (0700) and renamed into
// place, so a reader sees a whole entry or none. There is no fsync: an
// entry a crash leaves short fails its HMAC and is written again.
func (m *meterMemo) store(digest string, out []byte) (err error) {
	if m == nil {
		return nil
	}
	path, err := m.path(digest)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("meter memo: %w", err)
	}
	// Nothing is written or pruned (prune deletes what it finds) through
	// a symlink someone put at m.dir, which would reach another directory.
	if fi, err := os.Lstat(m.dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("meter memo: %s is not a plain directory", m.dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("meter memo: %w", err)
	}
	m.prune(filepath.Base(dir), int64(memoHeader+len(out)))
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("meter memo: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	exe, err := m.exe()
	if err != nil {
		return err
	}
	input, err := hex.DecodeString(digest)
	if err != nil || len(input) != sha256.Size {
		return fmt.Errorf("meter memo: module digest %q is not a sha256", digest)
	}
	for _, part := range [][]byte{memoEntryHeader(memoKey(exe), input, m.pages, out), out} {
		if _, err = f.Write(part); err != nil {
			return fmt.Errorf("meter memo: %w", err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("meter memo: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("meter memo: %w", err)
	}
	// Creating the file dated the directory (prune's "last used"); a
	// rename over an old entry does too.
	m.touched.Store(m.now().UnixNano())
	m.writes.Add(1)
	return nil
}

// Bounds on the memo, which holds a directory per executable (~8 MB for
// the engine and the demo's module). A store keeps the most recently used
// directories within all three bounds, its own first; the rest go, so
// rebuilt binaries leave nothing behind for good while two plasmd
// binaries sharing one cache dir (a release and a development build, a
// test binary) each keep their entries. The store's own directory is
// bounded by size too: its oldest entries go first (a long-lived binary
// meeting many modules, or an embedder's many vendor modules).
const (
	memoMaxExecutables = 4
	memoMaxBytes       = 256 << 20
	memoMaxAge         = 7 * 24 * time.Hour
	// memoTmpAge is when a temporary file is taken for a crashed store's.
	memoTmpAge = time.Hour
	// memoTouchEvery is how often a process that only reads marks its
	// directory used again: well within memoMaxAge, so a server running
	// for weeks on a warm memo is never taken for a stale binary.
	memoTouchEvery = 24 * time.Hour
)

// exeUse is one executable's directory as prune sees it.
type exeUse struct {
	name  string
	used  time.Time // the directory's mtime: touched by every store and by a process's first hit
	bytes int64
}

// prune drops what the bounds above exclude, least recently used first,
// counting incoming, the entry about to be stored, in keep's size; and
// temporary files a crash left in keep (pruneOwn). It never follows a symlink:
// one found among the directories is removed as a link. It runs only on a
// store, i.e. when this executable missed.
func (m *meterMemo) prune(keep string, incoming int64) {
	dirs, err := os.ReadDir(m.dir)
	if err != nil {
		return
	}
	now := m.now()
	var others []exeUse
	kept := incoming // bytes of the directories kept so far, keep's first
	for _, d := range dirs {
		path := filepath.Join(m.dir, d.Name())
		fi, err := os.Lstat(path)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			_ = os.RemoveAll(path) // a stray file or a symlink, never followed
			continue
		}
		if d.Name() == keep {
			kept += m.pruneOwn(path, incoming, now)
			continue
		}
		others = append(others, exeUse{name: d.Name(), used: fi.ModTime(), bytes: m.dirBytes(path)})
	}
	sort.Slice(others, func(i, j int) bool { return others[i].used.After(others[j].used) })
	n := 1 // keep's
	for _, u := range others {
		if n < memoMaxExecutables && kept+u.bytes <= m.maxBytes && now.Sub(u.used) <= memoMaxAge {
			n++
			kept += u.bytes
			continue
		}
		_ = os.RemoveAll(filepath.Join(m.dir, u.name))
	}
}

// dirBytes is the size of the entries in dir.
func (m *meterMemo) dirBytes(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// pruneOwn bounds the storing executable's own directory: it removes
// temporary files older than memoTmpAge (a concurrent store's are
// younger) and, least recently used first (lastUse), the entries that
// with incoming would pass maxBytes. It returns the bytes left.
func (m *meterMemo) pruneOwn(dir string, incoming int64, now time.Time) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	type file struct {
		path string
		size int64
		used time.Time
	}
	var files []file
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), ".tmp") {
			if now.Sub(fi.ModTime()) > memoTmpAge {
				_ = os.Remove(path)
			} else {
				n += fi.Size()
			}
			continue
		}
		files = append(files, file{path, fi.Size(), lastUse(fi)})
		n += fi.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if n+incoming <= m.maxBytes {
			break
		}
		if os.Remove(f.path) == nil {
			n -= f.size
		}
	}
	return n
}

// touch marks this executable's directory used, at most once per
// memoTouchEvery per memo, so a binary that only reads the memo, even
// for weeks, is not taken for a stale one by another's prune.
func (m *meterMemo) touch(entry string) {
	now := m.now()
	last := m.touched.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < memoTouchEvery {
		return
	}
	if !m.touched.CompareAndSwap(last, now.UnixNano()) {
		return // another load touched it just now
	}
	_ = os.Chtimes(filepath.Dir(entry), now, now)
}

// readMemoEntry reads an entry that anyone able to write the cache
// directory could have replaced: a symlink is not followed, a FIFO or
// device does not block the load (O_NONBLOCK, then only a regular file
// is read), and nothing past limit is read, so a planted /dev/zero or a
// huge file costs neither a hang nor the host's memory.
func readMemoEntry(path string, limit int64) ([]byte, error) {
	f, fi, err := openCacheEntry(path, 0) // a real use: its access time counts
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file (%s)", errMemoCorrupt, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, over the memo's bound of %d", errMemoCorrupt, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: grew past the memo's bound of %d while read", errMemoCorrupt, limit)
	}
	return b, nil
}

// openCacheEntry opens a cache entry (a wazero entry or a memo entry) as
// whoever could write the cache directory may have left it: a symlink is
// not followed (ELOOP) and a FIFO does not block (O_NONBLOCK), so the
// caller can look at the file's kind before reading a byte. flag adds to
// the open's flags (the probe's oNoAtime).
func openCacheEntry(path string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
