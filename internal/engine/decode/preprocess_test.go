package decode

import (
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// TestPlasmResponseForms decodes Plasm's response reshapes and derived
// fields, through both the tree and (when the host sends one) the tape
// request: the rules need the tree, so both must agree.
func TestPlasmResponseForms(t *testing.T) {
	ent := &catalog.Entity{Name: "Member", IDField: "id", FieldOrder: []string{"id"},
		Fields: map[string]*catalog.Field{"id": {Name: "id", ValueRef: "s"}}}
	cat := &catalog.Catalog{EntryID: "c", Values: map[string]*catalog.Value{"s": {Type: "string"}},
		Entities: map[string]*catalog.Entity{"Member": ent},
		Capabilities: map[string]*catalog.Capability{
			"pluck":  {Name: "pluck", Kind: catalog.KindQuery, Entity: "Member"},
			"concat": {Name: "concat", Kind: catalog.KindQuery, Entity: "Member"},
			"ids":    {Name: "ids", Kind: catalog.KindQuery, Entity: "Member"},
			"max":    {Name: "max", Kind: catalog.KindQuery, Entity: "Member"},
		},
		Mappings: map[string]*catalog.Mapping{
			"pluck": {Response: &catalog.Response{ItemsPath: []string{"members"},
				Preprocess: &catalog.Preprocess{Kind: catalog.PreArrayFindPluck, Path: []string{"teams"}, IDField: "id", IDVar: "team_id", NestedArray: "members"}}},
			"concat": {Response: &catalog.Response{ItemsPath: []string{"all"},
				Preprocess: &catalog.Preprocess{Kind: catalog.PreConcatFieldArrays, Path: []string{"data"}, FromEach: "people"}}},
			"max": {Response: &catalog.Response{ItemsPath: []string{"results"}, WrapRootScalar: true}},
			"ids": {Response: &catalog.Response{ItemsPath: []string{"list"},
				Preprocess: &catalog.Preprocess{Kind: catalog.PreStringIDsToObjects, Path: []string{"list"}, Field: "id"}}},
		},
	}
	tests := []struct {
		capability, body string
		vars             map[string]any
		want             [][]any
	}{
		{"pluck", `{"teams":[{"id":1,"members":[{"id":"a"}]},{"id":2,"members":[{"id":"b"},{"id":"c"}]}]}`, map[string]any{"team_id": "2"}, [][]any{{"b"}, {"c"}}},
		{"pluck", `{"teams":[{"id":1,"members":[{"id":"a"}]}]}`, map[string]any{"team_id": 9}, [][]any{}},
		{"concat", `{"data":[{"people":[{"id":"x"}]},{"people":[{"id":"y"}]},{"none":1}]}`, nil, [][]any{{"x"}, {"y"}}},
		{"ids", `{"list":["p","q",7]}`, nil, [][]any{{"p"}, {"q"}}},
		{"max", `8863`, nil, [][]any{{"8863"}}}, // a text id: its digits, as text
		{"max", `{"results":[{"id":"r"}]}`, nil, [][]any{{"r"}}},
	}
	for _, tt := range tests {
		for _, useTape := range []bool{false, true} {
			body := []byte(tt.body)
			if useTape {
				var err error
				if body, err = tape.AppendJSON(nil, body); err != nil {
					t.Fatal(err)
				}
			}
			out, aerr := Decode(cat, &abi.DecodeRequest{EntryID: "c", Capability: tt.capability, Status: 200, Vars: tt.vars, Tape: useTape}, body)
			if aerr != nil {
				t.Errorf("%s (tape %v): %v", tt.capability, useTape, aerr)
				continue
			}
			if !reflect.DeepEqual(out.Table.Rows, tt.want) {
				t.Errorf("%s (tape %v): rows %v, want %v", tt.capability, useTape, out.Table.Rows, tt.want)
			}
		}
	}
}
