package executor

import (
	"strings"
	"testing"
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
