package lang

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLiteralsAsWritten: whole numbers are exact and as written; words of an
// unquoted phrase keep their text even where the same word could not be a
// number (leading zero, beyond int64).
func TestLiteralsAsWritten(t *testing.T) {
	tests := []struct{ program, want string }{
		{`Issue~release 007`, `"release 007"`},
		// A one-word bare search ends before a postfix call, as a longer
		// phrase does; it was read as a label's field.
		{`Issue~login.limit(2)[id]`, `"login"`},
		{`Issue~login.sort(votes, desc).limit(2)[id]`, `"login"`},
		{`Issue~login.filter{votes>1}[id]`, `"login"`},
		{"top = Issue(\"i1\")\nComment{issue_id=top.id}[id]", `"issue_id"`},
		{`Issue{title=build 12345678901234567890}.limit(1)[id]`, `"build 12345678901234567890"`},
		{`Issue(9223372036854775807)`, `9223372036854775807`},
		{`Issue{votes=0}.limit(1)[id]`, `"votes"`},
		{`Issue{score=-0.5}.limit(1)[id]`, `-0.5`},
		{`Issue{score=10.05}.limit(1)[id]`, `10.05`},
	}
	for _, tc := range tests {
		p, err := run(tc.program, onlyTracker, testSymbols())
		if err != nil {
			t.Errorf("Plan(%q): %s %d:%d %s", tc.program, err.Code, err.Line, err.Column, err.Message)
			continue
		}
		b, _ := json.Marshal(p)
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("Plan(%q) lacks %s: %s", tc.program, tc.want, b)
		}
	}
}
