package catalogdir

import (
	"fmt"
	"io"
	"io/fs"
	"path"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// ReadModules returns the module.wasm bytes of every catalog in cats that
// declares a vendor module, keyed by entry id. root is the directory the
// catalogs were loaded from with LoadAll (each catalog lives in
// root/<entry id>/). The bytes are not checked here: the sandbox verifies
// them against the catalog's pin when it registers the catalog.
func ReadModules(fsys fs.FS, root string, cats []*catalog.Catalog) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, c := range cats {
		if c == nil || c.Module == nil {
			continue
		}
		p := path.Join(root, c.EntryID, ModuleFile)
		b, err := readModule(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("catalogdir: catalog %q: %w", c.EntryID, err)
		}
		out[c.EntryID] = b
	}
	return out, nil
}

// MaxModuleSize is the largest module.wasm the loader reads: ten times
// the engine (6 MB). wazero's decoder allocates up to about 16 times a
// module's bytes while compiling it, even within the sandbox's screening
// caps, so the file's size bounds that too.
const MaxModuleSize = 64 << 20

// readModule reads a vendor module, refusing one over MaxModuleSize
// without reading more than one byte past it.
func readModule(fsys fs.FS, name string) ([]byte, error) {
	f, err := openRegular(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxModuleSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > MaxModuleSize {
		return nil, fmt.Errorf("%s is larger than the %d-byte (64 MiB) limit for a vendor module", name, MaxModuleSize)
	}
	return b, nil
}
