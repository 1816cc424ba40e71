package render

import (
	"errors"
	"strings"
	"testing"
)

func TestRefused(t *testing.T) {
	cases := []struct {
		src  string
		line int
		msg  string
	}{
		{"x\n{% for r in rows %}{{ r.id }}{% endfor %}", 2, "Jinja"},
		{"{{ rows | length }}", 1, "Jinja"},
		{`{{define "x"}}y{{end}}`, 1, "define"},
		{"a\n{{template \"t\"}}", 2, "template"},
		{"{{call .f}}", 1, "call"},
		{`{{printf "%999999999d" 1}}`, 1, "printf"},
		{`{{printf .fmt 1}}`, 1, "printf"},
		{`{{printf "%*d" 5 1}}`, 1, "printf"},
		{"{{range .rows}}\n{{.id}\n{{end}}", 2, ""},
		{"{{nosuchfunc 1}}", 1, "nosuchfunc"},
	}
	for _, tc := range cases {
		err := Check(tc.src)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrTemplate) || e.Line != tc.line || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%q: got %v (%+v), want line %d %q", tc.src, err, e, tc.line, tc.msg)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"{{len .rows}}", "{{range .rows}}{{.id}}{{end}}", "{{", "{{define \"a\"}}{{end}}", "{{with .rows}}{{else}}x{{end}}", "{{range $i, $e := .rows}}{{break}}{{end}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if err := Check(src); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 {
				t.Fatalf("%q: error without line: %v", src, err)
			}
		}
	})
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		msg  string
	}{
		{"template: t:3: unexpected EOF", 3, "unexpected EOF"},
		{"template: t:2:14: executing \"t\" at <.x>: boom", 2, "executing \"t\" at <.x>: boom"},
		{"something else", 1, "something else"},
	} {
		if l, m := SplitMessage(tc.in); l != tc.line || m != tc.msg {
			t.Errorf("SplitMessage(%q) = %d, %q", tc.in, l, m)
		}
	}
	for f, ok := range map[string]bool{"%.2f": true, "%5d|%-10s": true, "%100d": false, "%.100f": false, "%*d": false, "%[1]d": false, "100%": true} {
		if smallVerbs(f) != ok {
			t.Errorf("smallVerbs(%q) != %v", f, ok)
		}
	}
	for ln, ok := range map[string]bool{"{{ rows | length }}": true, "{{ x|upper}}": true, "{{ .a | printf \"%s\" }}": false, "a | length": false,
		// Jinja subscripts (Plasm's language matrix: {{ rows[0].title }}).
		"{{ rows[0].title }}": true, "{{ r['id'] }}": true, "{{ printf \"[%s]\" .a }}": false, "{{ printf `[` }}": false, "[{{ .a }}]": false} {
		if jinjaFilter(ln) != ok {
			t.Errorf("jinjaFilter(%q) != %v", ln, ok)
		}
	}
}
