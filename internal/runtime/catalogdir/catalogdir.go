// Package catalogdir loads Plasm-format catalog directories into
// catalog.Catalog values, with file:line:column errors.
//
// A catalog is a directory holding domain.yaml and mappings.yaml (and, for a
// vendor module, module.wasm), or a single <name>.cgs.yaml file carrying the
// domain keys plus a mappings: map. The loader walks the YAML node tree
// itself rather than unmarshalling into structs, so that every unknown key is
// an error and every error names its file, line and column. It reports every
// problem it finds in a catalog (up to a cap), not just the first.
//
// The format is described in shared/design/catalog-format.md; the model it
// produces is guest/catalog.
package catalogdir

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Names of the files that make up a catalog.
const (
	DomainFile     = "domain.yaml"
	MappingsFile   = "mappings.yaml"
	ModuleFile     = "module.wasm"
	CombinedSuffix = ".cgs.yaml"
)

// ErrNotCatalog is wrapped by the error returned for a path that holds no
// catalog at all (neither domain.yaml/mappings.yaml nor a *.cgs.yaml).
var ErrNotCatalog = errors.New("not a catalog")

var validEntryID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// loader accumulates one catalog and the problems found in it.
type loader struct {
	entryID      string
	cat          *catalog.Catalog
	errs         ErrorList
	warns        ErrorList // problems that do not stop loading
	warnsOut     *ErrorList
	checks       []func() // cross-reference checks, run once every file is parsed
	capSites     map[string]site
	moduleSite   site
	mappingsName string // where mappings live, for messages
	dropped      int    // problems not recorded past maxErrors

	// domainDoc and mappingsDoc place a catalog.Check failure (checkpos.go).
	domainDoc, mappingsDoc doc

	// Filled once parsing is done, for the cross-reference checks.
	valueSites                        map[string]site
	valueNames, entityNames, capNames []string // sorted
	paramSets                         map[string]map[string]bool

	// broken holds "kind:name" for declarations that exist but could not be
	// read, so that references to them are not also reported as undeclared.
	broken map[string]bool
	// viewReasons holds why each view cannot run here (views.go).
	viewReasons map[string][]string
	// viewRels maps "Entity.relation" to the view that outputs it: one
	// view per relation, so following it is never ambiguous.
	viewRels map[string]string
}

func (l *loader) later(f func()) { l.checks = append(l.checks, f) }

// full reports whether the problem cap is reached; past it the loader stops
// recording (and computing hints for) further problems.
func (l *loader) full() bool { return len(l.errs) >= maxErrors }

// source is one file that contributes to the digest.
type source struct {
	name string // base name
	data []byte
}

// Load reads the catalog in dir of fsys: a directory with domain.yaml and
// mappings.yaml, a directory with a single *.cgs.yaml, or a *.cgs.yaml file
// itself. entryID defaults to the directory's base name (the file's name less
// .cgs.yaml for a file). Problems in the catalog come back as an ErrorList
// whose file names are paths in fsys; I/O failures are wrapped fs errors.
func Load(fsys fs.FS, dir, entryID string) (*catalog.Catalog, error) {
	return load(fsys, dir, entryID, func(p string) string { return p }, nil)
}

// LoadPath loads a catalog from disk: a catalog directory or a .cgs.yaml
// file. Error file names start with path as given.
func LoadPath(p string) (*catalog.Catalog, error) {
	return loadPath(p, nil)
}

func loadPath(p string, warns *ErrorList) (*catalog.Catalog, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("catalogdir: %w", err)
	}
	if st.IsDir() {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("catalogdir: %w", err)
		}
		return load(os.DirFS(p), ".", filepath.Base(abs), func(fp string) string {
			return filepath.Join(p, filepath.FromSlash(fp))
		}, warns)
	}
	parent := filepath.Dir(p)
	return load(os.DirFS(parent), filepath.Base(p), "", func(fp string) string {
		return filepath.Join(parent, filepath.FromSlash(fp))
	}, warns)
}

