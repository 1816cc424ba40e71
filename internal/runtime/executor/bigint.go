package executor

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
)

// integerText is the canonical decimal text of an integer cell: an int64,
// an int, or a json.Number written as an integer (the decoder carries an
// integer beyond int64 that way, with its exact digits). Comparing such
// cells through float64 would call 12345678901234567891 and
// 12345678901234567892 equal, so filters and sorts compare them as text.
func integerText(v any) (string, bool) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case json.Number:
		s := string(x)
		d := strings.TrimPrefix(s, "-")
		if d == "" || (d[0] == '0' && len(d) > 1) {
			return "", false
		}
		for i := 0; i < len(d); i++ {
			if d[i] < '0' || d[i] > '9' {
				return "", false
			}
		}
		if d == "0" {
			return "0", true // -0
		}
		return s, true
	}
	return "", false
}

// compareIntegerText orders two canonical integer texts numerically: by
// sign, then by length, then digit by digit.
func compareIntegerText(a, b string) int {
	na, nb := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	switch {
	case na && !nb:
		return -1
	case !na && nb:
		return 1
	}
	r := cmp.Compare(len(a), len(b))
	if r == 0 {
		r = strings.Compare(a, b)
	}
	if na {
		return -r
	}
	return r
}

// compareIntegers compares a and b exactly when both are integer cells.
func compareIntegers(a, b any) (int, bool) {
	x, ok := integerText(a)
	if !ok {
		return 0, false
	}
	y, ok := integerText(b)
	if !ok {
		return 0, false
	}
	return compareIntegerText(x, y), true
}
