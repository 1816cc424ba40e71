package executor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

var issueCols = []string{"id", "title", "body"}

// listThenHydrate is a list of issues (without bodies unless given) and a
// hydrate node filling body through get_issue.
func listThenHydrate(rows ...[]any) (*plan.Plan, *fakeEngine) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_issues": static(issueCols, rows...),
		"get_issue": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			id := call.Vars["id"]
			return &abi.DecodeResponse{Table: abi.Table{
				Columns: []string{"body", "id", "title"},
				Rows:    [][]any{{fmt.Sprint("body of ", id), id, "title from get"}},
			}}, nil
		},
	}}
	h := plan.Node{ID: 1, Op: plan.OpHydrate, Kind: "get", Effect: plan.EffectRead, EntryID: entry, Entity: "Issue",
		Capability: "get_issue", Columns: issueCols, Input: 0, Many: true, Deps: []int{0},
		Hydrate: &plan.Hydrate{Binds: []plan.Bind{{Var: "id", Field: "id"}}, Fields: []string{"body"}}}
	p := &plan.Plan{Nodes: []plan.Node{fetch(0, "list_issues", "Issue"), h}, Roots: roots(1)}
	p.Nodes[0].Columns = issueCols
	return p, e
}

func TestHydrateFills(t *testing.T) {
	p, e := listThenHydrate([]any{"i1", "one", nil}, []any{"i2", "two", "kept"}, []any{"i3", "three", nil})
	p.Nodes[1].Transforms = []plan.Transform{{Kind: plan.TProject, Fields: []string{"id", "title", "body"}}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := abi.Table{Columns: issueCols, Rows: [][]any{
		{"i1", "one", "body of i1"},
		{"i2", "two", "kept"}, // already complete: not read again
		{"i3", "three", "body of i3"},
	}}
	if got := res.Roots[0].Table; !reflect.DeepEqual(got, want) {
		t.Fatalf("table = %v, want %v", got, want)
	}
	if n := len(e.calls("get_issue")); n != 2 {
		t.Errorf("%d gets, want 2 (one per incomplete row)", n)
	}
	if res.Steps[1].Calls != 2 || res.Steps[1].Rows != 3 {
		t.Errorf("hydrate step %+v", res.Steps[1])
	}
}

// The input node's table is shared (it may be a root or a label); filling
// must not write into it.
func TestHydrateLeavesInputAlone(t *testing.T) {
	p, e := listThenHydrate([]any{"i1", "one", nil})
	p.Roots = roots(0, 1)
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := column(res.Roots[0].Table, "body"); !reflect.DeepEqual(got, []any{nil}) {
		t.Errorf("input rows changed: %v", got)
	}
	if got := column(res.Roots[1].Table, "body"); !reflect.DeepEqual(got, []any{"body of i1"}) {
		t.Errorf("hydrated rows: %v", got)
	}
}

func TestHydrateMissingColumnAndKeylessRow(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_issues": static([]string{"id", "title"}, []any{"i1", "one"}, []any{nil, "keyless"}),
		"get_issue": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"body"}, Rows: [][]any{{"b"}}}}, nil
		},
	}}
	h := plan.Node{ID: 1, Op: plan.OpHydrate, Effect: plan.EffectRead, EntryID: entry, Entity: "Issue", Capability: "get_issue", Input: 0, Many: true,
		Hydrate: &plan.Hydrate{Binds: []plan.Bind{{Var: "id", Field: "id"}}, Fields: []string{"body"}}}
	p := &plan.Plan{Nodes: []plan.Node{fetch(0, "list_issues", "Issue"), h}, Roots: roots(1)}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := abi.Table{Columns: []string{"id", "title", "body"}, Rows: [][]any{{"i1", "one", "b"}, {nil, "keyless", nil}}}
	if got := res.Roots[0].Table; !reflect.DeepEqual(got, want) {
		t.Fatalf("table = %v, want %v", got, want)
	}
	if n := len(e.calls("get_issue")); n != 1 {
		t.Errorf("%d gets; a row without its key must be skipped", n)
	}
}