// LoadAll loads every catalog directly under root: each subdirectory and each
// *.cgs.yaml file (names starting with "." or "_" are skipped), sorted by
// entry id. A broken catalog does not hide the others: the good ones are
// returned together with an ErrorList that covers every broken one.
func LoadAll(fsys fs.FS, root string) ([]*catalog.Catalog, error) {
	return loadAll(fsys, root, nil, func(p string) string { return p })
}

func loadAll(fsys fs.FS, root string, report map[string]ErrorList, display func(string) string) ([]*catalog.Catalog, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("catalogdir: reading catalog root: %w", err)
	}
	var (
		cats []*catalog.Catalog
		errs ErrorList
		from = map[string]string{} // entry id -> where it was loaded from
	)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		p := path.Join(root, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := fs.Stat(fsys, p); err == nil {
				isDir = st.IsDir()
			}
		}
		if !isDir && !strings.HasSuffix(name, CombinedSuffix) {
			continue
		}
		var warns ErrorList
		c, err := load(fsys, p, "", display, &warns)
		if err != nil {
			var el ErrorList
			if errors.As(err, &el) {
				errs = append(errs, el...)
			} else {
				msg := strings.TrimPrefix(err.Error(), "catalogdir: ")
				errs = append(errs, &Error{File: display(p), Msg: strings.TrimPrefix(strings.TrimPrefix(msg, p+": "), display(p)+": ")})
			}
			continue
		}
		if prev, dup := from[c.EntryID]; dup {
			errs = append(errs, &Error{File: display(p), Msg: fmt.Sprintf("entry id %q is already taken by %s", c.EntryID, display(prev))})
			continue
		}
		from[c.EntryID] = p
		cats = append(cats, c)
		if report != nil {
			report[c.EntryID] = warns
		}
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i].EntryID < cats[j].EntryID })
	// An alias that shadows another entry would make lookups ambiguous;
	// report it and let the registry decide what to expose.
	aliasOf := map[string]string{}
	for _, c := range cats {
		for _, a := range c.RegistryAliases {
			switch other, taken := aliasOf[a]; {
			case from[a] != "":
				errs = append(errs, &Error{File: from[c.EntryID], Msg: fmt.Sprintf("registry_aliases: %q is the entry id of %s", a, from[a])})
			case taken:
				errs = append(errs, &Error{File: from[c.EntryID], Msg: fmt.Sprintf("registry_aliases: %q is also an alias of %q", a, other)})
			default:
				aliasOf[a] = c.EntryID
			}
		}
	}
	errs.Sort()
	return cats, errs.Err()
}

func load(fsys fs.FS, dir, entryID string, display func(string) string, warns *ErrorList) (*catalog.Catalog, error) {
	if !fs.ValidPath(dir) {
		return nil, fmt.Errorf("catalogdir: invalid path %q", dir)
	}
	st, err := fs.Stat(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("catalogdir: %w", err)
	}
	if !st.IsDir() {
		base := path.Base(dir)
		if !strings.HasSuffix(base, CombinedSuffix) {
			return nil, fmt.Errorf("catalogdir: %s: %w (expected a directory or a *%s file)", display(dir), ErrNotCatalog, CombinedSuffix)
		}
		if entryID == "" {
			entryID = strings.TrimSuffix(base, CombinedSuffix)
		}
		return loadCombined(fsys, dir, entryID, display, warns)
	}
	if entryID == "" {
		entryID = path.Base(dir)
		if entryID == "." {
			return nil, fmt.Errorf("catalogdir: cannot derive an entry id from %q; pass one", dir)
		}
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("catalogdir: %w", err)
	}
	var hasDomain, hasMappings, hasModule bool
	var combined []string
	for _, e := range entries {
		switch n := e.Name(); {
		case n == DomainFile:
			hasDomain = true
		case n == MappingsFile:
			hasMappings = true
		case n == ModuleFile:
			hasModule = !e.IsDir()
		case strings.HasSuffix(n, CombinedSuffix) && !e.IsDir():
			combined = append(combined, n)
		}
	}
	dirName := display(dir)
	switch {
	case hasDomain || hasMappings:
		if len(combined) > 0 {
			return nil, ErrorList{{File: dirName, Msg: fmt.Sprintf("holds both %s/%s and %s; keep one form", DomainFile, MappingsFile, strings.Join(combined, ", "))}}
		}
		var missing ErrorList
		for _, f := range []struct {
			name string
			ok   bool
		}{{DomainFile, hasDomain}, {MappingsFile, hasMappings}} {
			if !f.ok {
				missing = append(missing, &Error{File: display(path.Join(dir, f.name)), Msg: fmt.Sprintf("missing: a catalog directory needs both %s and %s", DomainFile, MappingsFile)})
			}
		}
		if len(missing) > 0 {
			return nil, missing
		}
		return loadSplit(fsys, dir, entryID, hasModule, display, warns)
	case len(combined) == 1:
		return loadCombined(fsys, path.Join(dir, combined[0]), entryID, display, warns)
	case len(combined) > 1:
		return nil, ErrorList{{File: dirName, Msg: fmt.Sprintf("holds several combined catalogs (%s); keep one per directory", strings.Join(combined, ", "))}}
	default:
		return nil, fmt.Errorf("catalogdir: %s: %w: no %s/%s or *%s", dirName, ErrNotCatalog, DomainFile, MappingsFile, CombinedSuffix)
	}
}

