package teaching_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

// neighbourhood lists the non-abstract entities within hops relation hops
// of start, sorted: what a "dump everything nearby" prompt teaches.
func neighbourhood(c *catalog.Catalog, start string, hops int) []string {
	near := map[string]bool{start: true}
	frontier := []string{start}
	for range hops {
		var next []string
		for _, name := range frontier {
			for _, rel := range c.Entities[name].Relations {
				if t := c.Entities[rel.Target]; t != nil && !t.Abstract && !near[rel.Target] {
					near[rel.Target] = true
					next = append(next, rel.Target)
				}
			}
		}
		frontier = next
	}
	out := make([]string, 0, len(near))
	for n := range near {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// firstWave exposes entities of c in one wave and renders the first
// teaching text.
func firstWave(t *testing.T, c *catalog.Catalog, entities []string) (string, teaching.Wave, *symbol.Map) {
	t.Helper()
	req := teaching.Request{Catalogs: map[string]*catalog.Catalog{c.EntryID: c}}
	for _, e := range entities {
		req.Seeds = append(req.Seeds, teaching.Seed{EntryID: c.EntryID, Entity: e})
	}
	m := &symbol.Map{}
	w, err := teaching.Expose(m, teaching.Exposure{}, req)
	if err != nil {
		t.Fatal(err)
	}
	return teaching.RenderFirst(m, w), w, m
}

func tableRows(text string) int {
	_, rows, _ := strings.Cut(text, teaching.Header+"\n")
	return strings.Count(rows, "\n")
}

// TestFirstWaveFigures compares, for a PokeAPI-like and a GitHub-like
// catalog of our own (testdata/catalogs), the SeedsExact first wave for one
// seed with the seed plus its relation targets (what plasmd taught before)
// and with the full two-hop dump. The figures go to the README; the test
// asserts only what SeedsExact promises, never sizes.
func TestFirstWaveFigures(t *testing.T) {
	for _, tc := range []struct{ file, seed string }{
		{"pokeapi.cgs.yaml", "Type"},
		{"github.cgs.yaml", "Repository"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, err := catalogdir.LoadPath("testdata/catalogs/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			exact, w, m := firstWave(t, c, []string{tc.seed})
			if len(w.Exposure.Entities) != 1 || len(m.Entities) != 1 {
				t.Fatalf("first wave exposes %+v, want only %s", w.Exposure.Entities, tc.seed)
			}
			// Every materialisable relation is taught, by the target's
			// wire name unless the target is the seed itself.
			for _, rn := range c.Entities[tc.seed].RelOrder {
				rel := c.Entities[tc.seed].Relations[rn]
				sym := m.RelationSym(c.EntryID, tc.seed, rn)
				if sym == "" {
					t.Errorf("relation %s has no r#", rn)
					continue
				}
				target := rel.Target
				if target == tc.seed {
					target = "e1"
				}
				if !strings.Contains(exact, "."+sym+"\trelation e1 → ") || !strings.Contains(exact, "→ "+target) &&
					!strings.Contains(exact, "→ ["+target+"]") {
					t.Errorf("no row teaching %s (%s) toward %s in:\n%s", sym, rn, target, exact)
				}
			}
			oneHop, _, _ := firstWave(t, c, neighbourhood(c, tc.seed, 1))
			near := neighbourhood(c, tc.seed, 2)
			dump, _, _ := firstWave(t, c, near)
			if tableRows(exact) >= tableRows(dump) || len(exact) >= len(dump) {
				t.Errorf("the exact first wave (%d rows) is not smaller than the two-hop dump (%d rows)", tableRows(exact), tableRows(dump))
			}
			for _, f := range []struct {
				name string
				text string
			}{
				{"SeedsExact first wave (" + tc.seed + ")", exact},
				{"seed + relation targets (" + itoa(len(neighbourhood(c, tc.seed, 1))) + " entities)", oneHop},
				{"two-hop dump (" + itoa(len(near)) + " entities)", dump},
			} {
				b, tok := teaching.Size(f.text)
				_, rows, _ := strings.Cut(f.text, teaching.Header+"\n")
				t.Logf("%-8s %-40s %4d rows %6d bytes (%5d without the preamble) ~%5d tokens",
					c.EntryID, f.name, tableRows(f.text), b, len(rows), tok)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