func TestHydrateNotFoundKeepsRow(t *testing.T) {
	p, e := listThenHydrate([]any{"i1", "one", nil}, []any{"gone", "two", nil}, []any{"i3", "three", nil})
	s := &fakeSender{statusOf: func(call *abi.CompileRequest) int {
		if call.Vars["id"] == "gone" {
			return 404
		}
		return 200
	}}
	res, err := New(s, Limits{}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []any{"body of i1", nil, "body of i3"}
	if got := column(res.Roots[0].Table, "body"); !reflect.DeepEqual(got, want) {
		t.Fatalf("bodies = %v, want %v", got, want)
	}
	if got := column(res.Roots[0].Table, "title"); !reflect.DeepEqual(got, []any{"one", "two", "three"}) {
		t.Errorf("titles = %v: the 404 row must be kept as listed", got)
	}
}

func TestHydrateErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		limits  Limits
		mutate  func(p *plan.Plan)
		is      error
		wantErr string
	}{
		{name: "backend failure", status: 500, is: ErrBackend, wantErr: "hydrate Issue row"},
		{name: "forbidden", status: 403, is: ErrBackend, wantErr: "answered 403"},
		{name: "fan-out", status: 200, limits: Limits{MaxFanOut: 2}, is: ErrFanOut, wantErr: "reading 3 Issue rows in full (max 2)"},
		{name: "no key field", status: 200, mutate: func(p *plan.Plan) { p.Nodes[1].Hydrate.Binds[0].Field = "number" }, wantErr: `no key field "number"`},
		{name: "no hydrate", status: 200, mutate: func(p *plan.Plan) { p.Nodes[1].Hydrate = nil }, wantErr: "hydrate without fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, e := listThenHydrate([]any{"i1", "a", nil}, []any{"i2", "b", nil}, []any{"i3", "c", nil})
			if tt.mutate != nil {
				tt.mutate(p)
			}
			s := &fakeSender{statusOf: func(call *abi.CompileRequest) int {
				if call.Capability == "get_issue" {
					return tt.status
				}
				return 200
			}}
			_, err := New(s, tt.limits).Run(context.Background(), p, env(e))
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %v %q", err, tt.is, tt.wantErr)
			}
			var xe *Error
			if !errors.As(err, &xe) || xe.Node != 1 || xe.Op != plan.OpHydrate {
				t.Errorf("error not tied to the hydrate node: %#v", err)
			}
		})
	}
}

func TestHydrateConcurrencyBound(t *testing.T) {
	var inFlight, peak atomic.Int32
	s := &fakeSender{hook: func(ctx context.Context, capability string) (int, error) {
		if capability != "get_issue" {
			return 200, nil
		}
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
		rows = append(rows, []any{fmt.Sprint("i", i), "t", nil})
	}
	p, e := listThenHydrate(rows...)
	res, err := New(s, Limits{Concurrency: 3}).Run(context.Background(), p, env(e))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i, b := range column(res.Roots[0].Table, "body") {
		if b != fmt.Sprint("body of i", i) {
			t.Fatalf("row %d body %v: rows must keep their positions", i, b)
		}
	}
	if pk := peak.Load(); pk > 3 || pk < 2 {
		t.Fatalf("peak in flight %d, want 2..3", pk)
	}
}

func TestHopDistinctForOneRelation(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_tx": static([]string{"id", "account_id"},
			[]any{"t1", "a1"}, []any{"t2", "a2"}, []any{"t3", "a1"}, []any{"t4", nil}, []any{"t5", "a2"}, []any{"t6", "a3"}),
		"account_query": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"id", "name"}, Rows: [][]any{{call.Vars["id"], fmt.Sprint("acct ", call.Vars["id"])}}}}, nil
		},
	}}
	hop := plan.Node{ID: 1, Op: plan.OpHop, Effect: plan.EffectRead, EntryID: entry, Entity: "Account", Columns: []string{"id", "name"}, Input: 0, Many: true,
		Hop: &plan.Hop{Relation: "account", Materialize: "query_scoped_bindings", Target: "Account", Capability: "account_query",
			Binds: []plan.Bind{{Var: "id", Field: "account_id"}}}}
	for _, tc := range []struct {
		distinct string
		want     []any
	}{
		{"id", []any{"a1", "a2", "a3"}},
		{"", []any{"a1", "a2", "a1", "a2", "a3"}}, // a many relation stays one answer per parent
	} {
		p := &plan.Plan{Nodes: []plan.Node{fetch(0, "list_tx", "Transaction"), hop}, Roots: roots(1)}
		p.Nodes[1].Hop.DistinctBy = tc.distinct
		res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, env(e))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("distinct %q: ids = %v, want %v", tc.distinct, got, tc.want)
		}
	}
}

