package viewtemplate

import (
	"cmp"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/model/decimal"
)

// Text renders a value as Jinja prints it: none as "", booleans as
// true/false, whole numbers without a fraction, lists and maps as JSON.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if f, ok := toFloat(v); ok {
		return f != 0
	}
	return true
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func toInt(v any) (int64, bool) {
	f, ok := toFloat(v)
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

func number(f float64) any {
	if f == float64(int64(f)) {
		return int64(f)
	}
	return f
}

func equal(a, b any) bool {
	if c, ok := compareNumbers(a, b); ok {
		return c == 0
	}
	if _, ok := toFloat(a); ok {
		return false // a number never equals a non-number
	}
	switch a.(type) {
	case []any, map[string]any:
		return Text(a) == Text(b)
	}
	return a == b
}

func compare(a, b any) (int, bool) {
	if c, ok := compareNumbers(a, b); ok {
		return c, true
	}
	sa, aok := a.(string)
	sb, bok := b.(string)
	if aok && bok {
		return strings.Compare(sa, sb), true
	}
	return 0, false
}

func contains(container, item any) bool {
	switch c := container.(type) {
	case string:
		return strings.Contains(c, Text(item))
	case []any:
		for _, x := range c {
			if equal(x, item) {
				return true
			}
		}
	case map[string]any:
		_, ok := c[Text(item)]
		return ok
	}
	return false
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "none"
	case string:
		return "text"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return "a value"
}

func toList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// compareNumbers orders two numbers by exact value. Row cells carry an
// integer beyond int64 as a json.Number of its digits; through a float64
// 12345678901234567891 and 12345678901234567892 are one value, and an
// int64 beyond 2^53 rounds too. Two int64s or two float64s compare
// directly; other pairs through math/big, exactly.
func compareNumbers(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), true
		}
	case float64:
		if y, ok := b.(float64); ok && !math.IsNaN(x) && !math.IsNaN(y) {
			return cmp.Compare(x, y), true
		}
	}
	if c, ok := compareInfinite(a, b); ok {
		return c, true
	}
	x, ok := exactNumber(a)
	if !ok {
		return 0, false
	}
	y, ok := exactNumber(b)
	if !ok {
		return 0, false
	}
	return x.Cmp(y), true
}

// compareInfinite orders a and b when either is ±Inf, which math/big
// cannot hold (big.Rat.SetFloat64 refuses it): every finite number lies
// between the two, and each equals itself.
func compareInfinite(a, b any) (int, bool) {
	if !isInf(a) && !isInf(b) {
		return 0, false // the common case: no math/big here
	}
	x, xok := side(a)
	y, yok := side(b)
	if !xok || !yok {
		return 0, false
	}
	return cmp.Compare(x, y), true
}

func isInf(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsInf(f, 0)
}

// side is -1 or 1 for -Inf or +Inf, 0 for a finite number; ok is false
// for NaN and for what is not a number.
func side(v any) (int, bool) {
	if f, ok := v.(float64); ok {
		switch {
		case math.IsInf(f, 0):
			return int(math.Copysign(1, f)), true
		case math.IsNaN(f):
			return 0, false
		}
	}
	_, ok := exactNumber(v)
	return 0, ok
}

// exactNumber is v's exact value: an integer json.Number by its digits
// (decimal.Integer bounds them, so 1e999999 is not expanded), another by
// its float64, as toFloat reads it.
func exactNumber(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case float64:
		r := new(big.Rat).SetFloat64(x) // nil for NaN and ±Inf
		return r, r != nil
	case json.Number:
		if d, integral, err := decimal.Integer(string(x)); integral && err == nil {
			return new(big.Rat).SetString(d)
		}
		if f, err := x.Float64(); err == nil {
			return exactNumber(f)
		}
	}
	return nil, false
}
