package decimal

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestInteger(t *testing.T) {
	long := "1" + strings.Repeat("0", MaxExponent+4)
	for _, c := range []struct {
		lit, digits string
		integral    bool
		err         error
	}{
		{"12345678901234567891", "12345678901234567891", true, nil},
		{"12345678901234567891.0", "12345678901234567891", true, nil},
		{"1.2345678901234567891e19", "12345678901234567891", true, nil},
		{"-1.2345678901234567891E+19", "-12345678901234567891", true, nil},
		{"123456789012345678910e-1", "12345678901234567891", true, nil},
		{"-0", "0", true, nil},
		{"0.0e5", "0", true, nil},
		{"1e3", "1000", true, nil},
		{"2.5", "", false, nil},
		{"1e-1", "", false, nil},
		{long + "e-1048581", "", false, nil},
		{long + "e-1048580", "1", true, nil},
		{long + "e-1048576", "10000", true, nil},
		{"1e999999", "", true, ErrTooLong},
		{"1e99999999999999999999", "", true, ErrTooLong},
		{"01", "", false, nil},
		{"1.", "", false, nil},
		{"abc", "", false, nil},
		{"", "", false, nil},
	} {
		digits, integral, err := Integer(c.lit)
		if digits != c.digits || integral != c.integral || !errors.Is(err, c.err) {
			t.Errorf("Integer(%.40q) = %q %v %v, want %q %v %v", c.lit, digits, integral, err, c.digits, c.integral, c.err)
		}
	}
}

// FuzzInteger checks Integer against math/big on every literal big.Rat
// accepts with an exponent small enough to expand.
func FuzzInteger(f *testing.F) {
	for _, s := range []string{"12345678901234567891", "1.5e19", "-0.0", "1e3", "2.5e-3", "100e-2", "1E700", "1e5000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		digits, integral, err := Integer(s)
		if _, _, _, ok := Parse(s); !ok {
			if integral {
				t.Fatalf("%q is not a JSON number but was found integral", s)
			}
			return
		}
		if e := strings.IndexAny(s, "eE"); e >= 0 && len(s)-e > 6 {
			return // exponent too large to expand here
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return
		}
		if integral != r.IsInt() {
			t.Fatalf("%q: integral %v, big.Rat %v", s, integral, r.IsInt())
		}
		if !integral {
			return
		}
		want := r.Num().String()
		if tooLong := len(strings.TrimPrefix(want, "-")) > MaxDigits; tooLong != errors.Is(err, ErrTooLong) {
			t.Fatalf("%q: err %v for %d digits", s, err, len(want))
		}
		if err == nil && digits != want {
			t.Fatalf("%q: digits %s, big.Int %s", s, digits, want)
		}
	})
}

// TestCompact: canonical digits while they stay within MaxExpansion bytes
// of the literal, the literal as written past that, nothing for a
// non-integer.
func TestCompact(t *testing.T) {
	for _, c := range []struct {
		lit, form string
		integral  bool
		err       error
	}{
		{"1.2345678901234567891e19", "12345678901234567891", true, nil},
		{"12345678901234567891.0", "12345678901234567891", true, nil},
		{"-0", "0", true, nil},
		{"1e35", "1" + strings.Repeat("0", 35), true, nil}, // 36 digits: 4+32
		{"1e36", "1e36", true, nil},
		{"-2.5e100", "-2.5e100", true, nil},
		{"1e4095", "1e4095", true, nil},
		{"1e999999", "1e999999", true, ErrTooLong},
		{"2.5", "", false, nil},
		{"01", "", false, nil},
	} {
		form, integral, err := Compact(c.lit)
		if form != c.form || integral != c.integral || !errors.Is(err, c.err) {
			t.Errorf("Compact(%q) = %.50q %v %v, want %.50q %v %v", c.lit, form, integral, err, c.form, c.integral, c.err)
		}
	}
}
