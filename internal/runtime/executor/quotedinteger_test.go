package executor

import (
	"encoding/json"
	"testing"
)

// A quoted integer literal (the lexer's form for integers beyond int64) in
// an ordering filter against an integer cell compares as a number; against
// a text cell it stays text.
func TestQuotedIntegerOrdering(t *testing.T) {
	for _, c := range []struct {
		cell any
		op   string
		lit  any
		want bool
	}{
		{int64(9223372036854775807), ">", "10000000000000000000", false},
		{int64(9223372036854775807), "<", "10000000000000000000", true},
		{json.Number("12345678901234567891"), ">", "9", true},
		{json.Number("12345678901234567891"), ">=", "12345678901234567891", true},
		{json.Number("12345678901234567891"), ">", "12345678901234567891", false},
		{json.Number("-12345678901234567891"), "<", "-9", true},
		{int64(5), "<=", "-0", false},
		{"9", ">", "10", true},        // text cell: text order
		{int64(5), ">", "abc", false}, // not an integer literal: text order
		{json.Number("12345678901234567891"), ">", json.Number("9"), true},
	} {
		if got := match(c.cell, c.op, c.lit); got != c.want {
			t.Errorf("match(%#v %s %#v) = %v, want %v", c.cell, c.op, c.lit, got, c.want)
		}
	}
}
