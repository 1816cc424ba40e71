package rendering

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/engine/render"
)

func rows() []map[string]any {
	return []map[string]any{{"id": "a", "n": int64(2)}, {"id": "b", "n": 3.5}}
}

func TestRender(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{{len .rows}} rows", "2 rows"},
		{"{{range .rows}}{{.id}}={{.n}};{{end}}", "a=2;b=3.5;"},
		{"{{(index .rows 0).id}}", "a"},
		{`{{printf "%.1f" (index .rows 1).n}}`, "3.5"},
		{"plain text, no actions", "plain text, no actions"},
		{"{{range .rows}}{{if eq .id \"b\"}}B{{else}}-{{end}}{{end}}", "-B"},
		{"{{.missing}}", "<no value>"},
	}
	// Integers print with all their digits: a float64 would write 1e+06
	// and 1.2345678901234568e+18; a big integer carried as json.Number
	// and a text id print as written.
	big := []map[string]any{{"id": "12345678901234567891", "n": int64(1000000), "m": int64(1234567890123456789),
		"k": json.Number("18446744073709551616"), "neg": int64(-9007199254740993)}}
	for src, want := range map[string]string{
		"{{range .rows}}{{.id}} {{.n}} {{.m}} {{.k}} {{.neg}}{{end}}":             "12345678901234567891 1000000 1234567890123456789 18446744073709551616 -9007199254740993",
		"{{range .rows}}{{if gt .n 5.0}}big{{end}} {{printf \"%.1f\" .n}}{{end}}": "big 1000000.0",
	} {
		tp, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tp.Render(big); err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", src, got, err, want)
		}
	}
	// An integer still cannot drive a loop.
	for _, v := range []any{int64(3), int64(1 << 60)} {
		tp, _ := Parse("{{range .rows}}{{range .n}}x{{end}}{{end}}")
		if got, err := tp.Render([]map[string]any{{"n": v}}); err == nil {
			t.Errorf("range over integer %v ran: %q", v, got)
		}
	}
	for _, tc := range cases {
		tp, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		got, err := tp.Render(rows())
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
}

// Loops are bounded by a step budget whatever drives them, and output by a
// byte cap; both end the rendering with an error instead of running on.
func TestBounds(t *testing.T) {
	tp, err := Parse("{{range $i := 100000}}{{range $j := 100000}}{{end}}{{end}}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Render(nil); err == nil || !strings.Contains(err.Error(), "loops ran more than") {
		t.Fatalf("unbounded loop: %v", err)
	}
	big := make([]map[string]any, 2000)
	for i := range big {
		big[i] = map[string]any{"s": strings.Repeat("x", 1000)}
	}
	tp, _ = Parse("{{range .rows}}{{.s}}{{end}}")
	if _, err := tp.Render(big); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("output cap: %v", err)
	}
	// A row value never drives a loop: integers arrive as float64.
	tp, _ = Parse("{{range (index .rows 0).n}}x{{end}}")
	if _, err := tp.Render([]map[string]any{{"n": int64(1 << 40)}}); err == nil {
		t.Fatal("ranging over a row's integer ran")
	}
}

// What the engine's check refuses, rendering refuses too.
func TestRefusedLikeCheck(t *testing.T) {
	for _, src := range []string{"{{ rows | length }}", `{{define "x"}}y{{end}}`, "{{call .f}}", `{{printf "%999999999d" 1}}`} {
		_, err := Parse(src)
		if !errors.Is(err, render.ErrTemplate) || render.Check(src) == nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"{{len .rows}}", "{{range .rows}}{{.id}}{{end}}", "{{", "{{define \"a\"}}{{end}}", "{{with .rows}}{{else}}x{{end}}", "{{range $i, $e := .rows}}{{break}}{{end}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tp, err := Parse(src)
		if err != nil {
			var e *render.Error
			if !errors.As(err, &e) || e.Line < 1 {
				t.Fatalf("%q: error without line: %v", src, err)
			}
			return
		}
		_, _ = tp.Render(rows())
	})
}
