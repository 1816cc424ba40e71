package extract_test

import (
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// A column's value does not depend on the order of the columns: reading an
// object whole must not convert the numbers inside it for a later typed
// column, and two cells never share one container.
func TestColumnOrderIndependent(t *testing.T) {
	body := []byte(`{"items":[{"meta":{"score":9007199254740993,"tags":["a"]}}]}`)
	score := extract.Column{Name: "score", Path: []string{"meta", "score"}, Type: "number"}
	meta := extract.Column{Name: "meta", Path: []string{"meta"}}
	meta2 := extract.Column{Name: "meta2", Path: []string{"meta"}}
	cells := func(cols ...extract.Column) map[string]any {
		s := &extract.Spec{Version: extract.Version, Capability: "q", Read: true, Columns: cols,
			Response: &catalog.Response{ItemsPath: []string{"items"}}}
		r, err := extract.Apply(s, &abi.DecodeRequest{Status: 200}, body, extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for i, c := range cols {
			out[c.Name] = r.Table.Rows[0][i]
		}
		return out
	}
	a, b := cells(score, meta, meta2), cells(meta, meta2, score)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("score first: %#v\nscore last: %#v", a, b)
	}
	m1, m2 := b["meta"].(map[string]any), b["meta2"].(map[string]any)
	m1["score"] = "changed"
	if m2["score"] == "changed" {
		t.Fatal("two cells share one map")
	}
}
