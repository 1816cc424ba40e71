package extract

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestLinkSaysLast: only rel values say a page is the last; before, the
// text "last", "prev" or "first" anywhere in a Link header without
// rel="next" (a URL's ?sort=last_modified, a first-steps doc link) ended a
// counter-paged list after its first page.
func TestLinkSaysLast(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{``, false},
		{`<https://x/items?page=1>; rel="first", <https://x/items?page=2>; rel="prev"`, true},
		{`<https://x/items?page=3>; rel=last`, true},
		{`<https://x/items?page=2>; REL="Previous"`, true},
		{`<https://x/a>; rel="self", <https://x/b>; rel="last"`, true},
		{`<https://x/a>; rel="first next"`, false},
		{`<https://x/a>; rel="last", <https://x/b>; rel="next"`, false},
		{`<https://x/items?sort=last_modified>; rel="self"`, false},
		{`<https://x/docs/first-steps>; rel="help"`, false},
		{`<https://x/deprecation>; rel="deprecation"; title="prev API, last release"`, false},
		{`<https://x/a>; title="rel=last"`, false},
		{`<https://x/a>; anchor="#prev"; rel="alternate"`, false},
		{`<https://x/a>; rel="alternate"; rel="last"`, false}, // only the first rel counts (RFC 8288 §3.3)
		{`<https://x/a>; rel = "LAST"`, true},
		{`junk; rel=last`, false},
		{`<https://x/a>; rel="la\st"`, true},
	}
	for _, c := range cases {
		if got := linkSaysLast(c.in); got != c.want {
			t.Errorf("linkSaysLast(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseLinks(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, `[]`},
		{`<a>; rel="next"`, `[a:[next]]`},
		{`<a,b;c>; rel="prev next", <d>; title="x, y"; rel=Last`, `[a,b;c:[prev next] d:[last]]`},
		{`<a>, <b>; rel="self"`, `[a:[] b:[self]]`},
		{`<a>; rel="x\"y"`, `[a:[x"y]]`},
		{`<a`, `[]`},
	}
	for _, c := range cases {
		var parts []string
		for _, l := range parseLinks(c.in) {
			parts = append(parts, fmt.Sprintf("%s:%v", l.target, l.rels))
		}
		if got := "[" + strings.Join(parts, " ") + "]"; got != c.want {
			t.Errorf("parseLinks(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// FuzzParseLinks: any header parses without panicking, and the three
// readers agree: nextLink is the first link whose rels hold next, and
// linkSaysLast never holds when there is one. A header built from
// well-formed links parses back to them.
func FuzzParseLinks(f *testing.F) {
	f.Add(`<a>; rel="next"`, "p", "last next", true)
	f.Add(`<x?sort=last_modified>; rel=self, <b>; rel="prev"`, "q,r;s", "first", false)
	f.Add(`<a>; rel="unterminated, <b>; rel=next`, "t", "PREV", true)
	f.Fuzz(func(t *testing.T, raw, target, rels string, quote bool) {
		links := parseLinks(raw)
		next := nextLink(raw)
		want := ""
		for _, l := range links {
			if slices.Contains(l.rels, "next") {
				want = l.target
				break
			}
		}
		if next != want {
			t.Fatalf("nextLink(%q) = %q, parseLinks says %q", raw, next, want)
		}
		if next != "" && linkSaysLast(raw) {
			t.Fatalf("linkSaysLast(%q) with a next link %q", raw, next)
		}

		// Round trip: a target without '>' and rel tokens without quotes,
		// backslashes, commas or semicolons.
		if strings.ContainsAny(target, "<>") || strings.TrimSpace(target) != target {
			return
		}
		toks := strings.Fields(rels)
		for _, tok := range toks {
			if strings.ContainsAny(tok, "\"\\,;=<>") {
				return
			}
		}
		if len(toks) == 0 || (!quote && len(toks) > 1) {
			return
		}
		val := strings.Join(toks, " ")
		if quote {
			val = `"` + val + `"`
		}
		h := fmt.Sprintf(`<%s>; rel=%s, <other>; rel="unrelated"`, target, val)
		got := parseLinks(h)
		if len(got) != 2 || got[0].target != target || strings.Join(got[0].rels, " ") != strings.ToLower(strings.Join(toks, " ")) {
			t.Fatalf("parseLinks(%q) = %+v", h, got)
		}
	})
}
