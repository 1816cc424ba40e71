package extract_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// The host applies a spec with the executor's variables in their Go types
// (a number from an earlier row is a float64); the guest sees the same
// request after it crossed the ABI as JSON (json.Number, int64). Both must
// find the same parent row, whatever the number's size or sign.
func TestPluckVariableTypes(t *testing.T) {
	s := &extract.Spec{Version: extract.Version, Capability: "sub_query", Read: true,
		Columns: []extract.Column{{Name: "name", Path: []string{"name"}}},
		Response: &catalog.Response{ItemsPath: []string{"items"}, Preprocess: &catalog.Preprocess{
			Kind: catalog.PreArrayFindPluck, Path: []string{"projects"}, IDField: "id", IDVar: "project_id", NestedArray: "subs"}}}
	for _, tc := range []struct {
		id   string
		vars any
		rows int
	}{
		{"123456789", float64(123456789), 2},
		{"2500000", float64(2500000), 2},
		{"0", math.Copysign(0, -1), 2},
		{"7", "7", 2},
		{"7", 7.0, 2},
		{"2.5", 2.5, 2},
		{"1e21", 1e21, 2},
		{"8", float64(7), 0},
	} {
		body := []byte(`{"projects":[{"id":` + tc.id + `,"subs":[{"name":"a"},{"name":"b"}]}]}`)
		host := &abi.DecodeRequest{Capability: "sub_query", Status: 200, Vars: map[string]any{"project_id": tc.vars}}
		b, err := json.Marshal(host)
		if err != nil {
			t.Fatal(err)
		}
		var guest abi.DecodeRequest
		if err := abi.Unmarshal(b, &guest); err != nil {
			t.Fatal(err)
		}
		h, herr := extract.Apply(s, host, body, extract.Options{})
		g, gerr := extract.Apply(s, &guest, body, extract.Options{})
		if herr != nil || gerr != nil {
			t.Fatalf("id %s: host %v, guest %v", tc.id, herr, gerr)
		}
		if len(h.Table.Rows) != tc.rows || !reflect.DeepEqual(h.Table.Rows, g.Table.Rows) {
			t.Errorf("id %s, var %#v: host rows %v, guest rows %v, want %d rows", tc.id, tc.vars, h.Table.Rows, g.Table.Rows, tc.rows)
		}
	}
}
