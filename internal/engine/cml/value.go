package cml

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/plasmd/plasmd/internal/model/decimal"
)

// object is the value of an object expression. It keeps its keys in the
// order the mapping wrote them, so JSON bodies are reproducible byte for
// byte; values arriving from Vars stay map[string]any and encode sorted.
type object []kv

type kv struct {
	key string
	val any
}

// get returns the value of key and whether it is present.
func (o object) get(key string) (any, bool) {
	for _, e := range o {
		if e.key == key {
			return e.val, true
		}
	}
	return nil, false
}

// with returns o with key set to val, replacing an existing entry in place
// of appending so a key never appears twice.
func (o object) with(key string, val any) object {
	for i, e := range o {
		if e.key == key {
			o[i].val = val
			return o
		}
	}
	return append(o, kv{key, val})
}

// asObject returns an object view of v: an object expression's value as is,
// a map (from Vars or a const) copied in sorted key order so that mutating
// the result never touches the caller's data.
func asObject(v any) (object, bool) {
	switch t := v.(type) {
	case object:
		return t, true
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(object, 0, len(keys))
		for _, k := range keys {
			o = append(o, kv{k, t[k]})
		}
		return o, true
	}
	return nil, false
}

// asList returns the elements of an array value.
func asList(v any) ([]any, bool) {
	switch t := v.(type) {
	case []any:
		return t, true
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// number is a numeric value normalised from any of the Go number types a
// value may arrive as (float64 from JSON, int64 from native callers,
// json.Number from a UseNumber decoder).
type number struct {
	i     int64
	f     float64
	isInt bool
	// big is the canonical digits of an integer beyond int64 (f holds its
	// float64 rounding): compared and written by its digits, never by f,
	// which cannot tell 12345678901234567892 from 12345678901234567891.
	big string
}

// digits is n's canonical integer text, or "" when n is not an integer.
// An integral float64 is written exactly (FormatFloat with a fixed
// precision is exact). extract's num.digits mirrors this.
func (n number) digits() string {
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

func (n number) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

var errBadNumber = errors.New("not a finite number")

// ErrIntegerTooLong marks an integer with more digits than
// decimal.MaxDigits in a path, query or header: written through a float64
// it would be another number, and written out it is no id.
var ErrIntegerTooLong = errors.New("integer too long to write exactly")

// asNumber reports whether v is a number and normalises it.
func asNumber(v any) (number, bool, error) {
	switch t := v.(type) {
	case int:
		return number{i: int64(t), isInt: true}, true, nil
	case int8:
		return number{i: int64(t), isInt: true}, true, nil
	case int16:
		return number{i: int64(t), isInt: true}, true, nil
	case int32:
		return number{i: int64(t), isInt: true}, true, nil
	case int64:
		return number{i: t, isInt: true}, true, nil
	case uint:
		return fromUint(uint64(t)), true, nil
	case uint8:
		return number{i: int64(t), isInt: true}, true, nil
	case uint16:
		return number{i: int64(t), isInt: true}, true, nil
	case uint32:
		return number{i: int64(t), isInt: true}, true, nil
	case uint64:
		return fromUint(t), true, nil
	case float32:
		return fromFloat(float64(t))
	case float64:
		return fromFloat(t)
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return number{i: i, isInt: true}, true, nil
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if digits, integral, derr := decimal.Integer(string(t)); integral && derr == nil {
			if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
				return number{i: i, isInt: true}, true, nil // 3.0, 1e3
			}
			return number{f: f, big: digits}, true, nil
		}
		if err != nil {
			return number{}, true, fmt.Errorf("number %q: %w", string(t), errBadNumber)
		}
		return fromFloat(f)
	}
	return number{}, false, nil
}

func fromUint(u uint64) number {
	if u > math.MaxInt64 {
		return number{f: float64(u), big: strconv.FormatUint(u, 10)}
	}
	return number{i: int64(u), isInt: true}
}

func fromFloat(f float64) (number, bool, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return number{}, true, errBadNumber
	}
	return number{f: f}, true, nil
}

// text is the canonical query/path/header form of a number: integers
// without exponent, floats in the shortest decimal form without exponent.
func (n number) text() string {
	if n.big != "" {
		return n.big
	}
	if n.isInt {
		return strconv.FormatInt(n.i, 10)
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64)
}

// scalarText is the canonical text of a scalar value. isScalar is false for
// nil, arrays and objects.
func scalarText(v any) (s string, isScalar bool, err error) {
	switch t := v.(type) {
	case string:
		return t, true, nil
	case bool:
		if t {
			return "true", true, nil
		}
		return "false", true, nil
	case json.Number:
		// An integer beyond int64 (a big id decoded exactly) is written
		// with its canonical digits, however the body wrote it
		// (12345678901234567891.0, 1.2345678901234567891e19): through a
		// float64 it would name another row. One too long to write out
		// (1e999999) is refused rather than rounded.
		if _, integral, err := decimal.Integer(string(t)); integral && err != nil {
			return "", true, fmt.Errorf("number %.40q: %w", string(t), ErrIntegerTooLong)
		}
	}
	n, ok, err := asNumber(v)
	if !ok {
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	return n.text(), true, nil
}

// kindOf names a value's kind, with its article, for error messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case object, map[string]any:
		return "an object"
	case []any, []string:
		return "an array"
	}
	if _, ok, _ := asNumber(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a value of type %T", v)
}

// Equal reports whether a and b are deeply equal values, comparing numbers
// numerically whatever their Go type (so 1, int64(1), 1.0 and
// json.Number("1") are all equal) and objects regardless of key order.
// Nesting beyond the evaluation depth cap compares unequal rather than
// recursing without bound.
func Equal(a, b any) bool { return equal(a, b, 0) }

func equal(a, b any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if na, ok, err := asNumber(a); ok {
		nb, ok2, err2 := asNumber(b)
		if !ok2 || err != nil || err2 != nil {
			return false
		}
		if na.big != "" || nb.big != "" {
			// Exactly; extract.bigEqual mirrors this.
			return na.digits() == nb.digits() && na.digits() != ""
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
	}
	if la, ok := asList(a); ok {
		lb, ok := asList(b)
		if !ok || len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !equal(la[i], lb[i], depth+1) {
				return false
			}
		}
		return true
	}
	if oa, ok := asObject(a); ok {
		ob, ok := asObject(b)
		if !ok || len(oa) != len(ob) {
			return false
		}
		for _, e := range oa {
			v, ok := ob.get(e.key)
			if !ok || !equal(e.val, v, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// truthy is the CML notion of truth used by {bool: expr}: null, false,
// zero, "" and empty collections are false.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case object:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	if l, ok := asList(v); ok {
		return len(l) > 0
	}
	if n, ok, err := asNumber(v); ok {
		return err == nil && n.float() != 0
	}
	return true
}
