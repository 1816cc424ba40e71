package text

import (
	"testing"
	"unicode/utf8"
)

func TestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		in             string
		off, line, col int
		invalid        bool
	}{
		{"Issue(\"iss-1\")", 0, 0, 0, false},
		{"Issue(\"é\")", 0, 0, 0, false},
		{"Issue(\"iss-\xff1\")", 11, 1, 12, true},
		{"a\nIssue(owner=\"é\xff\")", 17, 2, 15, true},
		{"\xc3", 0, 1, 1, true},         // truncated sequence
		{"\xed\xa0\x80", 0, 1, 1, true}, // surrogate half
	} {
		off, line, col, bad := InvalidUTF8(tc.in)
		if bad != tc.invalid || off != tc.off || line != tc.line || col != tc.col {
			t.Errorf("InvalidUTF8(%q) = %d %d:%d %v, want %d %d:%d %v", tc.in, off, line, col, bad, tc.off, tc.line, tc.col, tc.invalid)
		}
	}
}

func FuzzInvalidUTF8(f *testing.F) {
	f.Add("Issue(\"iss-\xff1\")")
	f.Add("a\nb\xc3")
	f.Fuzz(func(t *testing.T, s string) {
		off, line, col, bad := InvalidUTF8(s)
		if bad == utf8.ValidString(s) {
			t.Fatalf("InvalidUTF8(%q) invalid=%v, ValidString=%v", s, bad, utf8.ValidString(s))
		}
		if !bad {
			return
		}
		if !utf8.ValidString(s[:off]) || line < 1 || col < 1 {
			t.Fatalf("InvalidUTF8(%q) = %d %d:%d: the prefix is not valid or the position is not 1-based", s, off, line, col)
		}
		if r, n := utf8.DecodeRuneInString(s[off:]); r != utf8.RuneError || n != 1 {
			t.Fatalf("InvalidUTF8(%q) = %d, which starts a valid character", s, off)
		}
		_ = InvalidUTF8Message(s, off)
	})
}
