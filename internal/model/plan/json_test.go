package plan_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmd/plasmd/internal/model/plan"
)

func same(t *testing.T, name string, p *plan.Plan) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		return // NaN or Inf: not a value a planner produces, and not JSON
	}
	if got := p.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

// Every golden plan the planner's tests pin encodes byte for byte as
// encoding/json would encode it.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	files, err := filepath.Glob("../../engine/lang/testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden plans: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p plan.Plan
		if err := json.Unmarshal(b, &p); err != nil {
			continue // an error golden, not a plan
		}
		same(t, filepath.Base(f), &p)
	}
	awkward := "q\"\\\n\r\t\b\f\x00\x1f<>&\u2028\u2029\xff é ☃"
	same(t, "awkward", &plan.Plan{
		Nodes: []plan.Node{{
			ID: 0, Op: awkward, Input: -1, Columns: []string{awkward},
			Args: map[string]any{"s": awkward, "i": int64(-3), "f": 2.5, "g": 1e300, "n": nil, "b": true,
				"l": []any{"x", int64(1)}, "m": map[string]any{"z": 1.0, "a": awkward}},
			ArgRefs:   []plan.ArgRef{{Var: "v", Node: 1, Field: "f"}},
			ForEach:   &plan.Bind{Var: "id", Field: "id"},
			EachRow:   &plan.EachRow{Binds: []plan.Bind{{Var: "title", Field: awkward}}},
			Semi:      &plan.SemiJoin{Node: 2, Field: "project_id", Key: awkward},
			PageSize:  7,
			Templates: []plan.ArgTemplate{{Var: "body", Parts: []string{"a ", awkward}, Refs: []plan.ArgRef{{Node: -1, Field: "title"}}}, {Var: "x"}},
			Hop:       &plan.Hop{Relation: "r", Materialize: "m", Target: "T", Capability: "c", DistinctBy: awkward},
			Hydrate:   &plan.Hydrate{Binds: []plan.Bind{{Var: "id", Field: awkward}}, Fields: []string{"body", awkward}},
			View: &plan.View{Name: awkward, Required: []string{"k"}, Steps: []plan.ViewStep{{ID: "n", Capability: "c", Kind: "get", Binds: []plan.ViewBind{{Var: "id", Kind: "scope", From: "k"}, {Var: "t", Kind: "computed", Template: awkward, Value: 1.5}}, IDFrom: "id", IDVars: []string{"id"}}},
				Outputs: []plan.ViewOutput{{Field: "x", Kind: "node_any_row_field_equals", Node: "n", Of: "f", Equals: awkward}}, Relations: []plan.ViewRelation{{Relation: "r", Kind: "node_all_rows", Node: "n", Columns: []string{"a"}}}},
			Filters: []plan.Pred{{Field: "f", Op: "~", Value: awkward}},
			Transforms: []plan.Transform{{Kind: "limit", N: 3}, {Kind: "sort", Field: "f", Desc: true}, {Kind: "project", Fields: []string{"a"}}, {Kind: "filter", Preds: []plan.Pred{{Field: "x", Op: "=", Value: []any{}}}},
				{Kind: "group_by", Field: "s", Aggs: []plan.Agg{{Name: "n", Fn: "count"}, {Name: awkward, Fn: "sum", Field: "x"}}},
				{Kind: "derive", Derive: []plan.Derived{{Name: "t", Field: "title"}, {Name: "k", Value: awkward}}},
				{Kind: "render", Template: awkward}},
			Page: &plan.PageRef{Handle: "s0_pg1", Limit: 5},
			Many: true, Deps: []int{1, 2}, Line: 3, Column: 4,
		}},
		Roots:   []plan.Root{{Label: awkward, Node: 0}},
		Order:   []int{0},
		Verdict: "review", Reasons: []string{awkward}, Summary: "s",
	})
	same(t, "empty each_row", &plan.Plan{Nodes: []plan.Node{{EachRow: &plan.EachRow{}}}})
	same(t, "empty hydrate", &plan.Plan{Nodes: []plan.Node{{Hydrate: &plan.Hydrate{}}, {Hydrate: &plan.Hydrate{Binds: []plan.Bind{}, Fields: []string{}}}}})
	same(t, "empty", &plan.Plan{})
	same(t, "empty lists", &plan.Plan{Nodes: []plan.Node{}, Roots: []plan.Root{}, Order: []int{}, Reasons: []string{}})
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("label", "x", int64(1), 1.5)
	f.Add("\xff\u2028<", "\x00", int64(-1), 1e-7)
	f.Fuzz(func(t *testing.T, s1, s2 string, i int64, x float64) {
		same(t, "fuzz", &plan.Plan{
			Nodes:   []plan.Node{{Op: s1, Args: map[string]any{s2: s1, "i": i, "x": x}, Filters: []plan.Pred{{Field: s2, Value: x}}}},
			Roots:   []plan.Root{{Label: s2}},
			Summary: s1,
		})
	})
}
