package extract

import (
	"strings"
	"testing"
)

func TestSnippet(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"  hello \n\t world  ", "hello world"},
		{strings.Repeat("é", 150), strings.Repeat("é", 100) + "…"},
		{strings.Repeat("a", 199) + "é", strings.Repeat("a", 199) + "…"},
		{"a\x1b[31mred", "a?[31mred"},
	}
	for _, c := range cases {
		if got := Snippet([]byte(c.in)); got != c.want {
			t.Errorf("Snippet(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNextLink(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, ``},
		{`<a>; rel="next"`, `a`},
		{`<a>; rel=prev, <b>; REL="Next"`, `b`},
		{`<a>; title="rel=next"`, ``},
		{`<a>; rel="last next"`, `a`},
		{`junk; rel=next, <c>; rel=next`, `c`},
		{`<a`, ``},
		{`<a>; rel="unterminated, <b>; rel=next`, ``},
	}
	for _, c := range cases {
		if got := nextLink(c.in); got != c.want {
			t.Errorf("nextLink(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
