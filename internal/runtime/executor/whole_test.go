package executor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// twoRepoPages answers list_repos in two pages: repoRows, then two more
// rows (5 and 6) and the end of the list.
func twoRepoPages(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
	if call.Page["page"] == 2.0 {
		return &abi.DecodeResponse{Table: abi.Table{Columns: repoCols, Rows: [][]any{{5.0, "eps", 3.0, "go"}, {6.0, "zeta", 9.0, "c"}}}}, nil
	}
	return &abi.DecodeResponse{Table: abi.Table{Columns: repoCols, Rows: repoRows()}, Next: map[string]any{"page": 2.0}}, nil
}

// pagedNodes: only a list whose rows reach the client unchanged (or only
// projected) may answer by pages.
func TestPagedNodes(t *testing.T) {
	proj := []plan.Transform{{Kind: plan.TProject, Fields: []string{"id"}}}
	for _, tc := range []struct {
		name  string
		nodes []plan.Node
		want  []bool
	}{
		{"bare list", []plan.Node{fetch(0, "list_repos", "Repo")}, []bool{true}},
		{"projected list", []plan.Node{withTransforms(fetch(0, "list_repos", "Repo"), proj)}, []bool{true}},
		{"sorted list", []plan.Node{withTransforms(fetch(0, "list_repos", "Repo"), []plan.Transform{{Kind: plan.TSort, Field: "id"}})}, []bool{false}},
		{"filtered list", []plan.Node{func() plan.Node {
			n := fetch(0, "list_repos", "Repo")
			n.Filters = []plan.Pred{{Field: "id", Op: ">", Value: 1.0}}
			return n
		}()}, []bool{false}},
		{"projection of a list", []plan.Node{fetch(0, "list_repos", "Repo"), {ID: 1, Op: plan.OpTransform, Input: 0, Transforms: proj}}, []bool{true, true}},
		{"limit of a bound list", []plan.Node{fetch(0, "list_repos", "Repo"), {ID: 1, Op: plan.OpTransform, Input: 0, Transforms: []plan.Transform{{Kind: plan.TLimit, N: 1}}}}, []bool{false, false}},
		{"hop parents", []plan.Node{fetch(0, "list_repos", "Repo"), {ID: 1, Op: plan.OpHop, Input: 0}}, []bool{false, true}},
		{"argument source", []plan.Node{fetch(0, "list_repos", "Repo"), {ID: 1, Op: plan.OpFetch, Input: -1, ArgRefs: []plan.ArgRef{{Var: "x", Node: 0, Field: "id"}}}}, []bool{false, true}},
		{"limit two levels down", []plan.Node{fetch(0, "list_repos", "Repo"), {ID: 1, Op: plan.OpTransform, Input: 0, Transforms: proj}, {ID: 2, Op: plan.OpTransform, Input: 1, Transforms: []plan.Transform{{Kind: plan.TSort, Field: "id"}}}}, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pagedNodes(&plan.Plan{Nodes: tc.nodes}); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("paged %v, want %v", got, tc.want)
			}
		})
	}
}

func withTransforms(n plan.Node, trs []plan.Transform) plan.Node {
	n.Transforms = trs
	return n
}

// The row budget counts rows read, not rows returned: a filter that keeps
// few rows still pays for every row it looked at.
func TestRowBudget(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{"list_repos": twoRepoPages}}
	f := fetch(0, "list_repos", "Repo")
	f.Filters = []plan.Pred{{Field: "id", Op: "=", Value: 6.0}}
	ev := env(e)
	ev.Budget = Budget{Rows: 5}
	_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f}, Roots: roots(0)}, ev)
	var be *BudgetError
	if !errors.As(err, &be) || be.Kind != "rows" || be.Rows != 6 || be.Pages != 2 || !strings.Contains(err.Error(), "budget of 5 rows") {
		t.Fatalf("err = %v, want a rows budget error after 2 pages and 6 rows", err)
	}
	ev.Budget = Budget{Rows: 6}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{f}, Roots: roots(0)}, ev)
	if err != nil || len(res.Roots[0].Table.Rows) != 1 {
		t.Fatalf("within budget: %v %v", res, err)
	}
}

// A cardinality-one hop reads each distinct target once.
func TestHopReadsEachTargetOnce(t *testing.T) {
	hop := plan.Hop{Relation: "owner", Materialize: "query_scoped_bindings", Target: "User", Capability: "user_by_id", Binds: []plan.Bind{{Var: "id", Field: "id"}}, DistinctBy: "uid"}
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_users": static([]string{"login", "id"}, []any{"ann", 1.0}, []any{"ann2", 1.0}, []any{"cat", 3.0}, []any{"x", "1"}),
		"user_by_id": func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"uid"}, Rows: [][]any{{fmt.Sprint(call.Vars["id"])}}}}, nil
		},
	}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), usersThenHop(hop, []string{"uid"}), env(e))
	if err != nil {
		t.Fatal(err)
	}
	// 1.0 twice is one call; "1" is another id type, so its own call.
	if n := len(e.calls("user_by_id")); n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
	if got := column(res.Roots[0].Table, "uid"); !reflect.DeepEqual(got, []any{"1", "3"}) {
		t.Fatalf("targets %v", got)
	}
}

