package viewtemplate

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
)

// TestNumberLiterals: a negative literal beyond int64 is exact like a
// positive one (unary minus on it was 0 - x in float64, so
// -99999999999999999999 was -1e20 and no longer equalled the cell it
// spells); a zero-padded one prints and compares as its canonical digits;
// infinity compares with numbers (big.Rat cannot hold it).
func TestNumberLiterals(t *testing.T) {
	vars := map[string]any{
		"neg": json.Number("-99999999999999999999"), "pos": json.Number("99999999999999999999"),
		"min": int64(math.MinInt64), "inf": math.Inf(1), "ninf": math.Inf(-1), "n": int64(5),
	}
	cases := []struct{ src, want string }{
		{"{{ neg == -99999999999999999999 }} {{ neg == -100000000000000000000 }} {{ neg < -99999999999999999998 }}", "true false true"},
		{"{{ -99999999999999999999 }} {{ --99999999999999999999 }} {{ ---99999999999999999999 }}", "-99999999999999999999 99999999999999999999 -99999999999999999999"},
		{"{{ pos == --99999999999999999999 }} {{ -0 }} {{ -9223372036854775808 }} {{ min == -9223372036854775808 }}", "true 0 -9223372036854775808 true"},
		{"{{ 0099999999999999999999 }} {{ pos == 0099999999999999999999 }} {{ 0099999999999999999999 == 100000000000000000000 }}", "99999999999999999999 true false"},
		{"{{ -0099999999999999999999 == neg }} {{ 00 }} {{ 007 }}", "true 0 7"},
		{"{{ inf > 5 }} {{ inf > n }} {{ ninf < n }} {{ inf > pos }} {{ ninf < neg }} {{ inf == inf }} {{ ninf < inf }}", "true true true true true true true"},
		{"{{ 5 < inf }} {{ pos < inf }} {{ inf == pos }} {{ 2.5 > ninf }}", "true true false true"},
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

// FuzzIntegerLiteral: an integer literal, however many minus signs and
// leading zeros it is written with, equals and prints as the integer
// math/big reads.
func FuzzIntegerLiteral(f *testing.F) {
	for _, s := range []string{"99999999999999999999", "0099999999999999999999", "9223372036854775808", "0", "7"} {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, digits string, minus uint8) {
		if digits == "" || len(digits) > 100 || strings.Trim(digits, "0123456789") != "" {
			return
		}
		minus %= 4
		want, _ := new(big.Int).SetString(digits, 10)
		if minus%2 == 1 {
			want.Neg(want)
		}
		lit := strings.Repeat("-", int(minus)) + digits
		tpl, err := Parse("{{ " + lit + " }} {{ a == " + lit + " }}")
		if err != nil {
			t.Fatal(err)
		}
		got, err := tpl.Render(map[string]any{"a": json.Number(want.String())})
		if w := want.String() + " true"; err != nil || got != w {
			t.Fatalf("%s: got %q, %v; want %q", lit, got, err, w)
		}
	})
}
