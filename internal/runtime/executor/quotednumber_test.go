package executor

import (
	"encoding/json"
	"math"
	"testing"
)

// A quoted number literal (the planner accepts one for a number field, and
// the lexer tells users to quote integers beyond int64) compares with a
// numeric cell as the number it spells, in ordering and in equality:
// exactly when both are integers, by their decimal digits otherwise (never
// by text: "10000000000000000000" sorts before "9.5" as text). Leading
// zeros of the literal do not count. A text cell, or a literal that is no
// number, keeps the text comparison.
func TestQuotedNumberFilters(t *testing.T) {
	for _, c := range []struct {
		cell any
		op   string
		lit  any
		want bool
	}{
		// The reviewer's repros.
		{9.5, ">", "10000000000000000000", false},
		{123.5, "<", "10000000000000000000", true},
		{10.25, ">", "5.5", true},
		{int64(5), ">=", "007", false},
		{int64(7), ">=", "007", true},
		// Ordering, mixed kinds.
		{10.5, ">", "5", true},
		{3.25, ">", "5", false},
		{int64(10), ">", "9.99", true},
		{int64(10), "<", "10.0000000000000000001", true},
		{json.Number("12345678901234567891"), ">", "12345678901234567890.5", true},
		{json.Number("12345678901234567891.5"), "<", "12345678901234567892", true},
		{json.Number("1.5e3"), "<=", "1500", true},
		{-2.5, "<", "-2.25", true},
		{-2.5, ">", "-10", true},
		{0.1, ">=", "0.1", true},
		{0.1, ">", "0.1", false},
		{1e21, ">", "999999999999999999999", true},
		{int64(0), ">", "-0.0", false},
		{int64(-5), "<", "-004", true},
		// Equality.
		{int64(7), "=", "007", true},
		{int64(7), "!=", "007", false},
		{10.25, "=", "10.250", true},
		{10.25, "=", "10.2500000000000000001", false},
		{json.Number("12345678901234567891"), "=", "12345678901234567891.0", true},
		{json.Number("12345678901234567891"), "=", "12345678901234567892", false},
		{int64(3), "=", []any{"1", "003"}, true},
		{int64(0), "=", "-0", true},
		// Not numbers: text as before.
		{"9", ">", "10", true},
		{"007", "=", "7", false},
		{int64(5), ">", "abc", false},
		{int64(5), "=", "5 ", false},
		{math.Inf(1), ">", "5", true},
	} {
		if got := match(c.cell, c.op, c.lit); got != c.want {
			t.Errorf("match(%#v %s %#v) = %v, want %v", c.cell, c.op, c.lit, got, c.want)
		}
	}
}
