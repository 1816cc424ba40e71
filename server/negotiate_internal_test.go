package server

import (
	"slices"
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	tests := []struct{ accept, want string }{
		{"", "text/markdown"},
		{"application/json", "application/json"},
		{"text/tab-separated-values, application/json", "text/tab-separated-values"},
		{"*/*", "text/markdown"},
		{"text/html, */*;q=0.1", "text/markdown"},
		// q=0 refuses a type; it used to be taken.
		{"application/json;q=0, text/markdown", "text/markdown"},
		{"application/json;q=0", ""},
		{"application/json;q=0.5, application/x-ndjson", "application/x-ndjson"},
		{"application/json;q=0.9, application/x-ndjson;q=0.9", "application/json"},
		{"application/json;q=nope, text/markdown;q=0.2", "text/markdown"},
		{"text/html", ""},
		// An explicit entry beats a wildcard for its own type.
		{"text/markdown;q=0, */*", "application/json"},
		{"text/markdown;q=0, text/*, application/json;q=0.5", "text/tab-separated-values"},
		{"*/*;q=0.1, application/json;q=0", "text/markdown"},
		{"text/*;q=0, */*", "application/json"},
		{"*/*;q=0", ""},
		// Media ranges of any type, not only */* and text/*.
		{"application/*", "application/json"},
		{"application/*, text/markdown;q=0.1", "application/json"},
		{"application/*;q=0.5, text/*;q=0.4", "application/json"},
		{"application/*;q=0.5, application/x-ndjson", "application/x-ndjson"},
		{"application/*, application/json;q=0", "application/x-ndjson"},
		{"image/*", ""},
		// Specificity, not order, decides which range gives a type its q.
		{"*/*;q=0.9, text/*;q=0.2, text/markdown;q=0.3", "application/json"},
		{"text/markdown;q=0.3, text/*;q=0.2, */*;q=0.1", "text/markdown"},
		{"application/json;charset=utf-8;q=0.2, application/json;q=0.9, */*;q=0.5", "text/markdown"},
		{"APPLICATION/JSON", "application/json"},
		{"application/json; charset=utf-8", "application/json"},
		// Not media ranges, or bad q values: skipped.
		{"*/json, text/tab-separated-values;q=0.1", "text/tab-separated-values"},
		{"application/json;q=1e-1, text/markdown;q=0.01", "text/markdown"},
		{"application/json;q=1.5, text/markdown;q=0.01", "text/markdown"},
		{"application/json;q=NaN", ""},
		{`text/markdown;x="a,b";q=0.5, application/json;q=0.4`, "text/markdown"},
		{",,, ;; ,", ""},
	}
	for _, tc := range tests {
		got, err := negotiate(tc.accept)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("negotiate(%q) = %q, %v; want %q", tc.accept, got, err, tc.want)
		}
	}
}

func TestParseQValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"1", 1000, true}, {"0.5", 500, true}, {"0.125", 125, true}, {"1.000", 1000, true},
		{"1.", 1000, true}, {"0.", 0, true},
		{"1.001", 0, false}, {"0.1234", 0, false}, {"2", 0, false}, {".5", 0, false}, {"+0.5", 0, false},
		{"1e-1", 0, false}, {"NaN", 0, false}, {"", 0, false}, {"0,5", 0, false},
	} {
		got, ok := parseQValue(tc.in)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parseQValue(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzNegotiate: any header answers one of the formats or a 406, the same
// way every time; each format asked for alone is that format, and q=0 on
// it alone refuses it even after a wildcard.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/*, text/markdown;q=0.1", `text/x;a="b,c";q=0.5`, "text/*;q=0, */*", "a/b;q=0.1;q=0.2", "*/json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		got, err := negotiate(accept)
		again, _ := negotiate(accept)
		if got != again {
			t.Fatalf("negotiate(%q) not deterministic: %q then %q", accept, got, again)
		}
		if (err == nil) != slices.Contains(resultFormats, got) {
			t.Fatalf("negotiate(%q) = %q, %v", accept, got, err)
		}
		if strings.TrimSpace(accept) == "" {
			return
		}
		// A header ending in a refusal of the chosen type by its full name
		// never keeps it unless it named that type already.
		// (Without quotes: an unclosed one swallows what follows.)
		if got != "" && !strings.Contains(strings.ToLower(accept), got) && !strings.Contains(accept, `"`) {
			if again, _ := negotiate(accept + ", " + got + ";q=0"); again == got {
				t.Fatalf("%q chosen despite %s;q=0", got, got)
			}
		}
	})
}

func TestNegotiateAlone(t *testing.T) {
	for _, f := range resultFormats {
		if got, err := negotiate(f); got != f || err != nil {
			t.Errorf("negotiate(%q) = %q, %v", f, got, err)
		}
		if got, _ := negotiate("*/*, " + f + ";q=0"); got == f {
			t.Errorf("%s chosen despite q=0", f)
		}
	}
}
