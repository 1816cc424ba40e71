package sandbox

import (
	"math/rand/v2"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Embedded relations in the differential decode test: every relation a
// decode spec reads from inside its parent's answer (from_parent_get, a
// declared cardinality-one reference) and every chain of two of them,
// with generated values of the right shape and of the wrong one (an
// array where one object is declared, null, missing).

// embeddedRels names ent's embedded relations and chains of two.
func embeddedRels(cat *catalog.Catalog, ent *catalog.Entity) []string {
	var out []string
	for _, r := range ent.RelOrder {
		if _, ok := cat.EmbeddedPath(ent.Name, r); !ok {
			continue
		}
		out = append(out, r)
		t := cat.Entities[ent.Relations[r].Target]
		if t == nil {
			continue
		}
		for _, r2 := range t.RelOrder {
			if _, ok := cat.EmbeddedPath(t.Name, r2); ok {
				out = append(out, r+"."+r2)
			}
		}
	}
	return out
}

// embedHop is one relation of an embedded chain as the generator sees it.
type embedHop struct {
	path   []catalog.PathStep
	one    bool
	target *catalog.Entity
}

func embedHops(cat *catalog.Catalog, ent *catalog.Entity, chain string) []embedHop {
	var hops []embedHop
	names := []string{chain}
	if ent.Relations[chain] == nil {
		names = splitDots(chain)
	}
	for _, n := range names {
		rel := ent.Relations[n]
		path, ok := cat.EmbeddedPath(ent.Name, n)
		if rel == nil || !ok || cat.Entities[rel.Target] == nil {
			return nil
		}
		ent = cat.Entities[rel.Target]
		hops = append(hops, embedHop{path: path, one: rel.Cardinality == "one", target: ent})
	}
	return hops
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// embedRows puts, under obj, what the hops' paths walk to: rows of the
// last target, each embedding the next hop's rows.
func embedRows(r *rand.Rand, cat *catalog.Catalog, obj map[string]any, hops []embedHop) {
	h := hops[0]
	row := func() any {
		it := genItem(r, cat, h.target)
		if len(hops) > 1 {
			embedRows(r, cat, it, hops[1:])
		}
		return it
	}
	var end func() any
	switch k := r.IntN(8); {
	case k == 0:
		end = func() any { return nil }
	case h.one && k < 6:
		end = row
	default:
		// Many rows, or for a one-relation the wrong kind: an array.
		end = func() any { return []any{row(), row()} }
	}
	var build func(i int) any
	build = func(i int) any {
		if i == len(h.path) {
			return end()
		}
		if h.path[i].Wildcard {
			return []any{build(i + 1), build(i + 1)}
		}
		return map[string]any{h.path[i].Key: build(i + 1)}
	}
	if len(h.path) > 0 && h.path[0].Key != "" && r.IntN(10) > 0 {
		obj[h.path[0].Key] = build(1)
	}
}
