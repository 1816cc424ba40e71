package viewtemplate

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestGrowthRefusedBeforeAllocating renders templates whose result would
// exceed MaxOutput many times over: each must fail with the length error
// having allocated a bounded amount, not the text it refuses (a 32 KiB
// text replacing each of its bytes by itself is 1 GiB).
func TestGrowthRefusedBeforeAllocating(t *testing.T) {
	doubled := "{% set a = 'xxxxxxxx' %}" + strings.Repeat("{% set a = a ~ a %}", 12) // 32 KiB
	tests := []struct{ name, src string }{
		{"replace by itself", doubled + "{{ a.replace('x', a) }}"},
		{"replace empty old", doubled + "{{ a.replace('', a) }}"},
		{"concat", doubled + "{% set b = a ~ a %}{{ b ~ b ~ b }}"},
		{"plus", doubled + "{% set b = a + a %}{{ b + b + b }}"},
		{"urlencode", doubled + "{{ (a.replace('x', '&') ~ a) | urlencode }}"},
		{"json_encode chain", doubled + "{% set b = a.replace('x', '<') %}{% set b = b | json_encode %}{{ b | json_encode }}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = tpl.Render(nil)
			runtime.ReadMemStats(&after)
			var te *Error
			if !errors.As(err, &te) || !strings.Contains(te.Msg, "longer than") {
				t.Fatalf("err = %v, want the length error", err)
			}
			// Building the 32 KiB text and a few copies of it is well
			// under this; building the refused result is not.
			if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
				t.Errorf("allocated %d MiB before refusing", got>>20)
			}
		})
	}
}

// TestGrowthWithinBound checks the bounds refuse only what is too long.
func TestGrowthWithinBound(t *testing.T) {
	tests := []struct{ src, want string }{
		{"{{ 'a-b'.replace('-', '--') }}", "a--b"},
		{"{{ 'ab'.replace('', '.') }}", ".a.b."},
		{"{{ 'é'.replace('', '.') }}", ".é."},
		{"{{ 'a b/é' | urlencode }}", "a+b%2F%C3%A9"},
	}
	for _, tt := range tests {
		tpl, err := Parse(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tpl.Render(nil); err != nil || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
}

// TestDefaultOfUndefined: Jinja's default (and its alias d) is the way to
// read a name that may be missing, even with strict undefined.
func TestDefaultOfUndefined(t *testing.T) {
	vars := map[string]any{"row": map[string]any{"a": "x"}, "n": nil}
	tests := []struct{ src, want string }{
		{"{{ missing | default('d') }}", "d"},
		{"{{ missing | d('d') }}", "d"},
		{"{{ missing | default }}", ""},
		{"{{ row.b | default('none') }}", "none"},
		{"{{ row['b'] | default('none') }}", "none"},
		{"{{ row.a | default('none') }}", "x"},
		{"{{ n | default('d') }}", "d"},
		{"{{ missing | default(row.a) | upper }}", "X"},
	}
	for _, tt := range tests {
		tpl, err := Parse(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tpl.Render(vars); err != nil || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
	// Only default forgives: other filters and a missing name inside the
	// fallback stay errors.
	for _, src := range []string{"{{ missing | upper }}", "{{ missing | default(other) }}", "{{ missing.x | default('d') | shout }}"} {
		tpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tpl.Render(vars); !errors.Is(err, ErrTemplate) {
			t.Errorf("%s: err = %v, want a template error", src, err)
		}
	}
}

// TestUnsupportedJinja: valid Jinja the subset does not run is reported
// as unsupported (the view is then not executable), while malformed
// templates stay syntax errors, both at a line and column.
func TestUnsupportedJinja(t *testing.T) {
	tests := []struct {
		src         string
		unsupported bool
		line, col   int
	}{
		{"{{ 'C' if s == 'closed' else 'O' }}", true, 1, 8},
		{"{% set x = a if b else c %}", true, 1, 14},
		{"{{ f.replace(a if b else c, 'x') }}", true, 1, 16},
		{"{% if x is defined %}y{% endif %}", true, 1, 9},
		{"{{ x is none }}", true, 1, 6},
		{"{{ n * 2 }}", true, 1, 6},
		{"{{ n / 2 }}", true, 1, 6},
		{"{{ n // 2 }}", true, 1, 6},
		{"{{ n % 2 }}", true, 1, 6},
		{"{{ n ** 2 }}", true, 1, 6},
		{"x\n{{ (n * 2) ~ 'a' }}", true, 2, 7},
		{"{{ s[0:1] }}", true, 1, 7},
		{"{{ s[:1] }}", true, 1, 6},
		{"{{ {'a': 1} }}", true, 1, 4},
		{"{{ a b }}", false, 1, 6},
		{"{{ a ; b }}", false, 1, 6},
		{"{{ a } }}", false, 1, 6},
		{"{{ : }}", false, 1, 4},
		{"{{ a if }", false, 1, 1},
		{"{% if a %}x", false, 1, 7},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		var te *Error
		if !errors.As(err, &te) {
			t.Errorf("%q: err = %v, want a template error", tt.src, err)
			continue
		}
		if errors.Is(err, ErrUnsupported) != tt.unsupported || te.Line != tt.line || te.Column != tt.col {
			t.Errorf("%q: %v (unsupported %v), want unsupported %v at %d:%d", tt.src, err, errors.Is(err, ErrUnsupported), tt.unsupported, tt.line, tt.col)
		}
	}
}
