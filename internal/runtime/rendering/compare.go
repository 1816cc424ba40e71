package rendering

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strconv"

	"github.com/plasmd/plasmd/internal/model/decimal"
)

// Row templates compare with eq, ne, lt, le, gt and ge, which these
// replace (a template's own functions take precedence over text/template's
// builtins). The builtins compare only values of one basic kind: a row
// integer (a float64 kind, so it cannot drive a range loop) against an
// integer constant (`gt .n 5`) was "incompatible types", and an integer
// beyond ±2^53, which reaches the template as its digits, compared as text
// with another (9 > 10) or failed against any other number. Here numbers
// of any kind, big integers included, compare by exact value; a quoted
// integer literal counts as that integer against a number, since a
// template cannot write an integer beyond int as a constant
// (`gt .id "10000000000000000000"`). Everything else compares as the
// builtins do.

// bigInt is a row integer beyond ±2^53 as the template sees it: its exact
// digits, or its literal where decimal.Compact keeps one (1e4095), a
// string kind, so it prints as written and cannot drive a range loop,
// compared as the number it is.
type bigInt string

var bigIntType = reflect.TypeFor[bigInt]()

var (
	errNoComparison   = errors.New("missing argument for comparison")
	errBadComparison  = errors.New("invalid type for comparison")
	errNotComparable  = errors.New("non-comparable types")
	comparisonFuncMap = map[string]any{"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge}
)

// exact reads v as a number: ok for integer, unsigned and float kinds and
// for bigInt.
func exact(v reflect.Value) (*big.Rat, bool) {
	if !v.IsValid() {
		return nil, false
	}
	if v.Type() == bigIntType {
		return new(big.Rat).SetString(v.String())
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return new(big.Rat).SetInt64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return new(big.Rat).SetUint64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		r := new(big.Rat).SetFloat64(v.Float()) // nil for NaN and ±Inf
		return r, r != nil
	}
	return nil, false
}

// quotedInteger reads a string that is exactly an integer literal.
func quotedInteger(v reflect.Value) (*big.Rat, bool) {
	if v.Kind() != reflect.String {
		return nil, false
	}
	d, integral, err := decimal.Integer(v.String())
	if !integral || err != nil || d != v.String() {
		return nil, false
	}
	return new(big.Rat).SetString(d)
}

// numericOrder orders a and b by value when both are numbers, or when one
// is and the other a quoted integer literal.
func numericOrder(a, b reflect.Value) (int, bool) {
	if c, ok := sameKind(a, b); ok {
		return c, true
	}
	x, xok := exact(a)
	y, yok := exact(b)
	switch {
	case xok && yok:
	case xok:
		y, yok = quotedInteger(b)
	case yok:
		x, xok = quotedInteger(a)
	}
	if !xok || !yok {
		return 0, false
	}
	return x.Cmp(y), true
}

// sameKind compares two ints or two floats (row integers within ±2^53
// are floats) directly, without math/big: the common case, exact as it is.
func sameKind(a, b reflect.Value) (int, bool) {
	if !a.IsValid() || !b.IsValid() || a.Type() == bigIntType || b.Type() == bigIntType {
		return 0, false
	}
	switch {
	case isFloat(a) && isFloat(b):
		x, y := a.Float(), b.Float()
		if x != x || y != y {
			return 0, false // NaN: exact refuses it
		}
		return cmp.Compare(x, y), true
	case a.CanInt() && b.CanInt():
		return cmp.Compare(a.Int(), b.Int()), true
	}
	return 0, false
}

func isFloat(v reflect.Value) bool {
	k := v.Kind()
	return k == reflect.Float64 || k == reflect.Float32
}

func indirect(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}
		}
		return v.Elem()
	}
	return v
}

// numeric reports whether v is a number or a big integer.
func numeric(v reflect.Value) bool {
	_, ok := exact(v)
	return ok
}

