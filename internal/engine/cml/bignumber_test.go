package cml

import (
	"encoding/json"
	"errors"
	"testing"
)

// An integer beyond int64 however the body wrote it is written with its
// canonical digits; one too long to write is a typed error, never a float.
func TestScalarTextBigIntegerForms(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
		err  error
	}{
		{json.Number("12345678901234567891"), "12345678901234567891", nil},
		{json.Number("12345678901234567891.0"), "12345678901234567891", nil},
		{json.Number("1.2345678901234567891e19"), "12345678901234567891", nil},
		{json.Number("-1.2345678901234567891E+19"), "-12345678901234567891", nil},
		{json.Number("3.0"), "3", nil},
		{json.Number("2.5"), "2.5", nil},
		{uint64(18446744073709551615), "18446744073709551615", nil},
		{json.Number("1e999999"), "", ErrIntegerTooLong},
	} {
		s, scalar, err := scalarText(c.in)
		if s != c.want || !scalar || !errors.Is(err, c.err) {
			t.Errorf("scalarText(%#v) = %q %v %v, want %q %v", c.in, s, scalar, err, c.want, c.err)
		}
	}
}

// Equal compares integers beyond int64 exactly: a cursor that moves by less
// than a float64 ULP has moved.
func TestEqualBigIntegers(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{json.Number("12345678901234567892"), json.Number("12345678901234567891"), false},
		{json.Number("12345678901234567891"), json.Number("12345678901234567891.0"), true},
		{json.Number("12345678901234567891"), json.Number("1.2345678901234567891e19"), true},
		{json.Number("18446744073709551615"), uint64(18446744073709551615), true},
		{json.Number("18446744073709551616"), float64(18446744073709551616), true},
		{json.Number("12345678901234567891"), float64(12345678901234567891), false},
		{json.Number("12345678901234567891"), int64(1), false},
		{json.Number("12345678901234567891"), "12345678901234567891", false},
	} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Equal(c.b, c.a); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

// A body carries an integer beyond int64 with its digits, not a float64.
func TestAppendJSONBigInteger(t *testing.T) {
	b, err := appendJSON(nil, []any{json.Number("12345678901234567891.0"), uint64(18446744073709551615)}, 0)
	if err != nil || string(b) != "[12345678901234567891,18446744073709551615]" {
		t.Errorf("appendJSON = %s, %v", b, err)
	}
}
