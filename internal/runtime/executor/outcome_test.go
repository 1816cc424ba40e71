package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

func TestNotFoundQuotesIDClipped(t *testing.T) {
	for _, tc := range []struct {
		id   any
		want string
	}{
		{"iss-1", `Issue "iss-1" not found (issue_get)`},
		{int64(7), `Issue 7 not found (issue_get)`},
		{strings.Repeat("é", 150), `Issue "` + strings.Repeat("é", 100) + `…" not found (issue_get)`},
	} {
		e := &NotFoundError{Entity: "Issue", ID: tc.id, Capability: "issue_get"}
		if got := e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	long := &NotFoundError{Entity: "Issue", ID: strings.Repeat("x", 60000), Capability: "issue_get"}
	if n := len(long.Error()); n > 300 {
		t.Errorf("a 60 KB id gives a %d-byte message", n)
	}
}

// A get by a compound key has no single id: its not-found names every key
// part in key_vars order (it once said "Issue <nil> not found").
func TestNotFoundCompoundKey(t *testing.T) {
	fe := &fakeEngine{caps: map[string]backendFunc{"issue_get": static([]string{"id", "number"})}}
	n := fetch(0, "issue_get", "Issue")
	n.Kind, n.Many = catalog.KindGet, false
	n.Args = map[string]any{"owner": "o", "repo": "r", "number": int64(500)}
	for _, tc := range []struct {
		name     string
		identity func(entryID, entity string) [][]string
		want     string
	}{
		{"key_vars order", func(_, entity string) [][]string { return [][]string{{"owner", "repo", "number"}, {"id"}} },
			`Issue (owner="o", repo="r", number=500) not found (issue_get)`},
		{"no catalog order: by name", nil, `Issue (number=500, owner="o", repo="r") not found (issue_get)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env(fe)
			e.Identity = tc.identity
			_, err := New(&fakeSender{}, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, e)
			var nf *NotFoundError
			if !errors.As(err, &nf) || nf.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
