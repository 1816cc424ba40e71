package rendering

import (
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
