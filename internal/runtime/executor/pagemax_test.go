package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/extract"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// maxedPages serves two full pages of three rows; the second's next state
// is past the counter's max (as extract marks it).
func maxedPages(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
	t := abi.Table{Columns: []string{"id"}}
	if _, ok := call.Page["page"]; !ok {
		t.Rows = [][]any{{1.0}, {2.0}, {3.0}}
		return &abi.DecodeResponse{Table: t, Next: map[string]any{"page": 2.0}}, nil
	}
	t.Rows = [][]any{{4.0}, {5.0}, {6.0}}
	return &abi.DecodeResponse{Table: t, Next: map[string]any{extract.PastMaxKey: "page 2"}}, nil
}

// TestPageMaxRefused: a list whose next page is past its counter's max is
// refused (ErrPageMax) when the answer needs more of it, never answered
// from the pages read; a .limit the pages read fill is answered.
func TestPageMaxRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		trs  []plan.Transform
		want int // rows; -1: refused
	}{
		{"sort needs every row", []plan.Transform{{Kind: plan.TSort, Field: "id"}}, -1},
		{"limit past the pages read", []plan.Transform{{Kind: plan.TLimit, N: 7}}, -1},
		{"limit the pages read fill", []plan.Transform{{Kind: plan.TLimit, N: 5}}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"list_repos": maxedPages}}
			res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{withTransforms(fetch(0, "list_repos", "Repo"), tc.trs)}, Roots: roots(0)}, env(e))
			if tc.want < 0 {
				var me *MaxPagesError
				if !errors.Is(err, ErrPageMax) || !errors.As(err, &me) || me.Pages != 2 || me.Rows != 6 || !strings.Contains(err.Error(), "max (page 2)") {
					t.Fatalf("err = %v, want page-max after 2 pages and 6 rows", err)
				}
				return
			}
			if err != nil || len(res.Roots[0].Table.Rows) != tc.want {
				t.Fatalf("err = %v, want %d rows", err, tc.want)
			}
		})
	}
}

// TestMaxPagesErrorWording: the refusal says the last page was full only
// when a page size said so; an unsized counter's page at max may only not
// be the last.
func TestMaxPagesErrorWording(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       MaxPagesError
		want, not string
	}{
		{"full", MaxPagesError{Counter: "page 2", Full: true, Pages: 2, Rows: 6}, "the last page read was full", "may not be the last page"},
		{"unsized", MaxPagesError{Counter: "page 2", Pages: 2, Rows: 4}, "the last page read may not be the last page", "was full"},
		{"handle, full", MaxPagesError{Counter: "page 2", Full: true}, "the page before was full", "may not be the last page"},
		{"handle, unsized", MaxPagesError{Counter: "page 2"}, "the page before may not be the last page", "was full"},
	} {
		msg := tc.err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("%s: %q, want %q and not %q", tc.name, msg, tc.want, tc.not)
		}
	}
}
