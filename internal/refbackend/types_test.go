package refbackend_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestTypesAtPlanTime: arguments, predicates and ids are checked against
// the catalog's value domains before any call, and the error names the
// slot, the expected type and the value given, at line:col.
func TestTypesAtPlanTime(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		program   string
		line, col float64
		detail    []string
	}{
		{`Post.create(title=42, authorId=2)`, 1, 19, []string{"title expects text, got 42"}},
		{`Post.create(title="x", authorId="abc")`, 1, 33, []string{`authorId expects a whole number, got "abc"`, "reference to Author", "integer"}},
		{`Post("abc")`, 1, 6, []string{`Post id expects a whole number, got "abc"`}},
		{`Post{authorId="two"}`, 1, 15, []string{`authorId expects a whole number`}},
		{`Post{title=7}`, 1, 12, []string{"title expects text, got 7"}},
		{`Post{status="gone"}`, 1, 13, []string{"status expects one of its allowed values"}},
		{"a = Author\nComment{postId=1.5}, a", 2, 16, []string{"postId expects a whole number, got 1.5"}},
	} {
		calls := e.backends["blog_offset"].Requests()
		a := e.run(t, "blog_offset", tc.program)
		detail, _ := a.problem["detail"].(string)
		if a.status != http.StatusBadRequest || a.problemType() != "program-type" || a.problem["line"] != tc.line || a.problem["column"] != tc.col {
			t.Errorf("%s: %d %v, want a 400 program-type at %v:%v", tc.program, a.status, a.problem, tc.line, tc.col)
			continue
		}
		for _, d := range tc.detail {
			if !strings.Contains(detail, d) {
				t.Errorf("%s: detail %q lacks %q", tc.program, detail, d)
			}
		}
		if n := e.backends["blog_offset"].Requests(); n != calls {
			t.Errorf("%s: %d backend calls before the refusal", tc.program, n-calls)
		}
	}
	// The right types go through.
	if a := e.run(t, "blog_offset", `Post.create(title="hello", authorId=2, status="draft")`); a.status != http.StatusOK || len(a.rows) != 1 || a.rows[0]["title"] != "hello" {
		t.Fatalf("well-typed create: %d %v %v", a.status, a.rows, a.problem)
	}
}
