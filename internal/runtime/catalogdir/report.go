package catalogdir

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Loaded is one catalog together with the warnings found while loading it:
// places where the catalog is wrong in a way Plasm tolerates (a stray or
// duplicate key, a mapping for no capability). The catalog still loads.
type Loaded struct {
	Catalog  *catalog.Catalog
	Warnings ErrorList
}

// LoadPathReport is LoadPath that also returns the catalog's warnings.
func LoadPathReport(p string) (Loaded, error) {
	var warns ErrorList
	c, err := loadPath(p, &warns)
	return Loaded{Catalog: c, Warnings: warns}, err
}

// LoadAllReport is LoadAll that also returns each catalog's warnings, in
// the same order as the catalogs.
func LoadAllReport(fsys fs.FS, root string) ([]Loaded, error) {
	return loadAllReport(fsys, root, func(p string) string { return p })
}

func loadAllReport(fsys fs.FS, root string, display func(string) string) ([]Loaded, error) {
	report := map[string]ErrorList{}
	cats, err := loadAll(fsys, root, report, display)
	out := make([]Loaded, len(cats))
	for i, c := range cats {
		out[i] = Loaded{Catalog: c, Warnings: report[c.EntryID]}
	}
	return out, err
}

// LoadDirReport loads path as LoadAllReport does, with file names in
// messages starting with path as given.
func LoadDirReport(path string) ([]Loaded, error) {
	return loadAllReport(os.DirFS(path), ".", func(p string) string {
		return filepath.Join(path, filepath.FromSlash(p))
	})
}
