package executor

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// repoView reads a repo by id, then its open issues by the repo's owner
// (a computed bind) and label (a literal), keeping only those whose state
// is "open" (a host filter bind).
func repoView() *plan.View {
	return &plan.View{
		Name:     "repo_card",
		Required: []string{"repo_id"},
		Steps: []plan.ViewStep{
			{ID: "repo", Capability: "get_repo", Kind: "get", Entity: "Repo", Binds: []plan.ViewBind{{Var: "id", Kind: "scope", From: "repo_id"}}, IDFrom: "id", IDVars: []string{"id"}},
			{ID: "issues", Capability: "list_issues", Kind: "query", Entity: "Issue", Binds: []plan.ViewBind{
				{Var: "owner", Kind: "computed", Template: "{{ repo.owner | upper }}"},
				{Var: "label", Kind: "literal", Value: "bug"},
				{Var: "repo", Kind: "node_field", Node: "repo", Field: "name"},
				{Var: "state", Kind: "scope", From: "state", Filter: true},
			}},
		},
		Outputs: []plan.ViewOutput{
			{Field: "repo_id", Kind: "scope", Param: "repo_id"},
			{Field: "name", Kind: "node_field", Node: "repo", Of: "name"},
			{Field: "open", Kind: "node_row_count", Node: "issues"},
			{Field: "busy", Kind: "node_row_count_positive", Node: "issues"},
			{Field: "by_author", Kind: "node_field_histogram_json", Node: "issues", Of: "author"},
			{Field: "ann_wrote", Kind: "node_any_row_field_equals", Node: "issues", Of: "author", Equals: "ann"},
			{Field: "slug", Kind: "computed", Template: "{{ name }}-{{ open }}"},
		},
		Relations: []plan.ViewRelation{
			{Relation: "repo", Kind: "node_single_row", Node: "repo", Columns: []string{"id", "name"}},
			{Relation: "issues", Kind: "node_all_rows", Node: "issues", Columns: []string{"id", "author"}},
			{Relation: "first_by_bob", Kind: "first_node_row_where", Node: "issues", Where: "author", Equals: "bob", Columns: []string{"id"}},
			{Relation: "by_ann", Kind: "node_rows_where", Node: "issues", Where: "author", Equals: "ann", Columns: []string{"id"}},
		},
	}
}

var viewCols = []string{"repo_id", "name", "open", "busy", "by_author", "ann_wrote", "slug"}

func viewEngine(issues [][]any) *fakeEngine {
	return &fakeEngine{caps: map[string]backendFunc{
		"get_repo": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"id", "name", "owner"}, Rows: [][]any{{call.Vars["id"], "widgets", "acme"}}}}, nil
		},
		"list_issues": static([]string{"id", "author", "state"}, issues...),
	}}
}

func viewNode(id int, args map[string]any) plan.Node {
	return plan.Node{ID: id, Op: plan.OpView, Effect: plan.EffectRead, EntryID: entry, Entity: "RepoCard", Capability: "repo_card_get", Kind: "get", Input: -1, Columns: viewCols, Args: args, View: repoView()}
}

func TestViewRow(t *testing.T) {
	fe := viewEngine([][]any{{"i1", "ann", "open"}, {"i2", "bob", "open"}, {"i3", "ann", "closed"}, {"i4", nil, "open"}})
	view := viewNode(0, map[string]any{"repo_id": "r1", "state": "open"})
	hop := func(id int, rel string, cols []string) plan.Node {
		return plan.Node{ID: id, Op: plan.OpHop, Effect: plan.EffectRead, EntryID: entry, Entity: "X", Input: 0, Columns: cols, Many: true, Hop: &plan.Hop{Relation: rel, Materialize: plan.MaterializeView}}
	}
	p := &plan.Plan{Nodes: []plan.Node{view, hop(1, "repo", []string{"name", "id"}), hop(2, "issues", []string{"id", "author"}), hop(3, "first_by_bob", []string{"id"}), hop(4, "by_ann", []string{"id"})}, Roots: roots(0, 1, 2, 3, 4)}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(fe))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"r1", "widgets", int64(3), true, map[string]any{"ann": int64(1), "bob": int64(1), "<missing>": int64(1)}, true, "widgets-3"}}
	if got := res.Roots[0].Table; !reflect.DeepEqual(got.Rows, want) || !reflect.DeepEqual(got.Columns, viewCols) {
		t.Errorf("view row:\n got %v %#v\nwant %#v", got.Columns, got.Rows, want)
	}
	rel := func(i int) [][]any { return res.Roots[i].Table.Rows }
	if !reflect.DeepEqual(rel(1), [][]any{{"widgets", "r1"}}) || !reflect.DeepEqual(rel(2), [][]any{{"i1", "ann"}, {"i2", "bob"}, {"i4", nil}}) ||
		!reflect.DeepEqual(rel(3), [][]any{{"i2"}}) || !reflect.DeepEqual(rel(4), [][]any{{"i1"}}) {
		t.Errorf("relations: %v %v %v %v", rel(1), rel(2), rel(3), rel(4))
	}
	calls := fe.calls("list_issues")
	if len(calls) != 1 || !reflect.DeepEqual(calls[0].Vars, map[string]any{"owner": "ACME", "label": "bug", "repo": "widgets"}) {
		t.Errorf("list_issues called with %+v", calls)
	}
}

func TestViewErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   map[string]any
		issues [][]any
		edit   func(v *plan.View)
		want   string
	}{
		{"required scope missing", map[string]any{"state": "open"}, nil, nil, "scope value repo_id is empty"},
		{"bind from missing scope", map[string]any{"repo_id": "r1"}, nil, nil, "needs scope value state"},
		{"id not one value", map[string]any{"repo_id": []any{"r1", "r2"}, "state": "open"}, nil, nil, "its id is not one value"},
		{"single row not single", map[string]any{"repo_id": "r1", "state": "open"}, nil,
			func(v *plan.View) {
				v.Relations = []plan.ViewRelation{{Relation: "one", Kind: "node_single_row", Node: "issues"}}
			}, "needs exactly one row from step issues, which returned 0"},
		{"template fails", map[string]any{"repo_id": "r1", "state": "open"}, nil,
			func(v *plan.View) {
				v.Outputs = []plan.ViewOutput{{Field: "slug", Kind: "computed", Template: "{{ nope }}"}}
			}, "output slug: view template: 1:4: nope is undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := viewNode(0, tt.args)
			if tt.edit != nil {
				tt.edit(n.View)
			}
			_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, env(viewEngine(tt.issues)))
			if !errors.Is(err, ErrView) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrView with %q", err, tt.want)
			}
		})
	}
}

// A get step that finds nothing answers like a plain get of that row.
func TestViewStepNotFound(t *testing.T) {
	fe := viewEngine(nil)
	s := &fakeSender{hook: func(_ context.Context, capability string) (int, error) {
		if capability == "get_repo" {
			return 404, nil
		}
		return 200, nil
	}}
	n := viewNode(0, map[string]any{"repo_id": "r9", "state": "open"})
	_, err := New(s, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, env(fe))
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.ID != "r9" || nf.Entity != "Repo" {
		t.Errorf("error %v, want Repo r9 not found", err)
	}
}

// BenchmarkViewNode runs the two-step view of repoView; the baseline is the
// same two reads as plain fetch nodes (what a program without the view would
// plan), so the difference is the view's own work: binds, outputs, template.
func BenchmarkViewNode(b *testing.B) {
	fe := viewEngine([][]any{{"i1", "ann", "open"}, {"i2", "bob", "open"}})
	x := New(&fakeSender{}, Limits{})
	p := &plan.Plan{Nodes: []plan.Node{viewNode(0, map[string]any{"repo_id": "r1", "state": "open"})}, Roots: roots(0)}
	for b.Loop() {
		if _, err := x.Run(context.Background(), p, env(fe)); err != nil {
			b.Fatal(err)
		}
		fe.compiled, fe.decoded = nil, nil
	}
}

func BenchmarkViewBaselineFetches(b *testing.B) {
	fe := viewEngine([][]any{{"i1", "ann", "open"}, {"i2", "bob", "open"}})
	x := New(&fakeSender{}, Limits{})
	get := fetch(0, "get_repo", "Repo")
	get.Args, get.Many, get.Kind = map[string]any{"id": "r1"}, false, "get"
	list := fetch(1, "list_issues", "Issue")
	list.Args = map[string]any{"owner": "ACME", "label": "bug", "repo": "widgets"}
	p := &plan.Plan{Nodes: []plan.Node{get, list}, Roots: roots(0, 1)}
	for b.Loop() {
		if _, err := x.Run(context.Background(), p, env(fe)); err != nil {
			b.Fatal(err)
		}
		fe.compiled, fe.decoded = nil, nil
	}
}

// TestViewStepIDNeverShadowsScope: a step id equal to a scope name (the
// loader refuses it) must not silently replace the scope value a
// computed bind reads.
func TestViewStepIDNeverShadowsScope(t *testing.T) {
	b := plan.ViewBind{Var: "q", Kind: "computed", Template: "project={{ project }}"}
	scope := map[string]any{"project": "CORE"}
	for _, firsts := range []map[string]any{
		{"project": map[string]any{"key": "OTHER"}},
		{"project": map[string]any{}},
		{"nodes": map[string]any{}},
	} {
		if v, err := bindValue("v", "s2", b, scope, firsts); !errors.Is(err, ErrView) {
			t.Errorf("firsts %v: rendered %v, %v; want ErrView", firsts, v, err)
		}
	}
	v, err := bindValue("v", "s2", b, scope, map[string]any{"row": map[string]any{"key": "OTHER"}})
	if err != nil || v != "project=CORE" {
		t.Errorf("got %v, %v; want project=CORE", v, err)
	}
}
