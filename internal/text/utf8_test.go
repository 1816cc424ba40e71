package text

import (
	"encoding/json"
	"strings"
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

func TestLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		off  int
		lone bool
	}{
		{`"iss-\ud8001"`, 5, true},
		{`"\udc00"`, 1, true},
		{`"\ud83d\ude00"`, 0, false}, // a pair: 😀
		{`"\uD83D\uDE00"`, 0, false},
		{`"\ud83d\u0041"`, 1, true}, // high half, then not a low half
		{`"\\ud800"`, 0, false},     // an escaped backslash, then text
		{`"\\\ud800"`, 3, true},
		{`"\u00e9 \n \""`, 0, false},
		{`"\ud83d`, 1, true},
	} {
		off, lone := LoneSurrogate(tc.s)
		if lone != tc.lone || (lone && off != tc.off) {
			t.Errorf("LoneSurrogate(%s) = %d, %v; want %d, %v", tc.s, off, lone, tc.off, tc.lone)
		}
	}
}

// FuzzLoneSurrogate: a JSON string decodes with a U+FFFD it did not
// spell exactly when LoneSurrogate finds a lone half in it.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{`iss-\ud8001`, `\ud83d\ude00`, `\\ud800`, `\udc00\ud800`, `a\u00e9`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if !utf8.ValidString(s) || json.Unmarshal([]byte(`"`+s+`"`), &got) != nil {
			return // invalid bytes are InvalidUTF8's; not a string literal
		}
		spelled := strings.Contains(s, "\uFFFD") || strings.Contains(strings.ToLower(s), `\ufffd`)
		replaced := strings.Contains(got, "\uFFFD") && !spelled
		if _, lone := LoneSurrogate(`"` + s + `"`); lone != replaced && !spelled {
			t.Fatalf("LoneSurrogate(%q) = %v, but the decoder replaced a lone half: %v", s, lone, replaced)
		}
	})
}
