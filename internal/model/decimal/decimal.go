// Package decimal reads JSON number literals exactly, without a float64:
// whether a literal denotes an integer, and that integer's canonical
// digits. The decoder (internal/model/extract) and the request compiler
// (internal/engine/cml) share it so that a big id is judged, compared and
// written the same way on both sides of a round trip.
package decimal

import (
	"errors"
	"strings"
)

// MaxExponent bounds, together with the literal's own length, the
// exponents Parse reasons about exactly; beyond that only the sign of the
// exponent matters (the value is huge or tiny), so no literal is expanded.
const MaxExponent = 1 << 20

// MaxDigits bounds the canonical digits Integer writes out: 1e999999 is an
// integer, but a million digits in a URL would be a denial of service, not
// an id.
const MaxDigits = 4096

// ErrTooLong marks an integer literal whose digits exceed MaxDigits.
var ErrTooLong = errors.New("integer has too many digits to write exactly")

// Parse reads a JSON number literal as sign, significant digits and
// decimal point: the value is (neg ? -1 : 1) × 0.mant × 10^point, with no
// leading or trailing zeros in mant (mant is "" for zero). ok is false for
// anything outside JSON's grammar. A mantissa longer than MaxExponent
// digits keeps its point exact: the exponent clamp grows with the literal
// (1 followed by 2^20 zeros, then e-1048581, is 0.1).
func Parse(s string) (neg bool, mant string, point int, ok bool) {
	neg = strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	limit := MaxExponent + len(s)
	intPart, rest := leadingDigits(s)
	if intPart == "" || (intPart[0] == '0' && len(intPart) > 1) {
		return false, "", 0, false
	}
	var frac string
	if strings.HasPrefix(rest, ".") {
		if frac, rest = leadingDigits(rest[1:]); frac == "" {
			return false, "", 0, false
		}
	}
	exp := 0
	if rest != "" {
		if rest[0] != 'e' && rest[0] != 'E' {
			return false, "", 0, false
		}
		rest = rest[1:]
		sign := 1
		if rest != "" && (rest[0] == '+' || rest[0] == '-') {
			if rest[0] == '-' {
				sign = -1
			}
			rest = rest[1:]
		}
		digits, tail := leadingDigits(rest)
		if digits == "" || tail != "" {
			return false, "", 0, false
		}
		for _, c := range digits {
			if exp = exp*10 + int(c-'0'); exp > limit {
				exp = limit
				break
			}
		}
		exp *= sign
	}
	mant = intPart + frac
	point = len(intPart) + exp
	for mant != "" && mant[0] == '0' {
		mant, point = mant[1:], point-1
	}
	mant = strings.TrimRight(mant, "0")
	return neg, mant, point, true
}

// Integer reports whether the JSON number literal s denotes an integer and,
// when it does, writes its canonical digits (optional minus, no leading
// zero, no fraction or exponent; zero is "0"). An integer of more than
// MaxDigits digits is integral but gets ErrTooLong instead of its digits.
func Integer(s string) (digits string, integral bool, err error) {
	neg, mant, point, ok := Parse(s)
	if !ok {
		return "", false, nil
	}
	if mant == "" {
		return "0", true, nil
	}
	if point < len(mant) {
		return "", false, nil
	}
	if point > MaxDigits {
		return "", true, ErrTooLong
	}
	return written(neg, mant, point), true, nil
}

// written is the integer ±0.mant × 10^point (point >= len(mant)) in digits.
func written(neg bool, mant string, point int) string {
	digits := mant + strings.Repeat("0", point-len(mant))
	if neg {
		digits = "-" + digits
	}
	return digits
}

func leadingDigits(s string) (digits, rest string) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return s[:n], s[n:]
}

// MaxExpansion bounds how many bytes longer than its literal a stored
// integer's canonical digits may be (Compact).
const MaxExpansion = 32

// Compact is the form a decoded integer literal is kept in, shared by the
// decoder's cells (internal/model/extract) and row templates
// (internal/runtime/rendering) so that a value is stored alike wherever it
// is read: its canonical digits, so that 12345678901234567891.0 and
// 1.2345678901234567891e19 are one value, only while they are at most
// MaxExpansion bytes longer than s. Past that s is kept as written, still
// exact (Parse and math/big read it): 1e4095 would otherwise turn 6 bytes
// of a body into 4096 bytes of every row, and a body of such literals into
// hundreds of megabytes before any output bound is checked. integral is
// false for a literal that is not an integer (form is then ""), and err is
// ErrTooLong for one of more than MaxDigits digits (form is s).
func Compact(s string) (form string, integral bool, err error) {
	neg, mant, point, ok := Parse(s)
	switch {
	case !ok || (mant != "" && point < len(mant)):
		return "", false, nil
	case mant == "":
		return "0", true, nil
	case point > MaxDigits:
		return s, true, ErrTooLong
	case point > len(s)+MaxExpansion:
		return s, true, nil
	}
	return written(neg, mant, point), true, nil
}
