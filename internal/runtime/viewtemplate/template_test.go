package viewtemplate

import (
	"errors"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	vars := map[string]any{
		"item_id": "iss-1", "title": "Crash on start", "n": int64(3), "zero": int64(0),
		"base": "https://t.example/", "ident": "CORE-60", "row": map[string]any{"owner": "usr-2"},
		"legacy": true, "managed": false, "empty": "", "q": `{"b":2,"a":"x y","z":null}`,
		"when": "2026-01-02T03:04:05Z", "rel": "now-1h",
	}
	tests := []struct{ name, src, want string }{
		{"names", "{{ item_id }}-{{ title }}", "iss-1-Crash on start"},
		{"attribute", "{{ row.owner }}", "usr-2"},
		{"filters", "{{ base | strip_trailing_slash }}/browse/{{ item_id | upper }}", "https://t.example/browse/ISS-1"},
		{"urlencode", "{{ 'a=b&c' | urlencode }}", "a%3Db%26c"},
		{"split method and index", "{%- set k = ident.split('-')[0] -%}\n{{ k }}/{{ ident }}", "CORE/CORE-60"},
		{"split_part", "{{ ident | split_part('-', 1) }}", "60"},
		{"if elif else", "{%- if legacy and not managed -%}legacy{%- elif managed -%}managed{%- else -%}none{%- endif -%}", "legacy"},
		{"else branch", "{% if empty %}x{% else %}y{% endif %}", "y"},
		{"compare and concat", "{% if n > 2 %}{{ 'many' ~ ':' ~ n }}{% endif %}", "many:3"},
		{"equality with text", "{% if item_id == 'iss-1' %}yes{% endif %}", "yes"},
		{"in", "{% if 'ash' in title %}in{% endif %}", "in"},
		{"json", `{{ title | json_encode }}`, `"Crash on start"`},
		{"query suffix", "{{ q | wire_query_suffix }}", "&a=x+y&b=2"},
		{"wire_time converts rfc3339", "{{ when | wire_time('unix_ms') }}", "1767323045000"},
		{"wire_time passes relative", "{{ rel | wire_time('unix_ms') }}", "now-1h"},
		{"comment and whitespace", "a {# note #}\n {{- n -}} b", "a 3b"},
		{"arithmetic", "{{ n + 1 }} {{ n - 5 }}", "4 -2"},
		{"default", "{{ none | default('d') }}", "d"},
		{"zero is false", "{% if zero %}t{% else %}f{% endif %}", "f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render(vars)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, src string
		parse     bool // fails to parse (else to render)
		line, col int
		msg       string
	}{
		{"unclosed output", "a {{ b", true, 1, 3, "never closed"},
		{"unclosed if", "{% if a %}x", true, 1, 7, "never closed"},
		{"stray endif", "x\n{% endif %}", true, 2, 4, "without an open"},
		{"loops refused", "{% for i in x %}{% endfor %}", true, 1, 4, "no loops"},
		{"bad char", "{{ a ; b }}", true, 1, 6, "unexpected character"},
		{"undefined", "ok\n  {{ missing }}", false, 2, 6, "missing is undefined"},
		{"unknown filter", "{{ a | shout }}", false, 1, 8, "unknown filter"},
		{"bad index", "{{ ident.split('-')[5] }}", false, 1, 20, "out of range"},
		{"empty", "   ", true, 1, 1, "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if !tt.parse && err == nil {
				_, err = tpl.Render(map[string]any{"a": "x", "ident": "A-1"})
			}
			var te *Error
			if !errors.As(err, &te) || !errors.Is(err, ErrTemplate) {
				t.Fatalf("error %v, want a template error", err)
			}
			if te.Line != tt.line || te.Column != tt.col || !strings.Contains(te.Msg, tt.msg) {
				t.Errorf("got %d:%d %q, want %d:%d …%s…", te.Line, te.Column, te.Msg, tt.line, tt.col, tt.msg)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	big := strings.Repeat("x", 40<<10)
	tpl, err := Parse("{{ a ~ a ~ a ~ a ~ a }}{{ a ~ a ~ a ~ a ~ a }}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Render(map[string]any{"a": big}); !errors.Is(err, ErrTemplate) {
		t.Errorf("oversized output: %v", err)
	}
	if _, err := Parse("{{ " + strings.Repeat("(", 500) + "a" + strings.Repeat(")", 500) + " }}"); err == nil {
		t.Error("deep nesting parsed")
	}
	if _, err := Parse("{{ " + strings.Repeat("not ", 200) + "a }}"); err == nil {
		t.Error("deep not chain parsed")
	}
	tpl, _ = Parse("{{ a | shout }}{{ b | urlencode }}")
	if u := tpl.Unknown(); u != "shout" {
		t.Errorf("Unknown() = %q", u)
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{{ a }}", "{%- if a and not b -%}x{%- elif c -%}y{% else %}z{% endif %}", "{% set k = a.split('-')[0] %}{{ k ~ b | urlencode }}", "{{ [1, 'a'] | json_encode }}", "{# c #}{{ a[0] }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			if !errors.Is(err, ErrTemplate) {
				t.Fatalf("untyped parse error %v", err)
			}
			return
		}
		out, err := tpl.Render(map[string]any{"a": "x-y", "b": int64(2), "c": []any{"z"}})
		if err != nil && !errors.Is(err, ErrTemplate) {
			t.Fatalf("untyped render error %v", err)
		}
		if len(out) > MaxOutput {
			t.Fatalf("output %d bytes", len(out))
		}
	})
}
