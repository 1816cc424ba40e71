package server_test

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/lang"
	shared "github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan/plantest"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

// TestLanguageMatrixWireRoundTrip plans every row of the language matrix
// natively, with the session a row opens (its entry and entities, then
// its extensions, taught as a session teaches them), and checks that each
// plan crosses the binary wire form exactly as it crosses JSON.
func TestLanguageMatrixWireRoundTrip(t *testing.T) {
	m := loadMatrix(t)
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	views, err := catalogdir.LoadPath(shared.Path(t, "catalogs", "views"))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*catalog.Catalog{views.EntryID: views}
	for _, c := range cats {
		byID[c.EntryID] = c
	}
	for _, c := range byID {
		mustFreeze(t, c)
	}
	planned := 0
	for _, row := range m.Rows {
		if row.Pending != "" || row.Error != nil {
			continue
		}
		ents := row.Entities
		if ents == nil {
			ents = []string{"Comment", "Issue", "Label", "Project", "User"}
		}
		entry := row.Entry
		if entry == "" {
			entry = "tracker"
		}
		var sm symbol.Map
		var seeds []teaching.Seed
		for _, e := range ents {
			seeds = append(seeds, teaching.Seed{EntryID: entry, Entity: e})
		}
		w, err := teaching.Expose(&sm, teaching.Exposure{}, teaching.Request{Catalogs: byID, Seeds: seeds})
		if err != nil {
			t.Fatalf("%s: %v", row.ID, err)
		}
		exp := w.Exposure
		if len(row.Extend) > 0 {
			seeds = nil
			for _, s := range row.Extend {
				e, n, _ := strings.Cut(s, ":")
				seeds = append(seeds, teaching.Seed{EntryID: e, Entity: n})
			}
			if w, err = teaching.Expose(&sm, exp, teaching.Request{Catalogs: byID, Seeds: seeds}); err != nil {
				t.Fatalf("%s: extend: %v", row.ID, err)
			}
			exp = w.Exposure
		}
		program := row.Program
		for _, e := range sm.Entities {
			program = strings.ReplaceAll(program, "<e:"+e.Name+">", sm.EntitySym(e.EntryID, e.Name))
		}
		p, aerr := lang.Plan(&abi.PlanRequest{Program: program, Symbols: &sm, Entries: exp.Entries()}, byID)
		if aerr != nil {
			t.Errorf("%s: %q does not plan natively: %v", row.ID, program, aerr)
			continue
		}
		planned++
		if err := plantest.WireRoundTrip(p); err != nil {
			t.Errorf("%s: %v", row.ID, err)
		}
	}
	if planned < 40 {
		t.Errorf("only %d matrix rows planned", planned)
	}
	t.Logf("%d matrix plans round-tripped", planned)
}
