package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// pagedIDs serves ids 1..total in pages of size, by the state's page.
func pagedIDs(total, size int) backendFunc {
	return func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
		page := 1
		if v, ok := call.Page["page"].(float64); ok {
			page = int(v)
		}
		t := abi.Table{Columns: []string{"id"}}
		for i := (page-1)*size + 1; i <= min(page*size, total); i++ {
			owner, _ := call.Vars["owner"].(string)
			t.Rows = append(t.Rows, []any{fmt.Sprint(owner, i)})
		}
		r := &abi.DecodeResponse{Table: t}
		if page*size < total {
			r.Next = map[string]any{"page": float64(page + 1)}
		}
		return r, nil
	}
}

// TestBudgetLimitWithoutSort: a .limit(n) without a sort before it is
// charged only the rows it needs, and a limited hop reads its parents'
// lists in order until the limit is filled, so neither is refused for rows
// it never uses (before: read_rows 5 refused .limit(4) of pages of 3, and
// Par.kids.limit(2) read every parent's kids). A limit that needs more than
// the budget is still refused, with a hint that does not suggest what the
// program already is.
func TestBudgetLimitWithoutSort(t *testing.T) {
	limit := func(n int) []plan.Transform { return []plan.Transform{{Kind: plan.TLimit, N: n}} }
	kids := func(n int) *plan.Plan {
		p := usersThenHop(plan.Hop{Relation: "repos", Materialize: "query_scoped", Target: "Repo", Capability: "repos_by_owner", Binds: []plan.Bind{{Var: "owner", Field: "login"}}}, []string{"id"})
		p.Nodes[1].Transforms = limit(n)
		return p
	}
	list := func(n int) *plan.Plan {
		return &plan.Plan{Nodes: []plan.Node{withTransforms(fetch(0, "list_repos", "Repo"), limit(n))}, Roots: roots(0)}
	}
	for _, tc := range []struct {
		name   string
		plan   *plan.Plan
		budget Budget
		want   string // the rows' ids, or "refused <kind>"
		calls  int    // backend calls made
	}{
		{"limit within the second page", list(4), Budget{Pages: 3, Rows: 5}, "1 2 3 4", 2},
		{"limit of the whole budget", list(5), Budget{Pages: 3, Rows: 5}, "1 2 3 4 5", 2},
		{"limit past the row budget", list(6), Budget{Pages: 3, Rows: 5}, "refused rows", 2},
		{"limit past the page budget", list(7), Budget{Pages: 2, Rows: 50}, "refused pages", 2},
		{"hop limit on the first parent's first page", kids(2), Budget{Pages: 2, Rows: 50}, "ann1 ann2", 2},
		{"hop limit across parents", kids(4), Budget{Pages: 4, Rows: 50}, "ann1 ann2 ann3 bob1", 4},
		{"hop limit past the budget", kids(7), Budget{Pages: 4, Rows: 50}, "refused pages", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{
				"list_repos":     pagedIDs(7, 3),
				"list_users":     static([]string{"login"}, []any{"ann"}, []any{"bob"}, []any{"cat"}),
				"repos_by_owner": pagedIDs(3, 2),
			}}
			ev := env(e)
			ev.Budget = tc.budget
			res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), tc.plan, ev)
			calls := len(e.calls("list_repos")) + len(e.calls("list_users")) + len(e.calls("repos_by_owner"))
			if calls != tc.calls {
				t.Errorf("%d calls, want %d", calls, tc.calls)
			}
			if kind, ok := strings.CutPrefix(tc.want, "refused "); ok {
				var be *BudgetError
				if !errors.As(err, &be) || be.Kind != kind {
					t.Fatalf("err = %v, want a %s budget refusal", err, kind)
				}
				if msg := err.Error(); strings.Contains(msg, "without .sort") || !strings.Contains(msg, "a smaller n in its .limit(n)") {
					t.Errorf("hint: %s", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, row := range res.Roots[0].Table.Rows {
				got = append(got, fmt.Sprint(row[0]))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("rows %v, want %s", got, tc.want)
			}
		})
	}
}
