package catalog

import (
	"reflect"
	"testing"
)

func TestEmbeddedPath(t *testing.T) {
	c := &Catalog{
		Entities: map[string]*Entity{
			"Species": {Name: "Species", Relations: map[string]*Relation{
				"chain":   {Target: "Chain", Cardinality: "one"},
				"forms":   {Target: "Chain", Cardinality: "many"},
				"keyless": {Target: "Note", Cardinality: "one"},
				"lines":   {Target: "Chain", Cardinality: "many", Materialize: Materialize{Kind: FromParentGet, Path: []PathStep{{Key: "lines"}, {Wildcard: true}}}},
				"scoped":  {Target: "Chain", Cardinality: "one", Materialize: Materialize{Kind: QueryScoped}},
				"digest":  {Target: "Chain", Cardinality: "one"},
			}},
			"Chain": {Name: "Chain", IDField: "url"},
			"Note":  {Name: "Note"},
		},
		Views: map[string]*View{"v": {Name: "v", Entity: "Species", Relations: []ViewRelationOutput{{Relation: "digest"}}}},
	}
	for _, tt := range []struct {
		name string
		want []PathStep
	}{
		{"chain", []PathStep{{Key: "chain"}}},
		{"lines", []PathStep{{Key: "lines"}, {Wildcard: true}}},
		{"forms", nil},   // many: no reference to read
		{"keyless", nil}, // a target without an id field
		{"scoped", nil},  // read by a query
		{"digest", nil},  // a view fills it
		{"nope", nil},
	} {
		got, ok := c.EmbeddedPath("Species", tt.name)
		if ok != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.name, got, ok, tt.want)
		}
	}
}
