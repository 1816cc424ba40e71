package executor

import (
	"context"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// TestDateRunAndPage: through Run, Env.Dates makes a fetch's filter and
// sort compare instants, and page(handle) keeps doing so on later pages
// (the continuation names its entity; its dates are looked up again).
func TestDateRunAndPage(t *testing.T) {
	cols := []string{"id", "created_at"}
	e := &fakeEngine{caps: map[string]backendFunc{"list_issues": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
		if call.Page["page"] == 2.0 {
			return &abi.DecodeResponse{Table: abi.Table{Columns: cols, Rows: [][]any{
				{"iss-3", "2025-03-20T11:00:00Z"}, {"iss-4", "2025-03-20T09:59:59.999Z"},
			}}}, nil
		}
		return &abi.DecodeResponse{Table: abi.Table{Columns: cols, Rows: [][]any{
			{"iss-1", "2025-03-21T08:00:00Z"}, {"iss-2", "2025-03-20T10:00:00.000Z"}, {"iss-0", "2025-03-20T10:30:00+00:00"},
		}}, Next: map[string]any{"page": 2.0}}, nil
	}}}
	ev := env(e)
	ev.Dates = func(entryID, entity string) map[string]string {
		if entryID == entry && entity == "Issue" {
			return map[string]string{"created_at": DateRFC3339}
		}
		return nil
	}
	f := fetch(0, "list_issues", "Issue")
	f.Columns = cols
	f.Filters = []plan.Pred{{Field: "created_at", Op: ">", Value: "2025-03-20T12:00:00+02:00"}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f}, Roots: roots(0)}, ev)
	if err != nil {
		t.Fatal(err)
	}
	// A filtered list is read whole (no handle), by instant on every page.
	if got := column(res.Roots[0].Table, "id"); len(got) != 3 || got[0] != "iss-1" || got[1] != "iss-0" || got[2] != "iss-3" {
		t.Fatalf("filtered: %v; want iss-1 iss-0 iss-3", got)
	}
	// A handle that carries filters (as a transform's continuation does)
	// looks its entity's dates up again.
	c := &Continuation{EntryID: entry, Entity: "Issue", Capability: "list_issues", Columns: cols,
		Page: map[string]any{"page": 2.0}, Filters: f.Filters}
	ev.ResolvePage = func(string) (*Continuation, error) { return c, nil }
	pg := &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpPage, Input: -1, Page: &plan.PageRef{Handle: "s0_pg1"}}}, Roots: roots(0)}
	res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), pg, ev)
	if err != nil {
		t.Fatal(err)
	}
	if got := column(res.Roots[0].Table, "id"); len(got) != 1 || got[0] != "iss-3" {
		t.Fatalf("page 2: %v; want iss-3 (11:00Z, text put it before 12:00+02:00)", got)
	}

	// A sort reads the whole list and orders it by instant.
	f.Transforms = []plan.Transform{{Kind: plan.TSort, Field: "created_at"}}
	res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f}, Roots: roots(0)}, ev)
	if err != nil {
		t.Fatal(err)
	}
	if got := column(res.Roots[0].Table, "id"); len(got) != 3 || got[0] != "iss-0" || got[1] != "iss-3" || got[2] != "iss-1" {
		t.Fatalf("sorted: %v; want iss-0 iss-3 iss-1", got)
	}

	// A limit read stops once the filter by instant is filled, and a
	// min after it is a date too (a compute node over the fetch).
	f.Transforms = []plan.Transform{{Kind: plan.TLimit, N: 3}}
	agg := plan.Node{ID: 1, Op: plan.OpTransform, Effect: plan.EffectRead, EntryID: entry, Input: 0, Deps: []int{0},
		Transforms: []plan.Transform{{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "first", Fn: plan.AggMin, Field: "created_at"}}}}}
	res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f, agg}, Roots: roots(1)}, ev)
	if err != nil {
		t.Fatal(err)
	}
	if got := column(res.Roots[0].Table, "first"); len(got) != 1 || got[0] != "2025-03-20T10:30:00+00:00" {
		t.Fatalf("min over the limited read: %v", got)
	}
}
