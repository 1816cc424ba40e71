package teaching_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/teaching/teachingtest"
)

// TestRandomWaves checks the invariants agents rely on over random sessions:
// symbols never change meaning, every row is one tab-separated line whose
// expression uses only symbols the map defines, repeating a wave teaches
// nothing, and the session state survives a JSON round trip (sessions live
// in a store). Planner acceptance of the same rows is checked in
// server/teaching/langcheck.
func TestRandomWaves(t *testing.T) {
	cats := fixture.Catalogs(t)
	for seed := uint64(1); seed <= 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		m := &symbol.Map{}
		var ex teaching.Exposure
		seeded := map[teaching.Seed]bool{}
		for i, req := range teachingtest.RandomRequests(r, cats, 1+r.IntN(5)) {
			before := m.Clone()
			w, err := teaching.Expose(m, ex, req)
			if err != nil {
				t.Fatalf("seed %d wave %d: %v", seed, i, err)
			}
			assertPrefix(t, before, m)
			for _, s := range req.Seeds {
				seeded[s] = true
			}
			assertExact(t, w.Exposure, seeded)
			text := teaching.RenderDelta(m, w)
			if i == 0 || len(ex.Entities) == 0 {
				if w.Kind != teaching.First {
					t.Fatalf("seed %d wave %d: kind %v, want first", seed, i, w.Kind)
				}
				text = teaching.RenderFirst(m, w)
			}
			checkText(t, text, m, cats)

			again, err := teaching.Expose(m.Clone(), w.Exposure, req)
			if err != nil || !again.Empty() || !again.Delta.Empty() {
				t.Fatalf("seed %d wave %d: repeating the wave gave %v, %+v, %v", seed, i, again.Kind, again.Delta, err)
			}

			m, ex = roundTrip(t, m, w.Exposure)
		}
	}
}

func assertPrefix(t *testing.T, before, after *symbol.Map) {
	t.Helper()
	ok := isPrefix(before.Entities, after.Entities) && isPrefix(before.Methods, after.Methods) &&
		isPrefix(before.Slots, after.Slots) && isPrefix(before.Relations, after.Relations) &&
		isPrefix(before.Values, after.Values)
	if !ok {
		t.Fatalf("earlier symbol assignments changed:\nbefore %+v\nafter  %+v", before, after)
	}
}

// assertExact checks SeedsExact: the exposed entities are exactly the
// entities seeded so far, each with an e#, none reached through a relation.
func assertExact(t *testing.T, ex teaching.Exposure, seeded map[teaching.Seed]bool) {
	t.Helper()
	if len(ex.Entities) != len(seeded) {
		t.Fatalf("exposed %d entities %+v, seeded %d %v", len(ex.Entities), ex.Entities, len(seeded), seeded)
	}
	for _, e := range ex.Entities {
		if !e.Seeded || !seeded[teaching.Seed{EntryID: e.EntryID, Entity: e.Entity}] {
			t.Fatalf("exposed %s:%s without seeding it", e.EntryID, e.Entity)
		}
	}
}

func isPrefix[T comparable](a, b []T) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

func checkText(t *testing.T, text string, m *symbol.Map, cats map[string]*catalog.Catalog) {
	t.Helper()
	body := text
	if strings.HasPrefix(text, "#") {
		head, rest, ok := strings.Cut(text, "\n\n")
		if !ok {
			t.Fatal("first wave has no blank line after the preamble")
		}
		for _, l := range strings.Split(head, "\n") {
			if !strings.HasPrefix(l, "#") || strings.Contains(l, "\t") {
				t.Fatalf("bad preamble line %q", l)
			}
		}
		hdr, rows, _ := strings.Cut(rest, "\n")
		if hdr != teaching.Header {
			t.Fatalf("header = %q", hdr)
		}
		body = rows
	}
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if line == "" {
			continue
		}
		if strings.Count(line, "\t") != 1 {
			t.Fatalf("row %q has %d tabs", line, strings.Count(line, "\t"))
		}
		expr, _, _ := strings.Cut(line, "\t")
		if bad := teachingtest.NonSymbols(expr); len(bad) > 0 {
			t.Fatalf("row %q uses wire names %v", line, bad)
		}
		for _, s := range teachingtest.Symbols(expr) {
			if !defined(m, s) {
				t.Fatalf("row %q uses undefined symbol %s", line, s)
			}
		}
		run := teachingtest.Runnable(expr, m, cats)
		if strings.Contains(run, "$") || strings.Contains(run, "..") {
			t.Fatalf("runnable form of %q still has a cue: %q", expr, run)
		}
	}
}

func defined(m *symbol.Map, s string) bool {
	k, n := symbol.Parse(s)
	var ok bool
	switch k {
	case symbol.KindEntity:
		_, ok = m.Entity(n)
	case symbol.KindMethod:
		_, ok = m.Method(n)
	case symbol.KindSlot:
		_, ok = m.Slot(n)
	case symbol.KindRelation:
		_, ok = m.Relation(n)
	case symbol.KindValue:
		_, ok = m.ValueAt(n)
	}
	return ok
}

func roundTrip(t *testing.T, m *symbol.Map, ex teaching.Exposure) (*symbol.Map, teaching.Exposure) {
	t.Helper()
	var state struct {
		Map      *symbol.Map       `json:"map"`
		Exposure teaching.Exposure `json:"exposure"`
	}
	raw, err := json.Marshal(struct {
		Map      *symbol.Map       `json:"map"`
		Exposure teaching.Exposure `json:"exposure"`
	}{m, ex})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(state.Exposure, ex) {
		t.Fatalf("exposure changed in a JSON round trip:\n%+v\n%+v", ex, state.Exposure)
	}
	return state.Map, state.Exposure
}
