package decimal

import (
	"math/big"
	"strings"
	"testing"
)

// TestCompare orders JSON number literals exactly, checked against
// math/big's rationals where they are small enough to build.
func TestCompare(t *testing.T) {
	lits := []string{
		"0", "-0", "0.0e5", "1", "-1", "1.0", "10", "1e1", "9.99", "10.0000000000000000001",
		"12345678901234567891", "12345678901234567890.5", "1.2345678901234567891e19", "-12345678901234567891",
		"0.1", "0.10", "1e-1", "0.09", "-0.1", "-0.09", "5.5", "10.25", "1e21", "999999999999999999999",
		"123.5", "10000000000000000000", "9.5", "-2.5", "-2.25", "2e-3", "0.002", "1E+2", "100",
	}
	for _, a := range lits {
		for _, b := range lits {
			got, ok := Compare(a, b)
			ra, _ := new(big.Rat).SetString(a)
			rb, _ := new(big.Rat).SetString(b)
			if want := ra.Cmp(rb); !ok || got != want {
				t.Errorf("Compare(%s, %s) = %d %v, want %d", a, b, got, ok, want)
			}
		}
	}
	for _, c := range [][2]string{{"01", "1"}, {"1", "abc"}, {"", "0"}, {"1.", "1"}, {"1e9999999", "1e99999999"}} {
		if _, ok := Compare(c[0], c[1]); ok {
			t.Errorf("Compare(%q, %q) is ok, want refused", c[0], c[1])
		}
	}
	// Exact but far beyond a float64, and cheap: no expansion.
	if c, ok := Compare("1e1000", "9"+strings.Repeat("9", 999)); !ok || c != 1 {
		t.Errorf("1e1000 vs 10^1000-1: %d %v", c, ok)
	}
}

// FuzzCompare: Compare agrees with math/big wherever both read the
// literals (short ones, so big.Rat stays cheap), and is antisymmetric.
func FuzzCompare(f *testing.F) {
	f.Add("10.25", "5.5")
	f.Add("-0", "0.0e3")
	f.Add("1e21", "999999999999999999999")
	f.Fuzz(func(t *testing.T, a, b string) {
		c, ok := Compare(a, b)
		d, ok2 := Compare(b, a)
		if ok != ok2 || c != -d {
			t.Fatalf("Compare(%q, %q) = %d %v but reversed %d %v", a, b, c, ok, d, ok2)
		}
		if !ok || len(a) > 40 || len(b) > 40 || strings.ContainsAny(a+b, "eE") {
			return
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if ra == nil || rb == nil {
			t.Fatalf("Compare read %q and %q, math/big does not", a, b)
		}
		if want := ra.Cmp(rb); c != want {
			t.Fatalf("Compare(%q, %q) = %d, math/big says %d", a, b, c, want)
		}
	})
}
