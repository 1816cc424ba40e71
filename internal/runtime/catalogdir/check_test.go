package catalogdir

import (
	"path/filepath"
	"testing"
)

// TestLoadedCatalogsCheck: every catalog the loader builds from the
// shared fixtures and the demo passes catalog.Check, the invariants the
// engine refuses a wire catalog for breaking. (Plasm's 47 loadable
// catalogs were checked the same way when Check was written; they are
// not kept here.)
func TestLoadedCatalogsCheck(t *testing.T) {
	dirs, err := filepath.Glob("../../../testdata/catalogs/*")
	if err != nil {
		t.Fatal(err)
	}
	demo, _ := filepath.Glob("../../../demo/catalogs/*")
	dirs = append(dirs, demo...)
	n := 0
	for _, dir := range dirs {
		cat, err := LoadPath(dir)
		if err != nil {
			continue // not a catalog directory (a README), or tested elsewhere
		}
		n++
		if err := cat.Check(); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	if n < 8 {
		t.Fatalf("checked %d catalogs; the fixtures and the demo have more", n)
	}
}
