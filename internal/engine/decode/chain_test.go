package decode

import (
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestEmbeddedChain: a relation "a.b" is a chain of from_parent_get
// relations whose paths join; anything else in a chain is invalid.
func TestEmbeddedChain(t *testing.T) {
	embed := func(target string, path ...catalog.PathStep) *catalog.Relation {
		return &catalog.Relation{Target: target, Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: path}}
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
	}{
		{relation: "summary", target: "Summary", path: []catalog.PathStep{key("summary")}},
		{relation: "summary.detail", target: "Detail", path: []catalog.PathStep{key("summary"), key("detail")}},
		{relation: "lines.tags", target: "Detail", path: []catalog.PathStep{key("lines"), star, key("tags"), star}},
		{relation: "lines.owner", invalid: "relation Line.owner is query_scoped, not embedded"},
		{relation: "summary.nope", invalid: `entity Summary has no relation "nope"`},
		{relation: "summary.", invalid: `entity Summary has no relation ""`},
	} {
		path, target, invalid := embedded(cat, cat.Entities["Item"], tt.relation)
		if tt.invalid != "" {
			if !strings.Contains(invalid, tt.invalid) {
				t.Errorf("%s: invalid %q, want %q", tt.relation, invalid, tt.invalid)
			}
			continue
		}
		if invalid != "" || target == nil || target.Name != tt.target || !reflect.DeepEqual(path, tt.path) {
			t.Errorf("%s: %v %v %q; want %s %v", tt.relation, path, target, invalid, tt.target, tt.path)
		}
	}
}
