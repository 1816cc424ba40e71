package refbackend_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/refbackend"
)

// TestIssueTable pins the list rows of the table that reported silently
// wrong answers over multi-page lists (issue 8), on every backend case.
// Names follow the blog data: Author/Post/Comment.
func TestIssueTable(t *testing.T) {
	e := newEnv(t)
	views := func(desc bool) refbackend.Step { return refbackend.Step{Kind: "sort", Field: "views", Desc: desc} }
	limit := func(n int) refbackend.Step { return refbackend.Step{Kind: "limit", N: n} }
	whole := []struct {
		name string
		p    refbackend.Program
	}{
		// Sorted page 1 only before: the top of all posts, not of a page.
		{"sort then limit reads every page", refbackend.Program{Entity: "Post", Post: []refbackend.Step{views(true), limit(3)}}},
		// Parents from page 1 only before: every parent, every page.
		{"hop from a multi-page parent list", refbackend.Program{Entity: "Post", Hop: "comments"}},
		{"hop from filtered parents", refbackend.Program{Entity: "Author", Preds: []refbackend.Pred{{Field: "country", Op: "=", Value: "fr"}}, Hop: "posts"}},
		// 20 rows and a handle before: the limit fills from later pages.
		{"limit above a page fills", refbackend.Program{Entity: "Post", Preds: []refbackend.Pred{{Field: "status", Op: "=", Value: "published"}}, Post: []refbackend.Step{limit(25)}}},
		{"host filter reads every page", refbackend.Program{Entity: "Comment", Preds: []refbackend.Pred{{Field: "likes", Op: ">=", Value: 45.0}}}},
	}
	for _, c := range cases {
		if c.entry == "blog_tiny" {
			continue // the one-row backend refuses long lists by budget (TestBudgetRefusal)
		}
		for _, tc := range whole {
			t.Run(c.entry+"/"+tc.name, func(t *testing.T) {
				a := e.run(t, c.entry, tc.p.String())
				if a.status != http.StatusOK {
					t.Fatalf("%s: %d %v", tc.p, a.status, a.problem)
				}
				if got, want := normal(a.rows), normal(e.data.Answer(tc.p)); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s:\n got  %v\n want %v", tc.p, short(got), short(want))
				}
				if a.handle != "" {
					t.Fatalf("%s: whole-list answer offered %s", tc.p, a.handle)
				}
			})
		}
		// Asked for _page=11 after a 10-row page before: a page counter
		// steps by 1, and the handles reach every post.
		t.Run(c.entry+"/bare list pages through every row", func(t *testing.T) {
			p := refbackend.Program{Entity: "Post"}
			a := e.run(t, c.entry, p.String())
			if a.status != http.StatusOK || a.handle == "" || len(a.rows) != c.pageSize {
				t.Fatalf("first page: %d rows, handle %q, status %d %v", len(a.rows), a.handle, a.status, a.problem)
			}
			var all []map[string]any
			all = append(all, a.rows...)
			for a.handle != "" {
				// The sparse backend says a list ended only by an empty page.
				if a = e.run(t, c.entry, "page("+a.handle+")"); a.status != http.StatusOK || (len(a.rows) == 0 && (a.handle != "" || !endsOnEmptyPage(c.entry))) {
					t.Fatalf("page: %d rows, status %d %v", len(a.rows), a.status, a.problem)
				}
				all = append(all, a.rows...)
			}
			if got, want := normal(all), normal(e.data.Answer(p)); !reflect.DeepEqual(got, want) {
				t.Fatalf("paged rows differ:\n got  %v\n want %v", short(got), short(want))
			}
		})
		// A handle was offered for a 6-row answer before: none when the
		// backend said there is no more.
		t.Run(c.entry+"/no handle after the last page", func(t *testing.T) {
			for id := 1; id <= refbackend.NumAuthors; id++ {
				p := refbackend.Program{Entity: "Post", Preds: []refbackend.Pred{{Field: "authorId", Op: "=", Value: float64(id)}}}
				n := len(e.data.Answer(p))
				if n >= c.pageSize {
					continue
				}
				a := e.run(t, c.entry, p.String())
				if a.handle != "" && endsOnEmptyPage(c.entry) {
					// No sign of the end but the empty page after it:
					// the handle leads there, and no further.
					if b := e.run(t, c.entry, "page("+a.handle+")"); b.status != http.StatusOK || len(b.rows) != 0 || b.handle != "" {
						t.Fatalf("%s: page(%s): %d rows, handle %q, status %d", p, a.handle, len(b.rows), b.handle, b.status)
					}
					a.handle = ""
				}
				if a.status != http.StatusOK || len(a.rows) != n || a.handle != "" {
					t.Fatalf("%s (%d rows, page size %d): %d rows, handle %q, status %d", p, n, c.pageSize, len(a.rows), a.handle, a.status)
				}
			}
		})
	}
}

// TestSearchNeedsWords: Post~"" listed every post before; it is refused
// before any call, and a search with words finds only matching posts.
func TestSearchNeedsWords(t *testing.T) {
	e := newEnv(t)
	calls := e.backends["blog_offset"].Requests()
	a := e.run(t, "blog_offset", `Post~""`)
	detail, _ := a.problem["detail"].(string)
	if a.status != http.StatusBadRequest || !strings.Contains(detail, "a search needs words") || e.backends["blog_offset"].Requests() != calls {
		t.Fatalf(`Post~"": %d %v`, a.status, a.problem)
	}
	a = e.run(t, "blog_offset", `Post~"alpha"[id,title]`)
	if a.status != http.StatusOK || len(a.rows) == 0 {
		t.Fatalf(`Post~"alpha": %d %v`, a.status, a.problem)
	}
	for _, r := range a.rows {
		if !strings.Contains(r["title"].(string), "alpha") {
			t.Fatalf("search row without the word: %v", r)
		}
	}
}

// TestBudgetRefusal: a program whose lists need more pages than the run's
// budget is refused with a run-budget problem naming the budget, what was
// read and how to narrow, never answered from a prefix.
func TestBudgetRefusal(t *testing.T) {
	e := newEnv(t)
	p := refbackend.Program{Entity: "Comment", Post: []refbackend.Step{{Kind: "sort", Field: "likes", Desc: true}, {Kind: "limit", N: 3}}}
	a := e.run(t, "blog_tiny", p.String()) // 300 comments, one per page
	if a.status != http.StatusUnprocessableEntity || a.problemType() != "run-budget" {
		t.Fatalf("%s: status %d %v, want a 422 run-budget problem", p, a.status, a.problem)
	}
	detail, _ := a.problem["detail"].(string)
	for _, want := range []string{"250 pages", "read 250 pages", "Comment{field=value}", ".limit(n)"} {
		if !contains(detail, want) {
			t.Errorf("detail lacks %q: %s", want, detail)
		}
	}
	// The same list read page by page is fine: each run reads one page.
	if a := e.run(t, "blog_tiny", "Comment"); a.status != http.StatusOK || a.handle == "" || len(a.rows) != 1 {
		t.Fatalf("bare list on the tiny backend: %d %d rows handle %q", a.status, len(a.rows), a.handle)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