func newLoader(entryID string) *loader {
	return &loader{
		entryID: entryID,
		cat: &catalog.Catalog{
			EntryID:      entryID,
			Entities:     map[string]*catalog.Entity{},
			Capabilities: map[string]*catalog.Capability{},
			Mappings:     map[string]*catalog.Mapping{},
		},
		capSites:   map[string]site{},
		valueSites: map[string]site{},
		paramSets:  map[string]map[string]bool{},
		broken:     map[string]bool{},
	}
}

func loadSplit(fsys fs.FS, dir, entryID string, hasModule bool, display func(string) string, warns *ErrorList) (*catalog.Catalog, error) {
	l := newLoader(entryID)
	l.warnsOut = warns
	l.mappingsName = MappingsFile
	if !validEntryID.MatchString(entryID) {
		return nil, ErrorList{{File: display(dir), Msg: fmt.Sprintf("entry id %q must be 1-128 letters, digits, '_', '-' or '.', starting with a letter or digit", entryID)}}
	}
	dp := &parser{l: l, file: display(path.Join(dir, DomainFile))}
	mp := &parser{l: l, file: display(path.Join(dir, MappingsFile))}
	ddata, derr := readFile(fsys, path.Join(dir, DomainFile))
	mdata, merr := readFile(fsys, path.Join(dir, MappingsFile))
	if derr != nil || merr != nil {
		return nil, errors.Join(derr, merr)
	}
	droot, dok := dp.parseYAML(ddata)
	if dok {
		l.parseDomain(dp, droot, false)
	}
	mroot, mok := mp.parseYAML(mdata)
	if mok {
		l.parseMappings(mp, "", nil, mroot)
	}
	l.domainDoc, l.mappingsDoc = doc{p: dp, root: droot}, doc{p: mp, root: mroot}
	if dok && mok {
		l.finish()
		switch {
		case l.cat.Module != nil && !hasModule:
			l.moduleSite.p.errorf(l.moduleSite.key, "module: declared, but %s has no %s", display(dir), ModuleFile)
		case l.cat.Module == nil && hasModule:
			l.errs = append(l.errs, &Error{File: display(path.Join(dir, ModuleFile)), Msg: fmt.Sprintf("present, but %s declares no module: {sha256, hooks} to pin it", DomainFile)})
		}
	}
	return l.result(source{DomainFile, ddata}, source{MappingsFile, mdata})
}

