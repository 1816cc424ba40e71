package rendering

import (
	"strings"
	"testing"
)

// TestExecErrorsInRowTerms: a row template failing on its data is told so
// in terms of the rows and the action as written, never Go's types.
func TestExecErrorsInRowTerms(t *testing.T) {
	row := []map[string]any{{"a": nil, "s": "str", "l": []any{1, 2}, "n": 5}}
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{`{{range .rows}}{{.a.deeper}}{{end}}`, []string{"in {{.a.deeper}}", ".deeper is missing", "{{with}}"}},
		{`{{range .rows}}{{.s.x}}{{end}}`, []string{"in {{.s.x}}", ".x is read from a value that is not an object"}},
		{`{{range .rows}}{{index .l 5}}{{end}}`, []string{"in {{index .l 5}}", "index: index out of range: 5"}},
		{`{{range .rows}}{{len .n}}{{end}}`, []string{"in {{len .n}}", "cannot take the length of a number"}},
		{`{{range .rows}}{{slice .s 3 9}}{{end}}`, []string{"in {{slice .s 3 9}}", "out of range: 9"}},
	} {
		tp, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		_, err = tp.Render(row)
		if err == nil {
			t.Fatalf("%s: rendered", tc.src)
		}
		msg := err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", tc.src, msg, w)
			}
		}
		for _, bad := range []string{"interface {}", "float64", "executing \"t\"", "nil pointer"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%s: %q holds Go's %q", tc.src, msg, bad)
			}
		}
	}
}

func TestExecMessageUnknownPassesThrough(t *testing.T) {
	if got := execMessage("something new"); got != "something new" {
		t.Errorf("execMessage = %q", got)
	}
	if got := execMessage(`executing "t" at <.x>: wrong type for value; expected string; got float64`); got != "in {{.x}}: wrong type for value; expected a string; got a number" {
		t.Errorf("execMessage = %q", got)
	}
}
