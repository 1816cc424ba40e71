package catalogdir

import (
	"fmt"
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
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("catalogdir: catalog %q: reading %s: %w", c.EntryID, p, err)
		}
		out[c.EntryID] = b
	}
	return out, nil
}
