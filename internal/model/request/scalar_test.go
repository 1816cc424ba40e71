package request

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScalarIntegerForms: a json.Number that denotes an integer is filled
// natively as its canonical digits however it is written (the guest's
// compiler writes the same; TestTemplateMatchesCompiler compares them);
// one that does not, or is too long to write, declines to the guest,
// which owns the error.
func TestScalarIntegerForms(t *testing.T) {
	cases := []struct {
		in   string
		want string // "" declines
	}{
		{"42", "42"}, {"1e3", "1000"}, {"1E+3", "1000"}, {"10.0", "10"}, {"-0", "0"}, {"-0.0", "0"}, {"0e5", "0"},
		{"12345678901234567891", "12345678901234567891"}, {"1.2345678901234567891e19", "12345678901234567891"},
		{"123456789012345678901e0", "123456789012345678901"}, {"-9.223372036854775809e18", "-9223372036854775809"},
		{"2.5", ""}, {"1e-3", ""}, {"10.01", ""}, {"1e999999", ""}, {"012", ""}, {"1e", ""}, {"", ""}, {"NaN", ""}, {" 1", ""},
	}
	for _, tc := range cases {
		got, ok := scalar(json.Number(tc.in))
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("scalar(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if _, ok := scalar(json.Number("1" + strings.Repeat("0", 5000))); ok {
		t.Error("an integer of 5001 digits was filled; the guest refuses it")
	}
}

// FuzzScalarNumber: whatever json.Number scalar accepts is canonical
// integer text, and is accepted again as itself.
func FuzzScalarNumber(f *testing.F) {
	for _, s := range []string{"1e3", "10.0", "-0", "1.5e19", "2.5", "012", "1e999999", "-1.0e1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := scalar(json.Number(s))
		if !ok {
			return
		}
		if !json.Valid([]byte(s)) {
			t.Fatalf("%q is not a JSON number but filled as %q", s, got)
		}
		again, ok := scalar(json.Number(got))
		if !ok || again != got || strings.ContainsAny(got, ".eE+") || strings.HasPrefix(got, "-0") {
			t.Fatalf("%q filled as %q, not canonical (%q, %v)", s, got, again, ok)
		}
	})
}