// eq reports whether arg1 equals any of args.
func eq(arg1 reflect.Value, args ...reflect.Value) (bool, error) {
	arg1 = indirect(arg1)
	if len(args) == 0 {
		return false, errNoComparison
	}
	for _, arg := range args {
		arg = indirect(arg)
		truth, err := equal(arg1, arg)
		if err != nil || truth {
			return truth, err
		}
	}
	return false, nil
}

func equal(a, b reflect.Value) (bool, error) {
	if c, ok := numericOrder(a, b); ok {
		return c == 0, nil
	}
	if !a.IsValid() || !b.IsValid() {
		return !a.IsValid() && !b.IsValid(), nil // a missing value equals only another
	}
	if asText(a, b) {
		return a.String() == b.String(), nil
	}
	if numeric(a) || numeric(b) || a.Kind() != b.Kind() {
		return false, incompatible(a, b)
	}
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool(), nil
	case reflect.String:
		return a.String() == b.String(), nil
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex(), nil
	}
	if nilable(a) && (a.IsNil() || b.IsNil()) {
		return a.IsNil() && b.IsNil(), nil
	}
	if !a.Type().Comparable() || !b.Type().Comparable() {
		return false, fmt.Errorf("%w: %v and %v", errNotComparable, a.Type(), b.Type())
	}
	return a.Interface() == b.Interface(), nil
}

// asText reports whether a and b compare as text: a big integer against
// text that is not an integer literal (numericOrder takes those). Such an
// integer reached templates as its digits before bigInt, so `ne .id ""`
// and `eq .id .name` compared text; failing them as incompatible types
// would break templates that worked.
func asText(a, b reflect.Value) bool {
	switch {
	case a.Type() == bigIntType:
		return b.Kind() == reflect.String && b.Type() != bigIntType
	case b.Type() == bigIntType:
		return a.Kind() == reflect.String
	}
	return false
}

func nilable(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return true
	}
	return false
}

func incompatible(a, b reflect.Value) error {
	return fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
}

// order compares a and b: numbers by value, strings as text.
func order(a, b reflect.Value) (int, error) {
	a, b = indirect(a), indirect(b)
	if c, ok := numericOrder(a, b); ok {
		return c, nil
	}
	if !a.IsValid() || !b.IsValid() {
		return 0, errBadComparison
	}
	if asText(a, b) {
		return cmp.Compare(a.String(), b.String()), nil
	}
	if numeric(a) || numeric(b) || a.Kind() != b.Kind() {
		if !ordered(a) || !ordered(b) {
			return 0, errBadComparison
		}
		return 0, incompatible(a, b)
	}
	if a.Kind() != reflect.String {
		return 0, errBadComparison
	}
	switch x, y := a.String(), b.String(); {
	case x < y:
		return -1, nil
	case x > y:
		return 1, nil
	}
	return 0, nil
}

// ordered reports whether v has a kind lt can order at all.
func ordered(v reflect.Value) bool {
	if numeric(v) {
		return true
	}
	return v.Kind() == reflect.String
}

func ne(a, b reflect.Value) (bool, error) {
	truth, err := eq(a, b)
	return !truth, err
}

func lt(a, b reflect.Value) (bool, error) {
	c, err := order(a, b)
	return c < 0, err
}

func le(a, b reflect.Value) (bool, error) {
	c, err := order(a, b)
	return c <= 0, err
}

func gt(a, b reflect.Value) (bool, error) {
	c, err := order(a, b)
	return c > 0, err
}

func ge(a, b reflect.Value) (bool, error) {
	c, err := order(a, b)
	return c >= 0, err
}

// integerValue is an integer row value for the template: an integer a
// float64 holds exactly (within ±2^53) as integer, else its digits as a
// bigInt, which a float64 would round (1234567890123456789 would print as
// 1.2345678901234568e+18).
func integerValue(i int64) any {
	if i >= -1<<53 && i <= 1<<53 {
		return integer(i)
	}
	return bigInt(strconv.FormatInt(i, 10))
}