func loadCombined(fsys fs.FS, file, entryID string, display func(string) string, warns *ErrorList) (*catalog.Catalog, error) {
	l := newLoader(entryID)
	l.warnsOut = warns
	l.mappingsName = "mappings"
	if !validEntryID.MatchString(entryID) {
		return nil, ErrorList{{File: display(file), Msg: fmt.Sprintf("entry id %q must be 1-128 letters, digits, '_', '-' or '.', starting with a letter or digit", entryID)}}
	}
	data, err := readFile(fsys, file)
	if err != nil {
		return nil, err
	}
	p := &parser{l: l, file: display(file)}
	root, ok := p.parseYAML(data)
	if site := interchangeSite(root); ok && site != nil {
		p.errorf(site, "top level: this file is Plasm's CGS interchange form (a serialized CGS, with %s here), which plasmd does not load; "+
			"write the authoring form: %s + %s, or one %s file with the domain keys and a mappings: map", site.Value, DomainFile, MappingsFile, CombinedSuffix)
		return l.result(source{path.Base(file), data})
	}
	if ok {
		mk, mv := l.parseDomain(p, root, true)
		l.parseMappings(p, "mappings", mk, mv)
		l.domainDoc, l.mappingsDoc = doc{p: p, root: root}, doc{p: p, root: mv, ctx: "mappings"}
		l.finish()
		if l.cat.Module != nil {
			l.moduleSite.p.errorf(l.moduleSite.key, "module: a vendor module needs a catalog directory with %s, not a single %s file", ModuleFile, CombinedSuffix)
		}
	}
	return l.result(source{path.Base(file), data})
}

// finish runs the cross-reference checks and the catalog-wide ones.
func (l *loader) finish() {
	l.valueNames = keysOf(l.cat.Values)
	l.entityNames = keysOf(l.cat.Entities)
	l.capNames = keysOf(l.cat.Capabilities)
	l.checkArrayCycles()
	for _, f := range l.checks {
		if l.full() {
			l.dropped++
			continue
		}
		f()
	}
	l.finishViews()
	for name, s := range l.capSites {
		if l.cat.Mappings[name] == nil && !l.broken["mapping:"+name] {
			s.p.errorf(s.key, "capabilities.%s: no mapping for this capability in %s (a capability served by the module needs one with transport: wasm)", name, l.mappingsName)
		}
	}
}

// result returns the catalog, or every problem found, sorted and capped.
func (l *loader) result(srcs ...source) (*catalog.Catalog, error) {
	if l.warnsOut != nil {
		l.warns.Sort()
		*l.warnsOut = append(*l.warnsOut, l.warns...)
	}
	if len(l.errs) > 0 {
		l.errs.Sort()
		if l.dropped > 0 {
			last := l.errs[len(l.errs)-1]
			l.errs = append(l.errs, &Error{File: last.File, Line: last.Line, Column: last.Column, Msg: "too many errors; stopping here"})
		}
		return nil, l.errs
	}
	// The engine refuses a catalog that breaks one of catalog.Check's
	// invariants (bounds included) when an instance loads it, on every
	// call; refusing it here, at startup, names the catalog once instead.
	// The loader's own checks (bounds.go among them) leave Check nothing
	// to find (TestCheckPositions); should it still find something, the
	// problem is placed at the element it names (checkpos.go).
	if err := l.cat.Check(); err != nil {
		l.placeCheckError(err)
		return nil, l.errs
	}
	l.cat.Digest = digest(srcs)
	return l.cat, nil
}

// digest hashes the source files in name order, each as name, NUL, 8-byte
// big-endian length and contents, so that no two file sets collide by
// concatenation. module.wasm is not part of it: the module carries its own
// digest, pinned in domain.yaml.
func digest(srcs []source) string {
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].name < srcs[j].name })
	h := sha256.New()
	var n [8]byte
	for _, s := range srcs {
		h.Write([]byte(s.name))
		h.Write([]byte{0})
		binary.BigEndian.PutUint64(n[:], uint64(len(s.data)))
		h.Write(n[:])
		h.Write(s.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// openRegular opens name only if it is a regular file (a symlink to one
// is fine). It asks first, without opening: opening a FIFO blocks until
// something writes to it, and a catalog directory holding one hung
// `plasmd catalog check` and a server's start for ever; a device could be
// read without end.
func openRegular(fsys fs.FS, name string) (fs.File, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return nil, fmt.Errorf("%s is a directory", name)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%s)", name, st.Mode().Type())
	}
	return fsys.Open(name)
}

// readFile reads a source file, refusing one over MaxFileSize before
// reading it whole.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := openRegular(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("catalogdir: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("catalogdir: reading %s: %w", name, err)
	}
	return data, nil
}
