package catalogdir

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestCorpus loads every catalog under $PLASMD_CATALOG_CORPUS (e.g. a
// checkout of Plasm's apis/ directory, which is not ours to commit) and
// fails on any that does not load. Directories without domain.yaml or a
// *.cgs.yaml are skipped (Plasm keeps bare OpenAPI files there too). It
// logs one summary line per catalog, as plasmd catalog check prints.
//
//	PLASMD_CATALOG_CORPUS=/tmp/plasm/apis go test ./runtime/catalogdir -run TestCorpus -v
func TestCorpus(t *testing.T) {
	root := os.Getenv("PLASMD_CATALOG_CORPUS")
	if root == "" {
		t.Skip("set PLASMD_CATALOG_CORPUS to a directory of catalogs")
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range dirs {
		p := filepath.Join(root, d.Name())
		_, errD := os.Stat(filepath.Join(p, DomainFile))
		m, _ := filepath.Glob(filepath.Join(p, "*"+CombinedSuffix))
		if d.IsDir() && (errD == nil || len(m) > 0) {
			names = append(names, d.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no catalogs under %s", root)
	}
	views, viewsOff := 0, 0
	for _, name := range names {
		l, err := LoadPathReport(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s:\n%v", name, err)
			continue
		}
		c := l.Catalog
		rels, unavailable := 0, 0
		for _, e := range c.Entities {
			rels += len(e.Relations)
		}
		for _, cp := range c.Capabilities {
			if cp.Unavailable != "" {
				unavailable++
			}
		}
		t.Logf("%-20s %3d entities %4d capabilities (%d not executable here) %3d relations %2d warnings",
			name, len(c.Entities), len(c.Capabilities), unavailable, rels, len(l.Warnings))
		for _, w := range l.Warnings {
			t.Logf("    warning: %v", w)
		}
		for _, vn := range sortedKeys(c.Views) {
			v := c.Views[vn]
			var runs, not []string
			for _, s := range v.Serves {
				if u := c.Capabilities[s].Unavailable; u != "" {
					not = append(not, s+" ("+u+")")
				} else {
					runs = append(runs, s)
				}
			}
			if len(runs) > 0 {
				views++
			} else {
				viewsOff++
			}
			t.Logf("    view %s: runs through %v; not executable here: %v", vn, runs, not)
		}
	}
	t.Logf("%d catalogs loaded; views: %d executable (through at least one capability), %d not executable here", len(names), views, viewsOff)
}
