package cml

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestIntegerParameterForms: a parameter declared integer takes any number
// that denotes an integer exactly, written as its canonical digits; a
// number that does not (or one too long to write) is a compile error
// naming the parameter, never written as it is. Text and other
// parameters are left alone.
func TestIntegerParameterForms(t *testing.T) {
	cat := testCatalog(catalog.KindQuery, &catalog.Mapping{
		Path:  []catalog.Segment{lit("items")},
		Query: ob("n", vr("n"), "q", vr("q")),
	}, catalog.Auth{Scheme: "none"})
	cat.Capabilities["cap"].Parameters = []catalog.Parameter{{Name: "n", ValueRef: "int"}, {Name: "q", ValueRef: "str"}}
	cases := []struct {
		n     any
		query string // "" for an error
		err   string
	}{
		{json.Number("1e3"), "n=1000", ""},
		{json.Number("10.0"), "n=10", ""},
		{json.Number("-0"), "n=0", ""},
		{json.Number("1.2345678901234567891e19"), "n=12345678901234567891", ""},
		{json.Number("42"), "n=42", ""},
		{float64(3), "n=3", ""},
		{int64(-7), "n=-7", ""},
		{[]any{json.Number("1e1"), json.Number("2.0")}, "n=10&n=2", ""},
		{"text", "n=text", ""},
		{json.Number("2.5"), "", "parameter n is an integer; 2.5 is not a whole number"},
		{json.Number("1e-3"), "", "parameter n is an integer; 1e-3 is not a whole number"},
		{2.5, "", "parameter n is an integer; 2.5 is not a whole number"},
		{[]any{json.Number("1"), json.Number("1.5")}, "", "1.5 is not a whole number"},
		{json.Number("1e999999"), "", "1e999999 has more than 4096 digits"},
	}
	for _, tc := range cases {
		out, aerr := Compile(cat, &abi.CompileRequest{Capability: "cap", Vars: map[string]any{"n": tc.n, "q": json.Number("2.5")}})
		if tc.err != "" {
			if aerr == nil || aerr.Code != abi.CodeCompile || !strings.Contains(aerr.Message, tc.err) {
				t.Errorf("%#v: %v, %+v; want a compile error with %q", tc.n, out, aerr, tc.err)
			}
			continue
		}
		if aerr != nil {
			t.Errorf("%#v: %v", tc.n, aerr)
			continue
		}
		if want := "?" + tc.query + "&q=2.5"; !strings.HasSuffix(out.URL, want) {
			t.Errorf("%#v: URL %s, want it to end %s", tc.n, out.URL, want)
		}
	}
}
