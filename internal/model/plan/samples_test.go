package plan_test

import "github.com/plasmd/plasmd/internal/model/plan"

type namedPlan struct {
	name string
	plan *plan.Plan
}

// samplePlans are hand-built plans that use every field of a plan, awkward
// strings (escapes, invalid UTF-8, U+2028) and the nil-versus-empty list
// distinctions JSON makes, for the encoders' tests.
func samplePlans() []namedPlan {
	awkward := "q\"\\\n\r\t\b\f\x00\x1f<>&\u2028\u2029\xff é ☃"
	return []namedPlan{
		{"awkward", &plan.Plan{
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
		}},
		{"empty each_row", &plan.Plan{Nodes: []plan.Node{{EachRow: &plan.EachRow{}}}}},
		{"empty hydrate", &plan.Plan{Nodes: []plan.Node{{Hydrate: &plan.Hydrate{}}, {Hydrate: &plan.Hydrate{Binds: []plan.Bind{}, Fields: []string{}}}}}},
		{"empty", &plan.Plan{}},
		{"empty lists", &plan.Plan{Nodes: []plan.Node{}, Roots: []plan.Root{}, Order: []int{}, Reasons: []string{}}},
	}
}
