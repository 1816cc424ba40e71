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

// offsetPages answers list_repos with 5 rows in pages of size rows, the
// next page at offset+step: step 1 is a catalog that steps an item offset
// by one (Plasm's pokeapi and jira catalogs), so pages overlap.
func offsetPages(total, size, step int) backendFunc {
	return func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
		off := 0
		if v, ok := call.Page["offset"].(float64); ok {
			off = int(v)
		}
		t := abi.Table{Columns: []string{"id", "name"}}
		for i := off; i < min(off+size, total); i++ {
			t.Rows = append(t.Rows, []any{float64(i + 1), "r"})
		}
		var next map[string]any
		if off+size < total {
			next = map[string]any{"offset": float64(off + step)}
		}
		return &abi.DecodeResponse{Table: t, Next: next}, nil
	}
}

// TestPagesOverlap: a list whose next page repeats rows of the page before
// is refused, never answered with those rows twice.
func TestPagesOverlap(t *testing.T) {
	sorted := []plan.Transform{{Kind: plan.TSort, Field: "id", Desc: true}}
	for _, tc := range []struct {
		name    string
		backend backendFunc
		want    int // rows in the answer; -1: refused as overlapping
	}{
		{"offset stepping by the page size", offsetPages(5, 2, 2), 5},
		{"offset stepping by one", offsetPages(5, 2, 1), -1},
		{"page parameter ignored", offsetPages(5, 2, 0), -1},
		{"rows with no values on every page", func(call *abi.CompileRequest, _ string) (*abi.DecodeResponse, error) {
			r := &abi.DecodeResponse{Table: abi.Table{Columns: []string{"id"}, Rows: [][]any{{nil}, {nil}}}}
			if call.Page["offset"] == nil {
				r.Next = map[string]any{"offset": 2.0}
			}
			return r, nil
		}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"list_repos": tc.backend}}
			res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{withTransforms(fetch(0, "list_repos", "Repo"), sorted)}, Roots: roots(0)}, env(e))
			if tc.want < 0 {
				var oe *OverlapError
				if !errors.As(err, &oe) || !errors.Is(err, ErrPagesOverlap) || oe.Page != 2 || !strings.Contains(err.Error(), "step by the page size") {
					t.Fatalf("err = %v, want a pages-overlap error on page 2", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Roots[0].Table.Rows); got != tc.want {
				t.Fatalf("%d rows, want %d: %v", got, tc.want, res.Roots[0].Table.Rows)
			}
		})
	}
	if got := rowKeys([][]any{{nil, ""}}); len(got) != 0 {
		t.Fatal("a row with no values has a key")
	}
}

// TestPagesOverlapAcrossHandle: page(handle) compares its page with the
// page the handle was cut after, so a bare list read page by page is
// refused too rather than answered with the rows of the page before; a
// handle that continues inside a page is not compared with itself.
func TestPagesOverlapAcrossHandle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		step  int
		limit int    // page(handle, limit=n); 0 for one page
		want  string // the ids read, handle after handle, and whether the next was refused
	}{
		{"pages, step by size", 2, 0, "[1 2 3 4 5 6 7]"},
		{"limit inside pages, step by size", 2, 1, "[1 2 3 4 5 6 7]"},
		{"limit across pages, step by size", 2, 3, "[1 2 3 4 5 6 7]"},
		{"pages, step by one", 1, 0, "overlap after [1 2]"},
		{"limit inside a page, step by one", 1, 1, "overlap after [1 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeEngine{caps: map[string]backendFunc{"list_repos": offsetPages(7, 2, tc.step)}}
			res, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{fetch(0, "list_repos", "Repo")}, Roots: roots(0)}, env(e))
			if err != nil {
				t.Fatal(err)
			}
			var ids []any
			for i := 0; i < 10 && err == nil; i++ {
				ids = append(ids, column(res.Roots[0].Table, "id")...)
				c := res.Roots[0].Next
				if c == nil {
					break
				}
				ev := env(e)
				ev.ResolvePage = func(string) (*Continuation, error) { return c, nil }
				pg := &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpPage, Input: -1, Page: &plan.PageRef{Handle: "s0_pg1", Limit: tc.limit}}}, Roots: roots(0)}
				res, err = New(&fakeSender{}, Limits{}).Run(context.Background(), pg, ev)
			}
			got := fmt.Sprint(ids)
			if err != nil {
				if !errors.Is(err, ErrPagesOverlap) {
					t.Fatal(err)
				}
				got = "overlap after " + got
			}
			if got != tc.want {
				t.Fatalf("read %s, want %s", got, tc.want)
			}
		})
	}
}
