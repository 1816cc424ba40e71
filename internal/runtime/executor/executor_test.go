package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

var repoCols = []string{"id", "name", "stars", "lang"}

func repoRows() [][]any {
	return [][]any{
		{1.0, "alpha", 50.0, "go"},
		{2.0, "beta", nil, "rust"},
		{3.0, "Gamma", 7.0, "go"},
		{4.0, "delta", 120.0, nil},
	}
}

func TestFetchShapes(t *testing.T) {
	pred := func(field, op string, v any) plan.Pred { return plan.Pred{Field: field, Op: op, Value: v} }
	tests := []struct {
		name       string
		filters    []plan.Pred
		transforms []plan.Transform
		wantIDs    []any
		want       *abi.Table
		wantErr    string
	}{
		{name: "none", wantIDs: []any{1.0, 2.0, 3.0, 4.0}},
		{name: "limit", transforms: []plan.Transform{{Kind: plan.TLimit, N: 2}}, wantIDs: []any{1.0, 2.0}},
		{name: "limit zero", transforms: []plan.Transform{{Kind: plan.TLimit, N: 0}}, wantIDs: []any{}},
		{name: "limit beyond", transforms: []plan.Transform{{Kind: plan.TLimit, N: 99}}, wantIDs: []any{1.0, 2.0, 3.0, 4.0}},
		{name: "sort numbers asc nil last", transforms: []plan.Transform{{Kind: plan.TSort, Field: "stars"}}, wantIDs: []any{3.0, 1.0, 4.0, 2.0}},
		{name: "sort numbers desc nil last", transforms: []plan.Transform{{Kind: plan.TSort, Field: "stars", Desc: true}}, wantIDs: []any{4.0, 1.0, 3.0, 2.0}},
		{name: "sort text asc", transforms: []plan.Transform{{Kind: plan.TSort, Field: "name"}}, wantIDs: []any{3.0, 1.0, 2.0, 4.0}},
		{name: "sort text desc nil last", transforms: []plan.Transform{{Kind: plan.TSort, Field: "lang", Desc: true}}, wantIDs: []any{2.0, 1.0, 3.0, 4.0}},
		{name: "sort is stable", transforms: []plan.Transform{{Kind: plan.TSort, Field: "lang"}}, wantIDs: []any{1.0, 3.0, 2.0, 4.0}},
		{name: "sort then limit", transforms: []plan.Transform{{Kind: plan.TSort, Field: "stars", Desc: true}, {Kind: plan.TLimit, N: 1}}, wantIDs: []any{4.0}},
		{name: "limit then sort", transforms: []plan.Transform{{Kind: plan.TLimit, N: 2}, {Kind: plan.TSort, Field: "stars"}}, wantIDs: []any{1.0, 2.0}},
		{
			name:       "projection",
			transforms: []plan.Transform{{Kind: plan.TProject, Fields: []string{"name", "id"}}, {Kind: plan.TLimit, N: 2}},
			want:       &abi.Table{Columns: []string{"name", "id"}, Rows: [][]any{{"alpha", 1.0}, {"beta", 2.0}}},
		},
		{name: "=", filters: []plan.Pred{pred("lang", "=", "go")}, wantIDs: []any{1.0, 3.0}},
		{name: "= number across types", filters: []plan.Pred{pred("stars", "=", int64(7))}, wantIDs: []any{3.0}},
		{name: "= nil", filters: []plan.Pred{pred("lang", "=", nil)}, wantIDs: []any{4.0}},
		{name: "= list", filters: []plan.Pred{pred("lang", "=", []any{"go", "rust"})}, wantIDs: []any{1.0, 2.0, 3.0}},
		{name: "!=", filters: []plan.Pred{pred("lang", "!=", "go")}, wantIDs: []any{2.0, 4.0}},
		{name: ">", filters: []plan.Pred{pred("stars", ">", 10.0)}, wantIDs: []any{1.0, 4.0}},
		{name: "<", filters: []plan.Pred{pred("stars", "<", 50)}, wantIDs: []any{3.0}},
		{name: ">=", filters: []plan.Pred{pred("stars", ">=", 50.0)}, wantIDs: []any{1.0, 4.0}},
		{name: "<=", filters: []plan.Pred{pred("stars", "<=", 50.0)}, wantIDs: []any{1.0, 3.0}},
		{name: "> nil never matches", filters: []plan.Pred{pred("stars", ">", nil)}, wantIDs: []any{}},
		{name: "~ case-insensitive", filters: []plan.Pred{pred("name", "~", "AM")}, wantIDs: []any{3.0}},
		{name: "unknown op matches nothing", filters: []plan.Pred{pred("name", "like", "a")}, wantIDs: []any{}},
		{name: "filters and", filters: []plan.Pred{pred("lang", "=", "go"), pred("stars", ">", 10.0)}, wantIDs: []any{1.0}},
		{
			name:       "filter transform after limit",
			transforms: []plan.Transform{{Kind: plan.TLimit, N: 2}, {Kind: plan.TFilter, Preds: []plan.Pred{pred("lang", "=", "go")}}},
			wantIDs:    []any{1.0},
		},
		{name: "filters before transforms", filters: []plan.Pred{pred("lang", "=", "go")}, transforms: []plan.Transform{{Kind: plan.TLimit, N: 1}}, wantIDs: []any{1.0}},
		{name: "sort unknown field", transforms: []plan.Transform{{Kind: plan.TSort, Field: "nope"}}, wantErr: `sort: no field "nope"`},
		{name: "project unknown field", transforms: []plan.Transform{{Kind: plan.TProject, Fields: []string{"id", "nope"}}}, wantErr: `projection: no field "nope"`},
		{name: "filter unknown field", filters: []plan.Pred{pred("nope", "=", 1)}, wantErr: `filter: no field "nope"`},
		{name: "unknown transform", transforms: []plan.Transform{{Kind: "explode"}}, wantErr: `unknown transform "explode"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"list_repos": static(repoCols, repoRows()...)}}
			n := fetch(0, "list_repos", "Repo")
			n.Filters, n.Transforms = tt.filters, tt.transforms
			res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, env(e))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var xe *Error
				if !errors.As(err, &xe) || xe.Node != 0 || xe.Op != plan.OpFetch || xe.Entity != "Repo" {
					t.Fatalf("error not tied to its node: %#v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := res.Roots[0].Table
			if tt.want != nil {
				if !reflect.DeepEqual(got, *tt.want) {
					t.Fatalf("table = %v, want %v", got, *tt.want)
				}
				return
			}
			if ids := column(got, "id"); !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Fatalf("ids = %v, want %v", ids, tt.wantIDs)
			}
			if !reflect.DeepEqual(got.Columns, repoCols) {
				t.Fatalf("columns = %v", got.Columns)
			}
		})
	}
}

// TestSortMixedKinds: a column mixing numbers, strings, booleans and nils
// still sorts into one consistent order.
func TestSortMixedKinds(t *testing.T) {
	rows := [][]any{{"1a"}, {10.0}, {nil}, {true}, {9.0}, {"b"}, {int64(2)}}
	for _, desc := range []bool{false, true} {
		tab, err := shape(abi.Table{Columns: []string{"v"}, Rows: rows}, &plan.Node{Transforms: []plan.Transform{{Kind: plan.TSort, Field: "v", Desc: desc}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []any{int64(2), 9.0, 10.0, true, "1a", "b", nil}
		if desc {
			want = []any{"b", "1a", true, 10.0, 9.0, int64(2), nil}
		}
		if got := column(tab, "v"); !reflect.DeepEqual(got, want) {
			t.Errorf("desc=%v: %v, want %v", desc, got, want)
		}
	}
	if rows[0][0] != "1a" {
		t.Fatal("sort reordered its input")
	}
}

// A filtered list and a sorted view of it are whole lists: both read every
// page (two here), and neither offers a continuation.
func TestTransformNodeAndNext(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{"list_repos": twoRepoPages}}
	f := fetch(0, "list_repos", "Repo")
	f.Args = map[string]any{"org": "acme"}
	f.Columns = repoCols
	f.Filters = []plan.Pred{{Field: "lang", Op: "=", Value: "go"}}
	tr := plan.Node{ID: 1, Op: plan.OpTransform, EntryID: entry, Entity: "Repo", Input: 0, Transforms: []plan.Transform{{Kind: plan.TSort, Field: "stars"}}}
	p := &plan.Plan{Nodes: []plan.Node{f, tr}, Roots: []plan.Root{{Label: "all", Node: 0}, {Label: "sorted", Node: 1}}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, []any{1.0, 3.0, 5.0}) {
		t.Errorf("root 0 ids %v", got)
	}
	if got := column(res.Roots[1].Table, "id"); !reflect.DeepEqual(got, []any{5.0, 3.0, 1.0}) {
		t.Errorf("transform ids %v", got)
	}
	if len(e.calls("list_repos")) != 2 {
		t.Errorf("list read with %d calls, want its 2 pages", len(e.calls("list_repos")))
	}
	for i, r := range res.Roots {
		if r.Next != nil {
			t.Errorf("root %d offered a continuation after reading the whole list: %+v", i, r.Next)
		}
		if r.EntryID != entry || r.Entity != "Repo" {
			t.Errorf("root %d names %s/%s", i, r.EntryID, r.Entity)
		}
	}
	if len(res.Steps) != 2 || res.Steps[0].Calls != 2 || res.Steps[0].Rows != 3 || res.Steps[1].Calls != 0 || res.Steps[1].Op != plan.OpTransform {
		t.Errorf("steps %+v", res.Steps)
	}
	if res.Mutations != nil {
		t.Errorf("read-only run reported mutations %v", res.Mutations)
	}

	// The last page has no continuation.
	e.caps["list_repos"] = static(repoCols, repoRows()...)
	res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{fetch(0, "list_repos", "Repo")}, Roots: roots(0)}, env(e))
	if err != nil || res.Roots[0].Next != nil {
		t.Fatalf("last page: next %v err %v", res.Roots[0].Next, err)
	}
}

func usersThenHop(hop plan.Hop, columns []string) *plan.Plan {
	users := fetch(0, "list_users", "User")
	h := plan.Node{ID: 1, Op: plan.OpHop, Kind: "relation", EntryID: entry, Entity: hop.Target, Input: 0, Hop: &hop, Columns: columns, Many: true}
	return &plan.Plan{Nodes: []plan.Node{users, h}, Roots: roots(1)}
}

func TestHopQueryScoped(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_users": static([]string{"login", "id"}, []any{"ann", 1.0}, []any{"bob", nil}, []any{"cat", 3.0}),
		// Answers in a different column order than the plan asks for.
		"repos_by_owner": func(call *abi.CompileRequest, relation string) (*abi.DecodeResponse, error) {
			if relation != "" {
				return nil, fmt.Errorf("query_scoped hop passed relation %q", relation)
			}
			owner := call.Vars["owner"]
			return &abi.DecodeResponse{Table: abi.Table{
				Columns: []string{"owner", "repo", "extra"},
				Rows:    [][]any{{owner, fmt.Sprint("r1-", owner), 0}, {owner, fmt.Sprint("r2-", owner), 0}},
			}}, nil
		},
	}}
	p := usersThenHop(plan.Hop{Relation: "repos", Materialize: "query_scoped", Target: "Repo", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "id"}}}, []string{"repo", "owner"})
	p.Nodes[1].Args = map[string]any{"per_page": 10.0}
	p.Nodes[1].Transforms = []plan.Transform{{Kind: plan.TLimit, N: 3}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := abi.Table{Columns: []string{"repo", "owner"}, Rows: [][]any{{"r1-1", 1.0}, {"r2-1", 1.0}, {"r1-3", 3.0}}}
	if got := res.Roots[0].Table; !reflect.DeepEqual(got, want) {
		t.Fatalf("hop table = %v, want %v", got, want)
	}
	calls := e.calls("repos_by_owner")
	if len(calls) != 2 {
		t.Fatalf("%d hop calls; the parent without a key must be skipped", len(calls))
	}
	for _, c := range calls {
		if c.Vars["per_page"] != 10.0 {
			t.Errorf("literal args lost: %v", c.Vars)
		}
	}
	if res.Steps[1].Calls != 2 || res.Steps[1].Rows != 3 {
		t.Errorf("hop step %+v", res.Steps[1])
	}
}

func TestHopFromParentGet(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_users": static([]string{"login", "id"}, []any{"ann", 1.0}, []any{"cat", 3.0}),
		"get_user": func(call *abi.CompileRequest, relation string) (*abi.DecodeResponse, error) {
			if relation != "orgs" {
				return nil, fmt.Errorf("relation %q, want orgs", relation)
			}
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"org"}, Rows: [][]any{{fmt.Sprint("org-of-", call.Vars["login"])}}}}, nil
		},
	}}
	p := usersThenHop(plan.Hop{Relation: "orgs", Materialize: "from_parent_get", Target: "Org", Capability: "get_user", Binds: []plan.Bind{{Var: "login", Field: "login"}}}, nil)
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := abi.Table{Columns: []string{"org"}, Rows: [][]any{{"org-of-ann"}, {"org-of-cat"}}}
	if got := res.Roots[0].Table; !reflect.DeepEqual(got, want) {
		t.Fatalf("hop table = %v, want %v", got, want)
	}
	n := 0
	for _, d := range e.decodes() {
		if d.Capability == "get_user" {
			n++
			if d.Relation != "orgs" {
				t.Errorf("decode of get_user without relation: %+v", d)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d get_user decodes", n)
	}
}

// TestHopColumnsFromCalls: with no planned columns, rows from calls that
// answer in different column orders (and a skipped parent) stay aligned.
func TestHopColumnsFromCalls(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_users": static([]string{"id"}, []any{nil}, []any{1.0}, []any{2.0}),
		"repos_by_owner": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			if call.Vars["owner"] == 1.0 {
				return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"a", "b"}, Rows: [][]any{{"a1", "b1"}}}}, nil
			}
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"b", "a"}, Rows: [][]any{{"b2", "a2"}}}}, nil
		},
	}}
	p := usersThenHop(plan.Hop{Relation: "repos", Materialize: "query_scoped", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "id"}}}, nil)
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := abi.Table{Columns: []string{"a", "b"}, Rows: [][]any{{"a1", "b1"}, {"a2", "b2"}}}
	if got := res.Roots[0].Table; !reflect.DeepEqual(got, want) {
		t.Fatalf("table = %v, want %v", got, want)
	}
}

func TestHopErrors(t *testing.T) {
	users := static([]string{"login", "id"}, []any{"ann", 1.0}, []any{"bob", 2.0}, []any{"cat", 3.0})
	hop := plan.Hop{Relation: "repos", Materialize: "query_scoped", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "id"}}}
	tests := []struct {
		name    string
		limits  Limits
		budget  Budget
		hop     plan.Hop
		is      error
		wantErr string
	}{
		// One page of users, then three parents to read: 4 > 3.
		{name: "budget", budget: Budget{Pages: 3}, hop: hop, is: ErrBudget, wantErr: "needs 3 more calls"},
		{name: "bind field missing", hop: plan.Hop{Relation: "repos", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "uid"}}}, wantErr: `no field "uid"`},
		{name: "too many rows", limits: Limits{MaxRows: 3}, hop: hop, wantErr: "more than 3 rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{
				"list_users":     users,
				"repos_by_owner": static([]string{"repo"}, []any{"x"}, []any{"y"}),
			}}
			ev := env(e)
			ev.Budget = tt.budget
			_, err := New(&fakeSender{}, tt.limits).Run(context.Background(), usersThenHop(tt.hop, nil), ev)
			var xe *Error
			if !errors.As(err, &xe) || xe.Node != 1 || xe.Op != plan.OpHop {
				t.Fatalf("err = %v, want a step 1 hop error", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.is == ErrBudget && len(e.calls("repos_by_owner")) != 0 {
				t.Fatal("budget checked after calling")
			}
		})
	}
}

func TestMutateOnce(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"create_issue": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"number", "title"}, Rows: [][]any{{42.0, call.Vars["title"]}}}}, nil
		},
	}}
	n := plan.Node{ID: 0, Op: plan.OpMutate, Kind: "create", Effect: plan.EffectWrite, EntryID: entry, Entity: "Issue", Capability: "create_issue", Input: -1, Args: map[string]any{"title": "hello"}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(e.calls("create_issue")) != 1 {
		t.Fatalf("%d create calls", len(e.calls("create_issue")))
	}
	want := abi.Table{Columns: []string{"number", "title"}, Rows: [][]any{{42.0, "hello"}}}
	if !reflect.DeepEqual(res.Roots[0].Table, want) {
		t.Fatalf("table %v", res.Roots[0].Table)
	}
	if !reflect.DeepEqual(res.Mutations, []Mutation{{EntryID: entry, Entity: "Issue", Capability: "create_issue"}}) {
		t.Fatalf("mutations %v", res.Mutations)
	}
}

func TestMutateForEach(t *testing.T) {
	issues := static([]string{"number", "state"}, []any{1.0, "open"}, []any{2.0, "open"}, []any{3.0, "open"})
	closer := func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
		return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"state", "number"}, Rows: [][]any{{call.Vars["reason"], call.Vars["number"]}}}}, nil
	}
	build := func() *plan.Plan {
		list := fetch(0, "list_issues", "Issue")
		m := plan.Node{ID: 1, Op: plan.OpMutate, Kind: "update", Effect: plan.EffectWrite, EntryID: entry, Entity: "Issue", Capability: "close_issue",
			Input: 0, ForEach: &plan.Bind{Var: "number", Field: "number"}, Args: map[string]any{"reason": "done"}, Columns: []string{"number", "state"}}
		return &plan.Plan{Nodes: []plan.Node{list, m}, Roots: roots(1)}
	}
	t.Run("each receiver", func(t *testing.T) {
		e := &fakeEngine{caps: map[string]backendFunc{"list_issues": issues, "close_issue": closer}}
		res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), build(), env(e))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		want := abi.Table{Columns: []string{"number", "state"}, Rows: [][]any{{1.0, "done"}, {2.0, "done"}, {3.0, "done"}}}
		if !reflect.DeepEqual(res.Roots[0].Table, want) {
			t.Fatalf("table %v, want %v", res.Roots[0].Table, want)
		}
		if res.Steps[1].Calls != 3 {
			t.Fatalf("step %+v", res.Steps[1])
		}
		if !reflect.DeepEqual(res.Mutations, []Mutation{{EntryID: entry, Entity: "Issue", Capability: "close_issue", IDs: []string{"1", "2", "3"}}}) {
			t.Fatalf("mutations %v", res.Mutations)
		}
	})
	t.Run("fan-out", func(t *testing.T) {
		e := &fakeEngine{caps: map[string]backendFunc{"list_issues": issues, "close_issue": closer}}
		_, err := New(&fakeSender{}, Limits{MaxFanOut: 2}).Run(context.Background(), build(), env(e))
		if !errors.Is(err, ErrFanOut) {
			t.Fatalf("err = %v, want ErrFanOut", err)
		}
		if len(e.calls("close_issue")) != 0 {
			t.Fatal("mutated before checking fan-out")
		}
	})
	t.Run("keyless receiver changes nothing", func(t *testing.T) {
		e := &fakeEngine{caps: map[string]backendFunc{
			"list_issues": static([]string{"number"}, []any{1.0}, []any{nil}),
			"close_issue": closer,
		}}
		_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), build(), env(e))
		if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("err = %v", err)
		}
		if len(e.calls("close_issue")) != 0 {
			t.Fatal("some receivers were changed")
		}
	})
	t.Run("receiver field missing", func(t *testing.T) {
		e := &fakeEngine{caps: map[string]backendFunc{"list_issues": static([]string{"id"}, []any{1.0}), "close_issue": closer}}
		_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), build(), env(e))
		if err == nil || !strings.Contains(err.Error(), `no field "number"`) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestArgRefs(t *testing.T) {
	build := func() *plan.Plan {
		me := fetch(0, "get_me", "User")
		repos := fetch(1, "repos_by_owner", "Repo")
		repos.ArgRefs = []plan.ArgRef{{Var: "owner", Node: 0, Field: "login"}}
		repos.Args = map[string]any{"sort": "updated"}
		return &plan.Plan{Nodes: []plan.Node{me, repos}, Roots: roots(1)}
	}
	repos := static([]string{"repo"}, []any{"x"})
	tests := []struct {
		name    string
		me      backendFunc
		wantErr string
	}{
		{name: "single row", me: static([]string{"login", "id"}, []any{"ann", 1.0})},
		{name: "several rows", me: static([]string{"login"}, []any{"ann"}, []any{"bob"}), wantErr: "result with 2 rows; it needs exactly one"},
		{name: "no rows", me: static([]string{"login"}), wantErr: "result with no row"},
		{name: "missing field", me: static([]string{"id"}, []any{1.0}), wantErr: `field "login" is not in the referenced result`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"get_me": tt.me, "repos_by_owner": repos}}
			_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), build(), env(e))
			if tt.wantErr != "" {
				var xe *Error
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &xe) || xe.Node != 1 {
					t.Fatalf("err = %v, want step 1 %q", err, tt.wantErr)
				}
				if len(e.calls("repos_by_owner")) != 0 {
					t.Fatal("dependent node called without its argument")
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			calls := e.calls("repos_by_owner")
			if len(calls) != 1 || !reflect.DeepEqual(calls[0].Vars, map[string]any{"owner": "ann", "sort": "updated"}) {
				t.Fatalf("calls %+v", calls)
			}
		})
	}
}

func TestPage(t *testing.T) {
	cont := &Continuation{
		EntryID: entry, Entity: "Repo", Capability: "list_repos", Columns: repoCols,
		Vars: map[string]any{"org": "acme"}, Page: map[string]any{"page": 2.0},
		Filters: []plan.Pred{{Field: "lang", Op: "=", Value: "go"}},
	}
	lister := func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
		if call.Page["page"] != 2.0 || call.Vars["org"] != "acme" {
			return nil, fmt.Errorf("continuation not compiled: %+v", call)
		}
		return &abi.DecodeResponse{Table: abi.Table{Columns: repoCols, Rows: repoRows()}, Next: map[string]any{"page": 3.0}}, nil
	}
	pageNode := func(limit int) *plan.Plan {
		return &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpPage, EntryID: entry, Entity: "Repo", Input: -1, Page: &plan.PageRef{Handle: "s0_pg1", Limit: limit}}}, Roots: roots(0)}
	}
	errGone := errors.New("handle gone")
	resolve := func(h string) (*Continuation, error) {
		switch h {
		case "s0_pg1":
			c := *cont
			return &c, nil
		case "nil":
			return nil, nil
		}
		return nil, errGone
	}

	t.Run("continues", func(t *testing.T) {
		e := &fakeEngine{caps: map[string]backendFunc{"list_repos": lister}}
		ev := env(e)
		ev.ResolvePage = resolve
		res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), pageNode(1), ev)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, []any{1.0}) {
			t.Fatalf("ids %v (filters then limit)", got)
		}
		// limit=1 ended inside page 2: the continuation resumes there,
		// after the one row returned.
		if c := res.Roots[0].Next; c == nil || c.Page["page"] != 2.0 || c.Skip != 1 {
			t.Fatalf("continuation after a cut page: %+v", c)
		}
		res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), pageNode(2), ev)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, []any{1.0, 3.0}) {
			t.Fatalf("ids %v (filters then limit)", got)
		}
		// The two go rows are rows 1 and 3 of page 2: the rest of the
		// list starts after its third row.
		next := res.Roots[0].Next
		want := *cont
		want.Skip = 3
		if next == nil || !reflect.DeepEqual(*next, want) {
			t.Fatalf("next = %+v, want %+v", next, want)
		}
		if cont.Page["page"] != 2.0 {
			t.Fatal("the stored continuation was modified")
		}
		if d := e.decodes(); len(d) != 2 || d[0].Page["page"] != 2.0 || d[1].Page["page"] != 2.0 {
			t.Fatalf("decode did not see the request's page state: %+v", d)
		}
	})
	for _, tc := range []struct {
		name    string
		handle  string
		resolve func(string) (*Continuation, error)
		is      error
	}{
		{name: "unknown handle", handle: "s0_pg9", resolve: resolve, is: errGone},
		{name: "nil continuation", handle: "nil", resolve: resolve},
		{name: "no paging in session", handle: "s0_pg1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"list_repos": lister}}
			ev := env(e)
			ev.ResolvePage = tc.resolve
			p := pageNode(0)
			p.Nodes[0].Page.Handle = tc.handle
			_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, ev)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestParallelRoots(t *testing.T) {
	var inFlight atomic.Int32
	both := make(chan struct{})
	var once sync.Once
	s := &fakeSender{hook: func(ctx context.Context, _ string) (int, error) {
		if inFlight.Add(1) == 2 {
			once.Do(func() { close(both) })
		}
		defer inFlight.Add(-1)
		select {
		case <-both:
			return 200, nil
		case <-time.After(5 * time.Second):
			return 0, errors.New("roots ran one after the other")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}}
	e := &fakeEngine{caps: map[string]backendFunc{"a": static([]string{"x"}, []any{1.0}), "b": static([]string{"x"}, []any{2.0})}}
	p := &plan.Plan{Nodes: []plan.Node{fetch(0, "a", "A"), fetch(1, "b", "B")}, Roots: roots(0, 1)}
	res, err := New(s, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Roots) != 2 || res.Roots[0].Label != "n0" || res.Roots[1].Table.Rows[0][0] != 2.0 {
		t.Fatalf("roots %+v", res.Roots)
	}
}

func TestConcurrencyBound(t *testing.T) {
	var inFlight, peak atomic.Int32
	s := &fakeSender{hook: func(ctx context.Context, capability string) (int, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		return 200, nil
	}}
	var rows [][]any
	for i := range 12 {
		rows = append(rows, []any{float64(i)})
	}
	e := &fakeEngine{caps: map[string]backendFunc{"list_users": static([]string{"id"}, rows...), "repos_by_owner": static([]string{"repo"}, []any{"x"})}}
	p := usersThenHop(plan.Hop{Relation: "repos", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "id"}}}, nil)
	res, err := New(s, Limits{Concurrency: 3}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Roots[0].Table.Rows) != 12 {
		t.Fatalf("rows %d", len(res.Roots[0].Table.Rows))
	}
	if pk := peak.Load(); pk > 3 || pk < 2 {
		t.Fatalf("peak in flight %d, want 2..3", pk)
	}
}

func TestFirstErrorCancelsOthers(t *testing.T) {
	var slowCanceled atomic.Bool
	slowStarted := make(chan struct{})
	s := &fakeSender{hook: func(ctx context.Context, capability string) (int, error) {
		switch capability {
		case "fails":
			// Fail only once the slow call is in flight, so its cancellation
			// is observable.
			<-slowStarted
			return 0, fmt.Errorf("%w: nope", egress.ErrDenied)
		case "slow":
			close(slowStarted)
			select {
			case <-ctx.Done():
				slowCanceled.Store(true)
				return 0, ctx.Err()
			case <-time.After(10 * time.Second):
				return 200, nil
			}
		}
		return 200, nil
	}}
	e := &fakeEngine{caps: map[string]backendFunc{"fails": static([]string{"x"}), "slow": static([]string{"x"}), "after": static([]string{"x"}, []any{1.0})}}
	after := fetch(2, "after", "X")
	after.Deps = []int{0}
	p := &plan.Plan{Nodes: []plan.Node{fetch(0, "fails", "F"), fetch(1, "slow", "S"), after}, Roots: roots(0, 1, 2)}
	start := time.Now()
	_, err := New(s, Limits{}).Run(context.Background(), p, env(e))
	if !errors.Is(err, egress.ErrDenied) {
		t.Fatalf("err = %v, want the failing node's error", err)
	}
	var xe *Error
	if !errors.As(err, &xe) || xe.Node != 0 || xe.Entity != "F" {
		t.Fatalf("err not tied to node 0: %v", err)
	}
	t.Logf("run took %v", time.Since(start))
	if !slowCanceled.Load() {
		t.Fatal("slow node's context was not cancelled")
	}
	if len(e.calls("after")) != 0 {
		t.Fatal("a node whose dependency failed still ran")
	}
}

func TestCallerCancel(t *testing.T) {
	s := &fakeSender{hook: func(ctx context.Context, _ string) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}}
	e := &fakeEngine{caps: map[string]backendFunc{"a": static([]string{"x"})}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := New(s, Limits{}).Run(ctx, &plan.Plan{Nodes: []plan.Node{fetch(0, "a", "A")}, Roots: roots(0)}, env(e))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestBackendAndDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		decode  backendFunc
		origins map[string][]egress.Origin
		is      error
		wantErr string
	}{
		{name: "404", status: 404, decode: static([]string{"x"}), is: ErrBackend, wantErr: "answered 404 Not Found: not found"},
		{name: "decode failure", status: 200, decode: func(*abi.CompileRequest, string) (*abi.DecodeResponse, error) {
			return nil, &abi.Error{Code: "decode", Message: "bad json"}
		}, wantErr: "decode a: bad json"},
		{name: "ragged row", status: 200, decode: static([]string{"x", "y"}, []any{1.0, 2.0}, []any{1.0}), wantErr: "row 2 has 1 cells for 2 columns"},
		{name: "long row", status: 200, decode: static([]string{"x"}, []any{1.0, 2.0}), wantErr: "row 1 has 2 cells for 1 columns"},
		{name: "nil result", status: 200, decode: func(*abi.CompileRequest, string) (*abi.DecodeResponse, error) { return nil, nil }, wantErr: "no result"},
		{name: "no origins for entry", status: 200, decode: static([]string{"x"}), origins: map[string][]egress.Origin{}, is: egress.ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &fakeSender{hook: func(context.Context, string) (int, error) { return tt.status, nil }}
			e := &fakeEngine{caps: map[string]backendFunc{"a": tt.decode}}
			ev := env(e)
			if tt.origins != nil {
				ev.Origins = tt.origins
			}
			n := fetch(0, "a", "A")
			n.Transforms = []plan.Transform{{Kind: plan.TSort, Field: "x"}}
			_, err := New(s, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, ev)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %v %q", err, tt.is, tt.wantErr)
			}
		})
	}
}

func TestMalformedPlans(t *testing.T) {
	f := func(id int) plan.Node { return fetch(id, "a", "A") }
	withDeps := func(n plan.Node, deps ...int) plan.Node { n.Deps = deps; return n }
	tests := []struct {
		name    string
		plan    *plan.Plan
		env     *Env
		wantErr string
	}{
		{name: "nil plan", plan: nil, wantErr: "no plan"},
		{name: "id mismatch", plan: &plan.Plan{Nodes: []plan.Node{f(0), f(5)}}, wantErr: "node 1 has id 5"},
		{name: "dep out of range", plan: &plan.Plan{Nodes: []plan.Node{withDeps(f(0), 3)}}, wantErr: "node 0 depends on 3"},
		{name: "negative dep", plan: &plan.Plan{Nodes: []plan.Node{withDeps(f(0), -2)}}, wantErr: "depends on -2"},
		{name: "input out of range", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpTransform, Input: 7}}}, wantErr: "depends on 7"},
		{name: "zero input is self", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpFetch}}}, wantErr: "node 0 depends on 0"},
		{name: "self dep", plan: &plan.Plan{Nodes: []plan.Node{withDeps(f(0), 0)}}, wantErr: "depends on 0"},
		{name: "cycle", plan: &plan.Plan{Nodes: []plan.Node{withDeps(f(0), 1), withDeps(f(1), 0)}}, wantErr: "cycle"},
		{name: "cycle through argrefs", plan: &plan.Plan{Nodes: []plan.Node{
			f(0),
			{ID: 1, Op: plan.OpFetch, Input: -1, ArgRefs: []plan.ArgRef{{Var: "v", Node: 2, Field: "x"}}},
			{ID: 2, Op: plan.OpTransform, Input: 1},
		}}, wantErr: "cycle"},
		// The mutation must not run before the bad root is noticed.
		{name: "root out of range", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpMutate, EntryID: entry, Capability: "a", Input: -1}}, Roots: []plan.Root{{Label: "x", Node: 1}}}, wantErr: `root "x" names node 1`},
		{name: "negative root", plan: &plan.Plan{Nodes: []plan.Node{f(0)}, Roots: []plan.Root{{Label: "x", Node: -1}}}, wantErr: "names node -1"},
		{name: "nil env", plan: &plan.Plan{Nodes: []plan.Node{f(0)}}, env: &Env{}, wantErr: "without an engine"},
		{name: "unknown op", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: "teleport", Input: -1}}}, wantErr: `unknown plan op "teleport"`},
		{name: "hop without relation", plan: &plan.Plan{Nodes: []plan.Node{f(0), {ID: 1, Op: plan.OpHop, Input: 0}}}, wantErr: "hop without relation"},
		{name: "hop without input", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpHop, Input: -1, Hop: &plan.Hop{}}}}, wantErr: "hop without relation or input"},
		{name: "transform without input", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpTransform, Input: -1}}}, wantErr: "transform without input"},
		{name: "for-each without input", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpMutate, Input: -1, ForEach: &plan.Bind{Var: "v", Field: "x"}}}}, wantErr: "for-each mutation without input"},
		{name: "page without ref", plan: &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpPage, Input: -1}}}, wantErr: "paging handles are not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"a": static([]string{"x"}, []any{1.0})}}
			s := &fakeSender{}
			ev := tt.env
			if ev == nil {
				ev = env(e)
			}
			_, err := New(s, Limits{}).Run(context.Background(), tt.plan, ev)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			// Structural problems are found before anything is sent.
			if strings.Contains(err.Error(), "malformed plan") {
				if n := s.count(); n != 0 {
					t.Fatalf("%d calls made for a malformed plan", n)
				}
			}
		})
	}
}

func TestEmptyPlan(t *testing.T) {
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{}, nil)
	if err != nil || len(res.Roots) != 0 {
		t.Fatalf("res %+v err %v", res, err)
	}
}

// TestWithEgress runs a plan through the real egress client against a
// loopback backend.
func TestWithEgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `[{"id":1,"name":"alpha"},{"id":2,"name":"beta"}]`)
	}))
	defer srv.Close()
	origin, err := egress.ParseOrigin(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	eg := egress.New(egress.Limits{Timeout: 5 * time.Second})
	defer eg.Close()
	eng := engineFunc{
		compile: func(req *abi.CompileRequest) (*abi.CompiledRequest, error) {
			return &abi.CompiledRequest{Method: "GET", URL: srv.URL + "/" + req.Capability, Auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "GH_TOKEN"}}, nil
		},
		decode: func(req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
			if req.Status != 200 {
				return nil, &abi.Error{Code: "backend", Message: "unauthorised"}
			}
			var items []map[string]any
			if err := json.Unmarshal(body, &items); err != nil {
				return nil, err
			}
			t := abi.Table{Columns: []string{"id", "name"}}
			for _, it := range items {
				t.Rows = append(t.Rows, []any{it["id"], it["name"]})
			}
			return &abi.DecodeResponse{Table: t}, nil
		},
	}
	p := &plan.Plan{Nodes: []plan.Node{fetch(0, "repos", "Repo")}, Roots: roots(0)}
	p.Nodes[0].Transforms = []plan.Transform{{Kind: plan.TSort, Field: "id", Desc: true}}
	ev := &Env{Engine: eng, SecretsFor: allSecrets(secretMap{"GH_TOKEN": "t0k"}), Origins: map[string][]egress.Origin{entry: {origin}}}
	res, err := New(eg, Limits{}).Run(context.Background(), p, ev)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := column(res.Roots[0].Table, "name"); !reflect.DeepEqual(got, []any{"beta", "alpha"}) {
		t.Fatalf("names %v", got)
	}

	ev.SecretsFor = allSecrets(secretMap{"GH_TOKEN": "wrong"})
	if _, err := New(eg, Limits{}).Run(context.Background(), p, ev); !errors.Is(err, ErrBackend) {
		t.Fatalf("err = %v, want ErrBackend", err)
	}
	ev.SecretsFor = allSecrets(secretMap{})
	if _, err := New(eg, Limits{}).Run(context.Background(), p, ev); !errors.Is(err, egress.ErrSecret) {
		t.Fatalf("err = %v, want ErrSecret", err)
	}
	ev.Origins = map[string][]egress.Origin{"other": {origin}}
	if _, err := New(eg, Limits{}).Run(context.Background(), p, ev); !errors.Is(err, egress.ErrDenied) {
		t.Fatalf("err = %v, want ErrDenied", err)
	}
}

type secretMap map[string]string

func (s secretMap) Secret(n string) (string, bool) { v, ok := s[n]; return v, ok }

// allSecrets gives every entry the same, unscoped secrets.
func allSecrets(s egress.Secrets) func(string) egress.Secrets {
	return func(string) egress.Secrets { return s }
}

type engineFunc struct {
	compile func(*abi.CompileRequest) (*abi.CompiledRequest, error)
	decode  func(*abi.DecodeRequest, []byte) (*abi.DecodeResponse, error)
}

func (e engineFunc) Compile(_ context.Context, r *abi.CompileRequest) (*abi.CompiledRequest, error) {
	return e.compile(r)
}

func (e engineFunc) Decode(_ context.Context, r *abi.DecodeRequest, b []byte) (*abi.DecodeResponse, error) {
	return e.decode(r, b)
}

func TestText(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, ""}, {"s", "s"}, {true, "true"}, {int64(-3), "-3"}, {3, "3"}, {1.5, "1.5"}, {1e21, "1000000000000000000000"},
		{json.Number("12"), "12"}, {[]any{"a", 1.0}, `["a",1]`}, {map[string]any{"k": "v"}, `{"k":"v"}`},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRun feeds arbitrary plans (as a guest could emit them) to the
// executor: it may reject them, but must not panic or hang.
func FuzzRun(f *testing.F) {
	seeds := []*plan.Plan{
		{Nodes: []plan.Node{fetch(0, "a", "A")}, Roots: roots(0)},
		usersThenHop(plan.Hop{Relation: "r", Capability: "b", Binds: []plan.Bind{{Var: "v", Field: "id"}}}, []string{"id", "name"}),
		{Nodes: []plan.Node{
			fetch(0, "a", "A"),
			{ID: 1, Op: plan.OpMutate, EntryID: entry, Capability: "c", Input: 0, ForEach: &plan.Bind{Var: "v", Field: "id"}},
			{ID: 2, Op: plan.OpTransform, Input: 1, Transforms: []plan.Transform{{Kind: plan.TSort, Field: "name", Desc: true}, {Kind: plan.TProject, Fields: []string{"name"}}, {Kind: plan.TLimit, N: 1}}},
			{ID: 3, Op: plan.OpFetch, EntryID: entry, Capability: "d", Input: -1, ArgRefs: []plan.ArgRef{{Var: "x", Node: 2, Field: "name"}}},
		}, Roots: roots(2, 3)},
		{Nodes: []plan.Node{{ID: 0, Op: plan.OpPage, Input: -1, Page: &plan.PageRef{Handle: "h", Limit: 1}}}, Roots: roots(0)},
	}
	for _, p := range seeds {
		b, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"nodes":[{"id":0,"op":"fetch","input":0}]}`))
	f.Add([]byte(`{"nodes":[{"id":0,"op":"transform","input":-1,"transforms":[{"kind":"filter","preds":[{"field":"id","op":">","value":[1]}]}]}],"roots":[{"node":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p plan.Plan
		if json.Unmarshal(data, &p) != nil || len(p.Nodes) > 64 {
			return
		}
		e := &fakeEngine{fallback: static([]string{"id", "name"}, []any{1.0, "a"}, []any{2.0, nil}, []any{nil, "c"})}
		ev := env(e)
		ev.ResolvePage = func(string) (*Continuation, error) {
			return &Continuation{EntryID: entry, Capability: "a", Page: map[string]any{"p": 1.0}}, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := New(&fakeSender{}, Limits{MaxFanOut: 8, MaxRows: 100}).Run(ctx, &p, ev)
		if err == nil && len(res.Roots) != len(p.Roots) {
			t.Fatalf("%d roots for %d", len(res.Roots), len(p.Roots))
		}
	})
}

// A .limit is the first n rows of the whole list: it fills from later pages
// when a page is short of n, and never offers a continuation.
func TestLimitFillsFromLaterPages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		ids   []any
		calls int
	}{
		{"limit within the first page", 2, []any{1.0, 2.0}, 1},
		{"limit covers the page", 4, []any{1.0, 2.0, 3.0, 4.0}, 1},
		{"limit above the page", 6, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, 2},
		{"limit above the list", 10, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"list_repos": twoRepoPages}}
			f := fetch(0, "list_repos", "Repo")
			f.Transforms = []plan.Transform{{Kind: plan.TLimit, N: tc.limit}}
			res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f}, Roots: roots(0)}, env(e))
			if err != nil {
				t.Fatal(err)
			}
			if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, tc.ids) || res.Roots[0].Next != nil {
				t.Errorf("ids %v next %v, want %v and no continuation", got, res.Roots[0].Next, tc.ids)
			}
			if n := len(e.calls("list_repos")); n != tc.calls {
				t.Errorf("%d calls, want %d", n, tc.calls)
			}
			// The same holds for a transform node over a bound list.
			tr := plan.Node{ID: 1, Op: plan.OpTransform, EntryID: entry, Entity: "Repo", Input: 0, Transforms: []plan.Transform{{Kind: plan.TLimit, N: tc.limit}}}
			res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{fetch(0, "list_repos", "Repo"), tr}, Roots: roots(1)}, env(e))
			if err != nil {
				t.Fatal(err)
			}
			if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, tc.ids) || res.Roots[0].Next != nil {
				t.Errorf("transform node: ids %v next %v", got, res.Roots[0].Next)
			}
		})
	}
}

// A relation hop returns all of each parent's related rows: it follows the
// target list's pages (bounded), instead of silently keeping the first.
func TestHopFollowsPages(t *testing.T) {
	pages := func(total int) backendFunc {
		return func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			page := 1
			if p, ok := call.Page["page"].(float64); ok {
				page = int(p)
			}
			owner := call.Vars["owner"]
			out := &abi.DecodeResponse{Table: abi.Table{Columns: []string{"repo", "owner"}, Rows: [][]any{{fmt.Sprint("r", page, "-", owner), owner}}}}
			if page < total {
				out.Next = map[string]any{"page": float64(page + 1)}
			}
			return out, nil
		}
	}
	hop := plan.Hop{Relation: "repos", Materialize: "query_scoped", Target: "Repo", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "id"}}}
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_users":     static([]string{"login", "id"}, []any{"ann", 1.0}, []any{"cat", 3.0}),
		"repos_by_owner": pages(3),
	}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), usersThenHop(hop, []string{"repo", "owner"}), env(e))
	if err != nil {
		t.Fatal(err)
	}
	if got := column(res.Roots[0].Table, "repo"); !reflect.DeepEqual(got, []any{"r1-1", "r2-1", "r3-1", "r1-3", "r2-3", "r3-3"}) {
		t.Fatalf("hop rows %v", got)
	}
	if res.Roots[0].Next != nil {
		t.Fatal("a hop offered a continuation it cannot honour")
	}

	e.caps["repos_by_owner"] = pages(1000)
	_, err = New(&fakeSender{}, Limits{}).Run(context.Background(), usersThenHop(hop, []string{"repo", "owner"}), env(e))
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "250 pages") {
		t.Fatalf("unbounded relation: %v", err)
	}
}

// page(handle) answers in the same shape as the first page: the program's
// filters, postfix steps and projection apply to every later page.
func TestPageKeepsTransforms(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{"list_repos": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
		if call.Page["page"] == 2.0 {
			return &abi.DecodeResponse{Table: abi.Table{Columns: repoCols, Rows: repoRows()[2:4]}, Next: map[string]any{"page": 3.0}}, nil
		}
		return &abi.DecodeResponse{Table: abi.Table{Columns: repoCols, Rows: repoRows()[:2]}, Next: map[string]any{"page": 2.0}}, nil
	}}}
	f := fetch(0, "list_repos", "Repo")
	f.Columns = repoCols
	f.Transforms = []plan.Transform{{Kind: plan.TProject, Fields: []string{"id", "name"}}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f}, Roots: roots(0)}, env(e))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Roots[0].Next
	if c == nil {
		t.Fatal("no continuation")
	}
	ev := env(e)
	ev.ResolvePage = func(string) (*Continuation, error) { return c, nil }
	pg := &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpPage, Input: -1, Page: &plan.PageRef{Handle: "s0_pg1"}}}, Roots: roots(0)}
	res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), pg, ev)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Roots[0].Table
	if !reflect.DeepEqual(got.Columns, []string{"id", "name"}) || len(got.Rows) != 2 {
		t.Fatalf("page 2 shape: %v", got)
	}
}

type recordingObserver struct {
	mu    sync.Mutex
	calls []string
}

func (o *recordingObserver) BackendCall(entry string, status int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, fmt.Sprintf("%s %d %v", entry, status, err))
}

// The observer hears each backend call with the entry it was made for: the
// executor passes the entry, nobody parses it back out of a URL or context.
func TestObserverHearsEntry(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{"list_repos": static(repoCols, repoRows()...)}}
	obs := &recordingObserver{}
	p := &plan.Plan{Nodes: []plan.Node{fetch(0, "list_repos", "Repo")}, Roots: roots(0)}
	if _, err := New(&fakeSender{}, Limits{}, WithObserver(obs)).Run(context.Background(), p, env(e)); err != nil {
		t.Fatal(err)
	}
	want := []string{entry + " 200 <nil>"}
	if !reflect.DeepEqual(obs.calls, want) {
		t.Fatalf("observer heard %q, want %q", obs.calls, want)
	}
}
