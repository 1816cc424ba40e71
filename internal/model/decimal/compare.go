package decimal

import (
	"cmp"
	"strings"
)

// Compare orders two JSON number literals by the values they denote,
// exactly: 10.0000000000000000001 is above 10 and 1e21 above
// 999999999999999999999, where a float64 rounds them together. It reads
// Parse's digits and decimal point and expands nothing, so it costs the
// literals' length whatever their exponents. ok is false when either is
// no JSON number, or when its decimal point lies beyond MaxExponent, where
// Parse's clamp may have moved it (1e9999999 and 1e99999999 would compare
// equal).
func Compare(a, b string) (int, bool) {
	an, am, ap, ok := Parse(a)
	if !ok || ap > MaxExponent || ap < -MaxExponent {
		return 0, false
	}
	bn, bm, bp, ok := Parse(b)
	if !ok || bp > MaxExponent || bp < -MaxExponent {
		return 0, false
	}
	sa, sb := signOf(an, am), signOf(bn, bm)
	if sa != sb || sa == 0 {
		return cmp.Compare(sa, sb), true
	}
	// Same sign, both non-zero: 0.mant × 10^point with mant starting with
	// a non-zero digit, so a larger point is a larger magnitude, and at
	// equal points the digits decide (without trailing zeros, a prefix is
	// the smaller).
	r := cmp.Compare(ap, bp)
	if r == 0 {
		r = strings.Compare(am, bm)
	}
	return r * sa, true
}

// signOf is -1, 0 or 1 for a parsed literal (mant "" is zero, -0 too).
func signOf(neg bool, mant string) int {
	switch {
	case mant == "":
		return 0
	case neg:
		return -1
	}
	return 1
}
