package rendering

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"text/template"
)

// oldValue is a row value as templates saw it before row integers beyond
// ±2^53 became bigInt: such an int64, and any json.Number, as its text.
func oldValue(v any) any {
	switch x := v.(type) {
	case int64:
		if x >= -1<<53 && x <= 1<<53 {
			return integer(x)
		}
		return strconv.FormatInt(x, 10)
	case json.Number:
		return x.String()
	}
	return v
}

// denotesInteger reports whether an operand (a row field or a template
// constant) denotes an integer: what the new comparisons deliberately
// order by value rather than as text or not at all.
func denotesInteger(row map[string]any, operand string) bool {
	if f, ok := strings.CutPrefix(operand, "."); ok {
		switch v := row[f].(type) {
		case int64, json.Number:
			return true
		case string:
			_, ok := quotedIntegerText(v)
			return ok
		}
		return false
	}
	if s, err := strconv.Unquote(operand); err == nil {
		_, ok := quotedIntegerText(s)
		return ok
	}
	_, err := strconv.ParseInt(operand, 10, 64)
	return err == nil
}

func quotedIntegerText(s string) (string, bool) {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil || (len(s) > 18 && strings.Trim(strings.TrimPrefix(s, "-"), "0123456789") == "" && s[0] != '0') {
		return s, true
	}
	return "", false
}

// TestBuiltinCompatibility: for every pair of operands (row values of each
// kind the decoder yields, and template constants) and every comparison,
// what text/template's builtins answered on the values templates saw
// before bigInt, the replacements answer too, unless both operands denote
// integers, one of them beyond ±2^53 (those now compare by value instead
// of as text: 9 < 10). Comparisons the builtins refused may now work.
func TestBuiltinCompatibility(t *testing.T) {
	row := map[string]any{
		"big":  json.Number("12345678901234567891"),
		"big2": int64(1234567890123456789),
		"n":    int64(7),
		"f":    2.5,
		"s":    "abc",
		"e":    "",
		"d":    "10",
		"bd":   "12345678901234567891",
		"b":    true,
	}
	operands := []string{".big", ".big2", ".n", ".f", ".s", ".e", ".d", ".bd", ".b", ".missing",
		`""`, `"abc"`, `"12345678901234567891"`, `"zzz"`, "7", "2.5", "true"}
	old := make(map[string]any, len(row))
	for k, v := range row {
		old[k] = oldValue(v)
	}
	compared := 0
	for _, op := range []string{"eq", "ne", "lt", "le", "gt", "ge"} {
		for _, a := range operands {
			for _, b := range operands {
				src := fmt.Sprintf("{{range .rows}}{{%s %s %s}}{{end}}", op, a, b)
				builtin, err := template.New("t").Option("missingkey=zero").Parse(src)
				if err != nil {
					t.Fatal(err)
				}
				var w strings.Builder
				if err := builtin.Execute(&w, map[string]any{"rows": []any{old}}); err != nil {
					continue // refused before: anything goes now
				}
				if denotesInteger(row, a) && denotesInteger(row, b) &&
					(strings.HasPrefix(a, ".big") || strings.HasPrefix(b, ".big")) {
					continue // ordered by value now, deliberately
				}
				tp, err := Parse(src)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				got, err := tp.Render([]map[string]any{row})
				if err != nil || got != w.String() {
					t.Errorf("%s: got %q, %v; the builtin answered %q", src, got, err, w.String())
				}
				compared++
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d comparisons checked", compared)
	}
}
