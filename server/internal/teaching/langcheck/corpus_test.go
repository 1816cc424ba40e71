package langcheck_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/teaching/teachingtest"
)

// TestCorpusTaughtRowsPlan teaches every entity of every catalog under
// $PLASMD_CATALOG_CORPUS (e.g. Plasm's apis/, which is not ours to commit)
// and plans each taught row: what plasmd teaches about a real catalog must
// be a program it accepts.
//
//	PLASMD_CATALOG_CORPUS=/tmp/plasm/apis go test ./server/internal/teaching/langcheck -run TestCorpus -v
func TestCorpusTaughtRowsPlan(t *testing.T) {
	root := os.Getenv("PLASMD_CATALOG_CORPUS")
	if root == "" {
		t.Skip("set PLASMD_CATALOG_CORPUS to a directory of catalogs")
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(root, d.Name(), catalogdir.DomainFile)); err != nil {
			continue
		}
		cat, err := catalogdir.LoadPath(filepath.Join(root, d.Name()))
		if err != nil {
			t.Errorf("%s: %v", d.Name(), err)
			continue
		}
		cats := map[string]*catalog.Catalog{cat.EntryID: cat}
		var seeds []teaching.Seed
		for name, e := range cat.Entities {
			if !e.Abstract {
				seeds = append(seeds, teaching.Seed{EntryID: cat.EntryID, Entity: name})
			}
		}
		sort.Slice(seeds, func(i, j int) bool { return seeds[i].Entity < seeds[j].Entity })
		m := &symbol.Map{}
		w, err := teaching.Expose(m, teaching.Exposure{}, teaching.Request{Catalogs: cats, Seeds: seeds, Intent: "create update delete send archive add remove"})
		if err != nil {
			t.Errorf("%s: expose: %v", cat.EntryID, err)
			continue
		}
		rows, bad := 0, 0
		for _, row := range teaching.Rows(m, w) {
			if k, _ := symbol.Parse(row.Expr); k == symbol.KindValue || k == symbol.KindSlot {
				continue
			}
			rows++
			program := teachingtest.Runnable(row.Expr, m, cats)
			if _, aerr := lang.Plan(&abi.PlanRequest{Program: program, Symbols: m.Clone(), Entries: w.Exposure.Entries()}, cats); aerr != nil {
				bad++
				if bad <= 3 {
					t.Errorf("%s: row %q → %q rejected: %v", cat.EntryID, row.String(), program, aerr)
				}
			}
		}
		t.Logf("%-20s %4d taught rows, %d rejected", cat.EntryID, rows, bad)
	}
}