func TestDistinct(t *testing.T) {
	tb := abi.Table{Columns: []string{"id"}, Rows: [][]any{{1.0}, {"1"}, {1.0}, {nil}, {nil}, {[]any{"x"}}, {[]any{"x"}}}}
	got, err := distinct(tb, "id")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{1.0}, {"1"}, {nil}, {nil}, {[]any{"x"}}}
	if !reflect.DeepEqual(got.Rows, want) {
		t.Errorf("rows = %v, want %v", got.Rows, want)
	}
	if _, err := distinct(abi.Table{Columns: []string{"x"}, Rows: [][]any{{1}}}, "id"); err == nil {
		t.Error("rows without the id field must be refused")
	}
	if _, err := distinct(abi.Table{}, "id"); err != nil {
		t.Errorf("empty table: %v", err)
	}
}

// A from_parent_get hop whose get of a parent answers 404 fails as a get
// of that row would: not-found naming the parent's entity and id (it used
// to fail with "get_user answered 404 Not Found" and no id).
func TestHopParentNotFound(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_users": static([]string{"login", "id"}, []any{"ann", 1.0}, []any{"gone", 2.0}),
		"get_user": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"org"}, Rows: [][]any{{"o"}}}}, nil
		},
	}}
	s := &fakeSender{statusOf: func(call *abi.CompileRequest) int {
		if call.Vars["login"] == "gone" {
			return 404
		}
		return 200
	}}
	for _, tc := range []struct {
		name  string
		binds []plan.Bind
		id    any
	}{
		{"one key", []plan.Bind{{Var: "login", Field: "login"}}, "gone"},
		{"compound key", []plan.Bind{{Var: "login", Field: "login"}, {Var: "n", Field: "id"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := usersThenHop(plan.Hop{Relation: "orgs", Materialize: "from_parent_get", Target: "Org", Capability: "get_user", Binds: tc.binds}, nil)
			p.Nodes[0].Entity = "User"
			_, err := New(s, Limits{}).Run(context.Background(), p, env(e))
			var nf *NotFoundError
			if !errors.As(err, &nf) || nf.Entity != "User" || nf.ID != tc.id || nf.Capability != "get_user" {
				t.Fatalf("error %v, want User %v not found", err, tc.id)
			}
			want := `User "gone" not found`
			if tc.id == nil {
				want = `User (login="gone", id=2) not found`
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to say %q", err, want)
			}
		})
	}
	// A query_scoped hop's 404 is about the target query, not a get of
	// the parent: it stays the backend's answer.
	p := usersThenHop(plan.Hop{Relation: "orgs", Materialize: "query_scoped", Target: "Org", Capability: "get_user", Binds: []plan.Bind{{Var: "login", Field: "login"}}}, nil)
	_, err := New(s, Limits{}).Run(context.Background(), p, env(e))
	var nf *NotFoundError
	if errors.As(err, &nf) || !errors.Is(err, ErrBackend) {
		t.Errorf("query_scoped 404: %v, want the backend error", err)
	}
}
