package extract

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/plasmd/plasmd/internal/model/decimal"
)

// maxEqualDepth caps equal's recursion; deeper values compare unequal. It
// matches the request compiler's evaluation depth, whose Equal this
// mirrors so that a cursor or stop_when value compares the same on both
// sides of the sandbox.
const maxEqualDepth = 64

// equal reports whether a and b are deeply equal values, comparing numbers
// numerically whatever their Go type (1, int64(1), 1.0 and json.Number("1")
// are equal) and objects regardless of key order.
func equal(a, b any, depth int) bool {
	if depth > maxEqualDepth {
		return false
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if na, ok, bad := number(a); ok {
		nb, ok2, bad2 := number(b)
		if !ok2 || bad || bad2 {
			return false
		}
		if na.big != "" || nb.big != "" {
			return bigEqual(na, nb)
		}
		if na.isInt && nb.isInt {
			return na.i == nb.i
		}
		return na.float() == nb.float()
	}
	switch ta := a.(type) {
	case string:
		tb, ok := b.(string)
		return ok && ta == tb
	case bool:
		tb, ok := b.(bool)
		return ok && ta == tb
	case []any:
		tb, ok := b.([]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for i := range ta {
			if !equal(ta[i], tb[i], depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for k, v := range ta {
			w, ok := tb[k]
			if !ok || !equal(v, w, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

type num struct {
	i     int64
	f     float64
	isInt bool
	// big is the canonical digits of an integer beyond int64 (f holds
	// its float64 rounding): a float64 cannot tell cursor
	// 12345678901234567892 from 12345678901234567891, and paging would
	// stop as if the cursor had not moved.
	big string
}

// bigEqual compares numbers at least one of which is an integer beyond
// int64, exactly: an integral float64 by its exact digits (FormatFloat
// with a fixed precision is exact), a non-integral one never equals it.
// cml.Equal mirrors this.
func bigEqual(a, b num) bool {
	return a.digits() == b.digits() && a.digits() != ""
}

// digits is n's canonical integer text, or "" when n is not an integer.
func (n num) digits() string {
	switch {
	case n.big != "":
		return n.big
	case n.isInt:
		return strconv.FormatInt(n.i, 10)
	case n.f == math.Trunc(n.f):
		return strconv.FormatFloat(n.f, 'f', 0, 64)
	}
	return ""
}

func (n num) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

// number reads the number types a value may arrive as; bad marks one that
// is a number but not a finite one.
func number(v any) (n num, ok, bad bool) {
	switch t := v.(type) {
	case int:
		return num{i: int64(t), isInt: true}, true, false
	case int32:
		return num{i: int64(t), isInt: true}, true, false
	case int64:
		return num{i: t, isInt: true}, true, false
	case uint64:
		if t > math.MaxInt64 {
			return num{f: float64(t), big: strconv.FormatUint(t, 10)}, true, false
		}
		return num{i: int64(t), isInt: true}, true, false
	case float64:
		return num{f: t}, true, math.IsNaN(t) || math.IsInf(t, 0)
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return num{i: i, isInt: true}, true, false
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if digits, integral, derr := decimal.Integer(string(t)); integral && derr == nil {
			if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
				return num{i: i, isInt: true}, true, false // 3.0, 1e3
			}
			return num{f: f, big: digits}, true, false
		}
		if err != nil {
			return num{}, true, true
		}
		return num{f: f}, true, math.IsNaN(f) || math.IsInf(f, 0)
	}
	return num{}, false, false
}
