package decode

import (
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestRefToTextIDIsText: a reference to an entity whose id is text keeps a
// number's literal, like the id it names; a reference to an integer id
// stays a number.
func TestRefToTextIDIsText(t *testing.T) {
	field := func(name, ref string) *catalog.Field { return &catalog.Field{Name: name, ValueRef: ref} }
	cat := &catalog.Catalog{EntryID: "c",
		Values: map[string]*catalog.Value{"text": {Type: "string"}, "int": {Type: "integer"},
			"user_ref": {Type: "entity_ref", Target: "User"}, "team_ref": {Type: "entity_ref", Target: "Team"},
			"lost_ref": {Type: "entity_ref", Target: "Nowhere"}},
		Entities: map[string]*catalog.Entity{
			"User": {Name: "User", IDField: "id", Fields: map[string]*catalog.Field{"id": field("id", "text")}},
			"Team": {Name: "Team", IDField: "id", Fields: map[string]*catalog.Field{"id": field("id", "int")}},
			"Issue": {Name: "Issue", IDField: "id", FieldOrder: []string{"id", "assignee", "team", "lost"},
				Fields: map[string]*catalog.Field{"id": field("id", "text"), "assignee": field("assignee", "user_ref"),
					"team": field("team", "team_ref"), "lost": field("lost", "lost_ref")}},
		},
		Capabilities: map[string]*catalog.Capability{"issue_query": {Name: "issue_query", Kind: catalog.KindQuery, Entity: "Issue"}},
	}
	out, aerr := Decode(cat, &abi.DecodeRequest{EntryID: "c", Capability: "issue_query", Status: 200},
		[]byte(`[{"id":1,"assignee":12345678901234567891,"team":7,"lost":8},{"id":"i2","assignee":{"id":"u"},"team":1e3}]`))
	if aerr != nil {
		t.Fatal(aerr)
	}
	want := [][]any{{"1", "12345678901234567891", int64(7), int64(8)}, {"i2", map[string]any{"id": "u"}, 1000.0, nil}}
	if !reflect.DeepEqual(out.Table.Rows, want) {
		t.Fatalf("rows %#v\nwant %#v", out.Table.Rows, want)
	}
}
