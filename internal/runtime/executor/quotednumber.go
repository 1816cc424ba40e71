package executor

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/model/decimal"
)

// compareQuotedNumber compares a numeric cell with a quoted number literal
// as the numbers they are. The planner accepts a quoted number for a
// number or integer field, and the lexer quotes integers beyond int64
// (`amount > "10000000000000000000"`), so against a numeric cell such a
// literal is the number it spells; compared as text, 9.5 would be
// "greater" than 10000000000000000000 and 10.25 "less" than 5.5. The
// comparison is exact (decimal.Compare on the two literals: integers by
// their digits, fractions without a float64's rounding); a float64 cell
// is its shortest decimal form, the literal it was read from. Leading
// zeros of the literal do not count ("007" is 7). ok is false for a text
// cell or a literal that is no number: those keep the text comparison.
func compareQuotedNumber(cell, lit any) (int, bool) {
	s, ok := lit.(string)
	if !ok {
		return 0, false
	}
	var c string
	switch x := cell.(type) {
	case int64:
		c = strconv.FormatInt(x, 10)
	case int:
		c = strconv.Itoa(x)
	case json.Number:
		c = string(x)
	case float64:
		if math.IsNaN(x) {
			return 0, false
		}
		if math.IsInf(x, 0) {
			if _, ok := decimal.Compare(trimLeadingZeros(s), "0"); !ok {
				return 0, false
			}
			if x > 0 {
				return 1, true
			}
			return -1, true
		}
		c = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return 0, false
	}
	return decimal.Compare(c, trimLeadingZeros(s))
}

// trimLeadingZeros drops the leading zeros of a literal's integer part
// ("007" → "7", "-00.5" → "-0.5"), which JSON's grammar, and so
// decimal.Parse, refuses.
func trimLeadingZeros(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	i := 0
	for i+1 < len(s) && s[i] == '0' && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
	}
	if i == 0 {
		return sign + s
	}
	return sign + s[i:]
}
