package catalog

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchCatalog is a generated catalog about the size of Plasm's largest
// (github's): n entities of 20 fields and 2 relations, each with a query
// and a get and their mappings.
func benchCatalog(n int) *Catalog {
	c := &Catalog{EntryID: "bench", Values: map[string]*Value{"text": {Type: "string"}},
		Entities: map[string]*Entity{}, Capabilities: map[string]*Capability{}, Mappings: map[string]*Mapping{}}
	for i := range n {
		name := fmt.Sprintf("E%d", i)
		e := &Entity{Name: name, IDField: "id", Fields: map[string]*Field{}, Relations: map[string]*Relation{}}
		for j := range 20 {
			f := fmt.Sprintf("f%d", j)
			if j == 0 {
				f = "id"
			}
			e.Fields[f] = &Field{Name: f, ValueRef: "text"}
			e.FieldOrder = append(e.FieldOrder, f)
		}
		for j, t := range []int{(i + 1) % n, (i + 2) % n} {
			r := fmt.Sprintf("r%d", j)
			e.Relations[r] = &Relation{Name: r, Target: fmt.Sprintf("E%d", t), Cardinality: "one",
				Materialize: Materialize{Kind: FromParentGet, Path: []PathStep{{Key: r}}}}
			e.RelOrder = append(e.RelOrder, r)
		}
		c.Entities[name] = e
		for _, k := range []string{KindQuery, KindGet} {
			cn := fmt.Sprintf("e%d_%s", i, k)
			c.Capabilities[cn] = &Capability{Name: cn, Kind: k, Entity: name, Parameters: []Parameter{{Name: "id", ValueRef: "text"}}}
			c.Mappings[cn] = &Mapping{Method: "GET", Path: []Segment{{Type: "literal", Value: "e"}, {Type: "var", Name: "id"}},
				Query: &Expr{Type: ExprObject, Fields: []ObjectKV{{Key: "q", Value: &Expr{Type: ExprVar, Name: "id"}}}}}
		}
	}
	return c
}

// BenchmarkCheck measures the wire catalog check against its baseline,
// decoding the same catalog's JSON, which the engine does on every load
// before it checks.
func BenchmarkCheck(b *testing.B) {
	c := benchCatalog(150)
	raw, err := json.Marshal(c)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Check(); err != nil {
		b.Fatal(err)
	}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := c.Check(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline_unmarshal", func(b *testing.B) {
		for b.Loop() {
			var d Catalog
			if err := json.Unmarshal(raw, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
