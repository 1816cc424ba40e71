package langcheck_test

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/teaching/teachingtest"
)

// demoCatalogs are the catalogs plasmd serves with --demo. The URL is never
// dialled: planning needs no backend.
func demoCatalogs(t *testing.T) map[string]*catalog.Catalog {
	t.Helper()
	list, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*catalog.Catalog{}
	for _, c := range list {
		out[c.EntryID] = c
	}
	return out
}

// demoSeeds lists every seedable (entry, entity) of the demo, sorted, so
// random picks depend only on the PRNG seed.
func demoSeeds(cats map[string]*catalog.Catalog) []teaching.Seed {
	var out []teaching.Seed
	for id, c := range cats {
		for name, e := range c.Entities {
			if !e.Abstract {
				out = append(out, teaching.Seed{EntryID: id, Entity: name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].EntryID != out[j].EntryID {
			return out[i].EntryID < out[j].EntryID
		}
		return out[i].Entity < out[j].Entity
	})
	return out
}

// demoIntents mixes read-only goals with ones whose words overlap the demo's
// mutators, so both gated and exposed mutator rows get planned.
var demoIntents = []string{
	"", "triage open bugs and read their comments", "close stale issues and comment why",
	"create a card and move it to done", "archive finished cards and assign owners",
	"record a ledger transfer between accounts", "label issues and update titles",
}

// TestDemoWavesStableAndPlannable drives random sessions of expand and
// federate waves over the demo catalogs and checks the two promises agents
// rely on: an earlier e#/m#/p#/r#/v# never changes meaning, and every taught
// row, with its fill-in cues replaced, plans against the map that taught it.
func TestDemoWavesStableAndPlannable(t *testing.T) {
	cats := demoCatalogs(t)
	all := demoSeeds(cats)
	var capNames []string
	for _, c := range cats {
		for _, cp := range c.Capabilities {
			capNames = append(capNames, cp.Name)
		}
	}
	slices.Sort(capNames)
	kinds := map[teaching.WaveKind]int{}
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 23))
		intent := demoIntents[r.IntN(len(demoIntents))]
		m := &symbol.Map{}
		var ex teaching.Exposure
		var history []*symbol.Map
		for wave := range 1 + r.IntN(5) {
			req := teaching.Request{Catalogs: cats, Intent: intent}
			for range 1 + r.IntN(3) {
				req.Seeds = append(req.Seeds, all[r.IntN(len(all))])
			}
			if r.IntN(3) == 0 {
				req.Ranked = []string{capNames[r.IntN(len(capNames))]}
			}
			w, err := teaching.Expose(m, ex, req)
			if err != nil {
				t.Fatalf("seed %d wave %d %v: %v", seed, wave, req.Seeds, err)
			}
			kinds[w.Kind]++
			ex = w.Exposure
			history = append(history, m.Clone())
			for i, h := range history {
				if !mapPrefix(h, m) {
					t.Fatalf("seed %d wave %d: assignments of wave %d changed", seed, wave, i)
				}
			}
			for _, row := range teaching.Rows(m, w) {
				if k, _ := symbol.Parse(row.Expr); k == symbol.KindValue || k == symbol.KindSlot {
					continue
				}
				program := teachingtest.Runnable(row.Expr, m, cats)
				if strings.Contains(program, "$") {
					t.Fatalf("row %q keeps a cue: %q", row.String(), program)
				}
				preq := &abi.PlanRequest{Program: program, Symbols: m.Clone(), Entries: ex.Entries()}
				if _, aerr := lang.Plan(preq, cats); aerr != nil {
					t.Errorf("seed %d wave %d (%v): row %q → %q rejected: %v (hint: %s)",
						seed, wave, w.Kind, row.String(), program, aerr, aerr.Hint)
				}
			}
		}
	}
	// The generator must actually reach every kind of wave, or the test
	// proves less than it claims.
	for _, k := range []teaching.WaveKind{teaching.First, teaching.Expand, teaching.Federate, teaching.Unchanged} {
		if kinds[k] == 0 {
			t.Errorf("no %v wave generated: %v", k, kinds)
		}
	}
}

func mapPrefix(a, b *symbol.Map) bool {
	return prefix(a.Entities, b.Entities) && prefix(a.Methods, b.Methods) && prefix(a.Slots, b.Slots) &&
		prefix(a.Relations, b.Relations) && prefix(a.Values, b.Values)
}

func prefix[T comparable](a, b []T) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }
