package executor

import (
	"cmp"
	"encoding/json"
	"math/big"
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

// wholeSum adds whole-number cells exactly: in an int64 while it fits,
// then in a big.Int (an int64 sum wraps silently, MaxInt64+1 being
// MinInt64, and a float64 sum rounds integers beyond 2^53). math/big
// rather than hand-written carries: it is the standard exact integer.
type wholeSum struct {
	small int64
	big   *big.Int
}

// add adds v and reports whether it is a whole number; the sum is
// unchanged when it is not.
func (s *wholeSum) add(v any) bool {
	var iv int64
	switch x := v.(type) {
	case int64:
		iv = x
	case int:
		iv = int64(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			iv = i
			break
		}
		t, ok := integerText(x)
		if !ok {
			return false
		}
		b, ok := new(big.Int).SetString(t, 10)
		if !ok {
			return false
		}
		s.promote()
		s.big.Add(s.big, b)
		return true
	default:
		return false
	}
	if s.big == nil {
		r := s.small + iv
		if (iv > 0 && r < s.small) || (iv < 0 && r > s.small) {
			s.promote()
		} else {
			s.small = r
			return true
		}
	}
	s.big.Add(s.big, big.NewInt(iv))
	return true
}

func (s *wholeSum) promote() {
	if s.big == nil {
		s.big = big.NewInt(s.small)
	}
}

// value is the sum: an int64 when it fits, else a json.Number of its exact
// digits, the form the decoder gives an integer beyond int64.
func (s *wholeSum) value() any {
	if s.big == nil {
		return s.small
	}
	if s.big.IsInt64() {
		return s.big.Int64()
	}
	return json.Number(s.big.String())
}
