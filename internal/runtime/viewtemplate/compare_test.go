package viewtemplate

import (
	"encoding/json"
	"math/big"
	"testing"
)

// TestCompareBigIntegers: view templates compare integers by exact value,
// beyond int64 (json.Number cells) and beyond 2^53 (int64 cells), with
// each other, with literals and with floats.
func TestCompareBigIntegers(t *testing.T) {
	vars := map[string]any{
		"a": json.Number("12345678901234567891"), "b": json.Number("12345678901234567892"),
		"m": int64(9007199254740993), "m0": int64(9007199254740992), "f": 9007199254740992.0,
		"s": json.Number("1.2345678901234567891e19"), "n": int64(7), "x": 2.5, "id": "10",
	}
	cases := []struct{ src, want string }{
		{"{{ a < b }} {{ a > b }} {{ a == b }} {{ a != b }} {{ b >= a }} {{ a <= a }}", "true false false true true true"},
		{"{{ m > m0 }} {{ m == f }} {{ m0 == f }} {{ m > f }}", "true false true true"},
		{"{{ a == s }} {{ a == 12345678901234567891 }} {{ b > 12345678901234567891 }} {{ a > 99999999999999999 }}", "true true true true"},
		{"{{ n > 5 }} {{ n == 7.0 }} {{ x < 3 }} {{ x > 2.5 }} {{ a > x }}", "true true true false true"},
		{"{{ id == 10 }} {{ a == 'x' }} {% if a > b %}gt{% else %}le{% endif %}", "false false le"},
	}
	for _, tc := range cases {
		tpl, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got, err := tpl.Render(vars)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
}

// FuzzCompareIntegers: <, == and > on two integer values agree with
// math/big, whatever their size.
func FuzzCompareIntegers(f *testing.F) {
	for _, p := range [][2]string{{"12345678901234567891", "12345678901234567892"}, {"9", "10"}, {"-9007199254740993", "-9007199254740992"},
		{"9223372036854775807", "9223372036854775808"}, {"0", "-0"}, {"-12345678901234567891", "5"}} {
		f.Add(p[0], p[1])
	}
	tpl, err := Parse("{% if a < b %}<{% endif %}{% if a == b %}={% endif %}{% if a > b %}>{% endif %}")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		x, ok := new(big.Int).SetString(a, 10)
		y, ok2 := new(big.Int).SetString(b, 10)
		if !ok || !ok2 || len(a) > 200 || len(b) > 200 {
			return
		}
		vars := map[string]any{"a": json.Number(x.String()), "b": json.Number(y.String())}
		if x.IsInt64() {
			vars["a"] = x.Int64()
		}
		got, err := tpl.Render(vars)
		if err != nil {
			t.Fatalf("%s vs %s: %v", x, y, err)
		}
		if want := []string{"<", "=", ">"}[x.Cmp(y)+1]; got != want {
			t.Fatalf("%s vs %s: %q, want %q", x, y, got, want)
		}
	})
}