func TestReads(t *testing.T) {
	f := fetch(0, "list_repos", "Repo")
	f.Many = true
	lim := f
	lim.Transforms = []plan.Transform{{Kind: plan.TLimit, N: 5}}
	srt := f
	srt.Transforms = []plan.Transform{{Kind: plan.TSort, Field: "id"}}
	for _, tc := range []struct {
		n    plan.Node
		want string
	}{
		{f, "n0 Repo: the first page; a page(…) handle continues it"},
		{lim, "n0 Repo: pages until its .limit is filled"},
		{srt, "n0 Repo: every page"},
	} {
		got := Reads(&plan.Plan{Nodes: []plan.Node{tc.n}}, Budget{Pages: 9})
		if len(got) != 2 || !strings.HasPrefix(got[0], tc.want) || !strings.Contains(got[1], "at most 9 pages and 10000 rows") {
			t.Errorf("Reads = %q, want %q and the budget", got, tc.want)
		}
	}
}

type oneSecret map[string]string

func (s oneSecret) Secret(name string) (string, bool) { v, ok := s[name]; return v, ok }

// A backend that echoes the rejected credential does not get it into the
// error a client reads.
func TestBackendErrorRedactsCredential(t *testing.T) {
	creq := &abi.CompiledRequest{Auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "TOKEN"}}
	got := redactSecret(`401 Unauthorized: {"error":"token s3cr3t-v@lue is revoked","url":"/x?k=s3cr3t-v%40lue"}`, creq, oneSecret{"TOKEN": "s3cr3t-v@lue"}, "")
	if strings.Contains(got, "s3cr3t") {
		t.Fatalf("credential left in %q", got)
	}
	// The guest cuts a backend's text at 200 bytes: a token straddling
	// the cut leaves only its start before the "…".
	cut := `error: "` + strings.Repeat("x", 180) + ` s3cr3t-v@l…, message: "s3cr3t-v%40l…`
	if got := redactSecret(cut, creq, oneSecret{"TOKEN": "s3cr3t-v@lue"}, ""); strings.Contains(got, "s3cr") || strings.Count(got, "[redacted]…") != 2 {
		t.Fatalf("cut credential left in %q", got)
	}
	// Short runs before a cut that merely resemble the secret's start
	// (under 4 bytes) stay.
	if got := redactSecret("said s3c…", creq, oneSecret{"TOKEN": "s3cr3t-v@lue"}, ""); got != "said s3c…" {
		t.Fatalf("a 3-byte run was redacted: %q", got)
	}
	if redactSecret("no auth", nil, nil, "") != "no auth" {
		t.Fatal("message without auth changed")
	}
}

// A delete answers with one explicit "deleted" row per id, whatever (often
// nothing) the backend returned; for-each deletes first read the whole
// receiver list.
func TestDeleteAnswersDeleted(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{
		"list_repos": twoRepoPages,
		"del_repo":   static([]string{"id", "name"}),
	}}
	one := plan.Node{ID: 0, Op: plan.OpMutate, Kind: "delete", Effect: plan.EffectWrite, EntryID: entry, Entity: "Repo", Capability: "del_repo", Input: -1, Args: map[string]any{"id": 3.0}}
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{one}, Roots: roots(0)}, env(e))
	if err != nil {
		t.Fatal(err)
	}
	if want := (abi.Table{Columns: []string{"id", "deleted"}, Rows: [][]any{{3.0, true}}}); !reflect.DeepEqual(res.Roots[0].Table, want) {
		t.Fatalf("delete answered %v, want %v", res.Roots[0].Table, want)
	}
	each := plan.Node{ID: 1, Op: plan.OpMutate, Kind: "delete", Effect: plan.EffectWrite, EntryID: entry, Entity: "Repo", Capability: "del_repo", Input: 0, ForEach: &plan.Bind{Var: "id", Field: "id"}}
	res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{fetch(0, "list_repos", "Repo"), each}, Roots: roots(1)}, env(e))
	if err != nil {
		t.Fatal(err)
	}
	if got := column(res.Roots[0].Table, "id"); !reflect.DeepEqual(got, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}) {
		t.Fatalf("for-each delete over both pages answered ids %v", got)
	}
	if n := len(e.calls("del_repo")); n != 7 {
		t.Fatalf("%d delete calls, want 1 + 6", n)
	}
}

// A step reports the pages it read: a sorted list reads both pages of
// list_repos, and says so (the console shows it per step).
func TestStepCountsPages(t *testing.T) {
	e := &fakeEngine{caps: map[string]backendFunc{"list_repos": twoRepoPages}}
	n := withTransforms(fetch(0, "list_repos", "Repo"), []plan.Transform{{Kind: plan.TSort, Field: "id"}})
	res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, env(e))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || res.Steps[0].Calls != 2 || res.Steps[0].Pages != 2 || res.Steps[0].Rows != 6 {
		t.Fatalf("steps %+v, want one step of 2 calls, 2 pages, 6 rows", res.Steps)
	}
}
