package refbackend_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/refbackend"
)

// TestOutcomes pins how backend outcomes surface: a stable problem type per
// outcome, the same on REST and GraphQL, each thing said once.
func TestOutcomes(t *testing.T) {
	e := newEnv(t)
	for _, c := range cases {
		t.Run(c.entry+"/missing id", func(t *testing.T) {
			a := e.run(t, c.entry, `Post(999)`)
			detail, _ := a.problem["detail"].(string)
			if a.status != http.StatusNotFound || a.problemType() != "not-found" || !strings.Contains(detail, "Post 999 not found") {
				t.Fatalf("Post(999): %d %v", a.status, a.problem)
			}
			if strings.Count(detail, "404") > 1 || strings.Count(detail, "not found") > 1 {
				t.Fatalf("detail repeats itself: %s", detail)
			}
		})
	}
	t.Run("delete answers deleted", func(t *testing.T) {
		a := e.run(t, "blog_offset", `Post(3).delete()`)
		if a.status != http.StatusOK || !reflect.DeepEqual(normal(a.rows), normal([]map[string]any{{"id": 3, "deleted": true}})) {
			t.Fatalf("delete: %d %v %v", a.status, a.rows, a.problem)
		}
		if a := e.run(t, "blog_offset", `Post(3)`); a.problemType() != "not-found" {
			t.Fatalf("deleted post still read: %d %v", a.status, a.rows)
		}
	})
	for _, tc := range []struct {
		name   string
		fault  refbackend.Fault
		status int
		typ    string
		has    []string
		hasnt  []string
		retry  string
	}{
		{"unauthorized", refbackend.Fault{Status: 401, Body: `{"error":"token expired"}`}, 502, "backend-unauthorized", []string{"refused post_query", "401 Unauthorized", "token expired"}, nil, ""},
		{"forbidden", refbackend.Fault{Status: 403, Body: `{}`}, 502, "backend-unauthorized", []string{"403 Forbidden"}, nil, ""},
		{"rate limited", refbackend.Fault{Status: 429, RetryAfter: "7", Body: `{}`}, 503, "backend-busy", []string{"after retries"}, nil, "7"},
		{"unavailable", refbackend.Fault{Status: 503, Body: `{}`}, 503, "backend-busy", nil, nil, "1"},
		{"validation", refbackend.Fault{Status: 422, Body: `{"error":"status must be one of draft, published"}`}, 422, "backend-rejected", []string{"status must be one of draft, published"}, nil, ""},
		{"huge validation message", refbackend.Fault{Status: 400, Body: `{"error":"` + strings.Repeat("x", 5000) + `"}`}, 422, "backend-rejected", []string{"…"}, []string{strings.Repeat("x", 400)}, ""},
		{"server error", refbackend.Fault{Status: 500, Body: `{"error":"db down"}`}, 502, "backend-error", []string{"db down"}, nil, ""},
		// An error answered with 200 and no list: refused, never an empty list.
		{"error with 200", refbackend.Fault{Status: 200, Body: `{"ok":false,"error":"invalid_cursor"}`}, 502, "backend-response", []string{`the list is expected at items`, "(its keys: error, ok)"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.backends["blog_offset"]
			b.SetFault("posts", tc.fault)
			defer b.SetFault("posts", refbackend.Fault{})
			a := e.run(t, "blog_offset", `Post`)
			detail, _ := a.problem["detail"].(string)
			if a.status != tc.status || a.problemType() != tc.typ {
				t.Fatalf("%d %s, want %d %s: %v", a.status, a.problemType(), tc.status, tc.typ, a.problem)
			}
			for _, s := range tc.has {
				if !strings.Contains(detail, s) {
					t.Errorf("detail lacks %q: %s", s, detail)
				}
			}
			hint, _ := a.problem["hint"].(string)
			for _, s := range tc.hasnt {
				if strings.Contains(detail, s) || strings.Contains(hint, s) {
					t.Errorf("detail or hint carries %q", s)
				}
			}
			if got := a.header.Get("Retry-After"); got != tc.retry {
				t.Errorf("Retry-After %q, want %q", got, tc.retry)
			}
			if strings.Count(detail, "backend error") > 1 || strings.Count(detail, "answered") > 1 {
				t.Errorf("detail repeats itself: %s", detail)
			}
		})
	}
}
