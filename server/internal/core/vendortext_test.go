package core

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/decode"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

func vendorCatalog() *catalog.Catalog {
	return &catalog.Catalog{
		EntryID: "vend",
		Values: map[string]*catalog.Value{"text": {Type: "string"}, "n": {Type: "integer"}, "f": {Type: "number"}, "u": {Type: "uuid"},
			"b": {Type: "boolean"}, "item_ref": {Type: "entity_ref", Target: "Item"}},
		Entities: map[string]*catalog.Entity{
			"Item": {Name: "Item", IDField: "id", FieldOrder: []string{"id", "n", "f", "b"},
				Fields:    map[string]*catalog.Field{"id": {Name: "id", ValueRef: "text"}, "n": {Name: "n", ValueRef: "n"}, "f": {Name: "f", ValueRef: "f"}, "b": {Name: "b", ValueRef: "b"}},
				Relations: map[string]*catalog.Relation{"notes": {Name: "notes", Target: "Note"}}},
			"Note": {Name: "Note", Fields: map[string]*catalog.Field{"key": {ValueRef: "u"}, "n": {ValueRef: "n"}, "item": {ValueRef: "item_ref"}}},
		},
		Capabilities: map[string]*catalog.Capability{"item_query": {Name: "item_query", Kind: catalog.KindQuery, Entity: "Item"}},
	}
}

// TestVendorCells: the cells of a vendor module's rows, for the
// capability's entity and an embedded relation's target: text columns
// take a number's literal, integer columns an integer however written
// (1e3, 1.2345678901234567891e19, "42", but integer text beyond 2^53
// stays text), undeclared columns read as
// untyped ones; an unknown relation leaves the rows alone.
func TestVendorCells(t *testing.T) {
	c := vendorCatalog()
	big := json.Number("12345678901234567891")
	cases := []struct {
		relation string
		in, want abi.Table
	}{
		{"", abi.Table{Columns: []string{"id", "n", "extra"}, Rows: [][]any{
			{big, big, big},
			{"x", json.Number("1e3"), nil},
			{json.Number("1e3")},
			{"y", json.Number("1.2345678901234567891e19"), json.Number("1.2345678901234567891e19")},
			{"z", "42", map[string]any{"a": json.Number("7"), "b": []any{json.Number("2.5")}}},
			{"w", "12345678901234567891", json.Number("3")},
			{"v", "abc", "42"},
			{"u", json.Number("2.5"), json.Number("1e400")},
			{"t", json.Number("-0"), json.Number("9007199254740993.0")},
		}}, abi.Table{Columns: []string{"id", "n", "extra"}, Rows: [][]any{
			{"12345678901234567891", big, big},
			{"x", int64(1000), nil},
			{"1e3"},
			{"y", big, big},
			{"z", int64(42), map[string]any{"a": int64(7), "b": []any{2.5}}},
			{"w", "12345678901234567891", int64(3)}, // integer text beyond 2^53 stays text
			{"v", "abc", "42"},
			{"u", 2.5, json.Number("1e400")}, // 401 digits: kept as written
			{"t", int64(0), int64(9007199254740993)},
		}}},
		{"notes", abi.Table{Columns: []string{"key", "n", "item"}, Rows: [][]any{{big, json.Number("1.5e19"), big}}},
			abi.Table{Columns: []string{"key", "n", "item"}, Rows: [][]any{{"12345678901234567891", json.Number("15000000000000000000"), "12345678901234567891"}}}},
		{"nope", abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}, abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}},
	}
	for _, tc := range cases {
		vendorCells(c, "item_query", tc.relation, &tc.in)
		if !reflect.DeepEqual(tc.in, tc.want) {
			t.Errorf("relation %q: %#v\nwant %#v", tc.relation, tc.in.Rows, tc.want.Rows)
		}
	}
	vendorCells(c, "unknown", "", &abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}) // no entity: no change, no panic
	vendorCells(nil, "item_query", "", nil)
}

// TestVendorCellsMatchDecoder: a vendor module's row and a body the
// standard decoder reads, holding the same JSON values, give the same
// cells, for every column type and number form (the decoder's spec is the
// engine's, compiled from the same catalog).
func TestVendorCellsMatchDecoder(t *testing.T) {
	c := vendorCatalog()
	spec, aerr := decode.Spec(c, "item_query", "")
	if aerr != nil {
		t.Fatal(aerr)
	}
	literals := []string{`12345678901234567891`, `1.2345678901234567891e19`, `123456789012345678901e0`, `1e3`, `1000.0`, `-0`, `2.5`, `1e400`,
		`1e999999`, `9007199254740993.0`, `"42"`, `"12345678901234567891"`, `"042"`, `"1e3"`, `"abc"`, `true`, `{"a":1.5e19}`, `[1,2.0]`}
	for _, lit := range literals {
		body := `[{"id":` + lit + `,"n":` + lit + `,"f":` + lit + `,"b":` + lit + `}]`
		dec, aerr := extract.Apply(spec, &abi.DecodeRequest{Capability: "item_query", Status: 200}, []byte(body), extract.Options{})
		if aerr != nil {
			t.Fatalf("%s: %v", lit, aerr)
		}
		var out abi.DecodeResponse
		if err := abi.Unmarshal([]byte(`{"table":{"columns":["id","n","f","b"],"rows":[[`+lit+`,`+lit+`,`+lit+`,`+lit+`]]}}`), &out); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		vendorCells(c, "item_query", "", &out.Table)
		if !reflect.DeepEqual(out.Table.Rows, dec.Table.Rows) {
			t.Errorf("%s: vendor cells %#v\ndecoder cells %#v", lit, out.Table.Rows, dec.Table.Rows)
		}
	}
}
