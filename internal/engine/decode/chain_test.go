package decode

import (
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// TestEmbeddedChain: a relation "a.b" is a chain of from_parent_get
// relations whose paths join; anything else in a chain is invalid.
func TestEmbeddedChain(t *testing.T) {
	embed := func(target string, path ...catalog.PathStep) *catalog.Relation {
		card := "many"
		if !path[len(path)-1].Wildcard {
			card = "one"
		}
		return &catalog.Relation{Target: target, Cardinality: card, Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: path}}
	}
	key := func(k string) catalog.PathStep { return catalog.PathStep{Key: k} }
	star := catalog.PathStep{Wildcard: true}
	cat := &catalog.Catalog{Entities: map[string]*catalog.Entity{
		"Item":    {Name: "Item", Relations: map[string]*catalog.Relation{"summary": embed("Summary", key("summary")), "lines": embed("Line", key("lines"), star)}},
		"Summary": {Name: "Summary", Relations: map[string]*catalog.Relation{"detail": embed("Detail", key("detail"))}},
		"Line": {Name: "Line", Relations: map[string]*catalog.Relation{
			"tags":  embed("Detail", key("tags"), star),
			"owner": {Target: "Detail", Materialize: catalog.Materialize{Kind: catalog.QueryScoped}},
		}},
		"Detail": {Name: "Detail"},
	}}
	for _, tt := range []struct {
		relation, target, invalid string
		path                      []catalog.PathStep
		hops                      []extract.Hop
	}{
		{relation: "summary", target: "Summary", path: []catalog.PathStep{key("summary")},
			hops: []extract.Hop{{Name: "summary", Steps: 1, One: true}}},
		{relation: "summary.detail", target: "Detail", path: []catalog.PathStep{key("summary"), key("detail")},
			hops: []extract.Hop{{Name: "summary", Steps: 1, One: true}, {Name: "detail", Steps: 1, One: true}}},
		{relation: "lines.tags", target: "Detail", path: []catalog.PathStep{key("lines"), star, key("tags"), star},
			hops: []extract.Hop{{Name: "lines", Steps: 2}, {Name: "tags", Steps: 2}}},
		{relation: "lines.owner", invalid: "relation Line.owner is query_scoped, not embedded"},
		{relation: "summary.nope", invalid: `entity Summary has no relation "nope"`},
		{relation: "summary.", invalid: `entity Summary has no relation ""`},
	} {
		path, hops, target, invalid := embedded(cat, cat.Entities["Item"], tt.relation)
		if tt.invalid != "" {
			if !strings.Contains(invalid, tt.invalid) {
				t.Errorf("%s: invalid %q, want %q", tt.relation, invalid, tt.invalid)
			}
			continue
		}
		if invalid != "" || target == nil || target.Name != tt.target || !reflect.DeepEqual(path, tt.path) || !reflect.DeepEqual(hops, tt.hops) {
			t.Errorf("%s: %v %+v %v %q; want %s %v %+v", tt.relation, path, hops, target, invalid, tt.target, tt.path, tt.hops)
		}
	}
}
