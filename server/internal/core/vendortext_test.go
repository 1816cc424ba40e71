package core

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestTextCells: numbers a vendor module wrote into text columns become
// their literal text, for the capability's entity and for an embedded
// relation's target; other columns and other values are left alone.
func TestTextCells(t *testing.T) {
	c := &catalog.Catalog{
		Values: map[string]*catalog.Value{"text": {Type: "string"}, "n": {Type: "integer"}, "u": {Type: "uuid"}, "item_ref": {Type: "entity_ref", Target: "Item"}},
		Entities: map[string]*catalog.Entity{
			"Item": {Name: "Item", IDField: "id", Fields: map[string]*catalog.Field{"id": {ValueRef: "text"}, "n": {ValueRef: "n"}},
				Relations: map[string]*catalog.Relation{"notes": {Name: "notes", Target: "Note"}}},
			"Note": {Name: "Note", Fields: map[string]*catalog.Field{"key": {ValueRef: "u"}, "n": {ValueRef: "n"}, "item": {ValueRef: "item_ref"}}},
		},
		Capabilities: map[string]*catalog.Capability{"item_query": {Name: "item_query", Entity: "Item"}},
	}
	big := json.Number("12345678901234567891")
	cases := []struct {
		relation string
		in, want abi.Table
	}{
		{"", abi.Table{Columns: []string{"id", "n", "extra"}, Rows: [][]any{{big, big, big}, {"x", json.Number("1e3"), nil}, {json.Number("1e3")}}},
			abi.Table{Columns: []string{"id", "n", "extra"}, Rows: [][]any{{"12345678901234567891", big, big}, {"x", json.Number("1e3"), nil}, {"1e3"}}}},
		{"notes", abi.Table{Columns: []string{"key", "n", "item"}, Rows: [][]any{{big, big, big}}},
			abi.Table{Columns: []string{"key", "n", "item"}, Rows: [][]any{{"12345678901234567891", big, "12345678901234567891"}}}},
		{"nope", abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}, abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}},
	}
	for _, tc := range cases {
		textCells(c, "item_query", tc.relation, &tc.in)
		if !reflect.DeepEqual(tc.in, tc.want) {
			t.Errorf("relation %q: %#v\nwant %#v", tc.relation, tc.in.Rows, tc.want.Rows)
		}
	}
	textCells(c, "unknown", "", &abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}) // no entity: no change, no panic
	textCells(nil, "item_query", "", nil)
}
