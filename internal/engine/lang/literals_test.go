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

// TestNumberTextAsWritten: a number literal whose spelling is not the
// text it would be sent as (-0 for "0", 1.0 for "1") is never sent as
// that other text where text is expected: a text id named by -0 is
// refused with a hint to quote it, and every refusal quotes the number
// as written. Numeric slots take the number itself.
func TestNumberTextAsWritten(t *testing.T) {
	tests := []struct {
		program string
		ok      string // a fragment of the plan, when it plans
		line    int
		col     int
		msg     string // fragments of the refusal's message and hint
		hint    string
	}{
		{program: `Issue(-0)`, line: 1, col: 7, msg: `Issue id -0 is the number 0`, hint: `Issue("-0")`},
		{program: `Issue(  -0 ).comments`, line: 1, col: 9, msg: `Issue id -0 is the number 0`, hint: `Issue("-0")`},
		{program: "top = Issue(\"i1\")\nIssue(-0)", line: 2, col: 7, msg: `Issue id -0`, hint: `Issue("-0")`},
		{program: `Issue(1.0)`, line: 1, col: 7, msg: `got 1.0`, hint: `"1.0"`},
		{program: `Issue(0.10)`, line: 1, col: 7, msg: `got 0.10`, hint: `"0.10"`},
		{program: `Issue{title=1.0}.limit(1)[id]`, line: 1, col: 13, msg: `title expects text, got 1.0`, hint: `title="1.0"`},
		{program: `Issue{title=-0}.limit(1)[id]`, line: 1, col: 13, msg: `got -0`, hint: `title="-0"`},
		{program: `Comment{issue_id=-0}[id]`, line: 1, col: 18, msg: `got -0`, hint: `issue_id="-0"`},
		{program: `Issue{votes=1.5}.limit(1)[id]`, line: 1, col: 13, msg: `got 1.5`},
		// As written, these are the ids and numbers they name.
		{program: `Issue(0)`, ok: `"args":{"id":"0"}`}, // the text it names (checkID)
		{program: `Issue("-0")`, ok: `"args":{"id":"-0"}`},
		{program: `Issue("1.0")`, ok: `"args":{"id":"1.0"}`},
		{program: `Issue{votes=-0}.limit(1)[id]`, ok: `"value":0`},
		{program: `Issue{score=1.0}.limit(1)[id]`, ok: `"value":1`},
	}
	for _, tc := range tests {
		p, err := run(tc.program, onlyTracker, testSymbols())
		if tc.ok != "" {
			if err != nil {
				t.Errorf("Plan(%q): %d:%d %s", tc.program, err.Line, err.Column, err.Message)
				continue
			}
			if b, _ := json.Marshal(p); !strings.Contains(string(b), tc.ok) {
				t.Errorf("Plan(%q) lacks %s: %s", tc.program, tc.ok, b)
			}
			continue
		}
		if err == nil {
			b, _ := json.Marshal(p)
			t.Errorf("Plan(%q) planned: %.300s", tc.program, b)
			continue
		}
		if err.Line != tc.line || err.Column != tc.col || !strings.Contains(err.Message, tc.msg) || !strings.Contains(err.Hint, tc.hint) {
			t.Errorf("Plan(%q): %d:%d %q (hint %q), want %d:%d with %q and hint %q", tc.program, err.Line, err.Column, err.Message, err.Hint, tc.line, tc.col, tc.msg, tc.hint)
		}
	}
}

// TestOffsetOf: a position's byte offset counts columns in runes and stops
// at the end of its line.
func TestOffsetOf(t *testing.T) {
	src := "aé\nxyz\n"
	for _, tc := range []struct {
		at   pos
		want int
		ok   bool
	}{
		{pos{1, 1}, 0, true},
		{pos{1, 3}, 3, true},
		{pos{2, 2}, 5, true},
		{pos{2, 9}, 0, false},
		{pos{5, 1}, 0, false},
	} {
		got, ok := offsetOf(src, tc.at)
		if got != tc.want || ok != tc.ok {
			t.Errorf("offsetOf(%v) = %d, %v, want %d, %v", tc.at, got, ok, tc.want, tc.ok)
		}
	}
}
