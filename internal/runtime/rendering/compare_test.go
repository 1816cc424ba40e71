package rendering

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// TestCompareBigIntegers: row templates compare integers exactly whatever
// their size or Go type (int64, json.Number, within or beyond ±2^53), with
// integer and float constants and with quoted integer literals; text still
// compares as text, and what the builtins refused is still refused.
func TestCompareBigIntegers(t *testing.T) {
	row := []map[string]any{{
		"a":    json.Number("12345678901234567891"),
		"b":    json.Number("12345678901234567892"),
		"c":    json.Number("9999999999999999999"),
		"m":    int64(1234567890123456789),
		"m1":   int64(1234567890123456790),
		"neg":  json.Number("-12345678901234567891"),
		"n":    int64(7),
		"f":    2.5,
		"s":    json.Number("1.2345678901234567891e19"), // the decoder's digits, written another way
		"id":   "10",
		"id2":  "9",
		"t":    true,
		"name": "abc",
	}}
	cases := []struct{ src, want string }{
		{`{{gt .b .a}} {{lt .a .b}} {{eq .a .b}} {{ne .a .b}} {{ge .a .a}} {{le .b .a}}`, "true true false true true false"},
		{`{{gt .a .c}} {{lt .c .a}}`, "true true"}, // 20 digits against 19: not as text
		{`{{gt .m1 .m}} {{eq .m .m1}}`, "true false"},
		{`{{lt .neg .n}} {{gt .a .n}} {{gt .a 5}} {{gt .a 5.5}} {{lt .neg -5}}`, "true true true true true"},
		{`{{gt .n 5}} {{eq .n 7}} {{lt .f 3}} {{gt .f 2.5}} {{ge .f 2.5}} {{eq .n 7.0}}`, "true true true false true true"},
		{`{{eq .s .a}} {{eq .a "12345678901234567891"}} {{gt .b "12345678901234567891"}} {{lt .a "99999999999999999999"}}`, "true true true true"},
		{`{{eq .a .n .a}} {{eq .n 1 2 7}}`, "true true"},
		{`{{lt .id .id2}} {{eq .id "10"}}`, "true true"}, // text: "10" < "9"
		// A big integer against text that is no integer compares as text,
		// as when it reached templates as its digits (TestBuiltinCompatibility).
		{`{{ne .a ""}} {{eq .a .name}} {{gt .a .name}} {{eq .a "x"}} {{lt "" .m}}`, "true false false false true"},
		{`{{eq .missing .n}} {{eq .missing .other}} {{eq .t true}}`, "false true true"},
		{`{{.a}} {{.m}} {{.neg}} {{.s}}`, "12345678901234567891 1234567890123456789 -12345678901234567891 12345678901234567891"},
	}
	for _, tc := range cases {
		tp, err := Parse("{{range .rows}}" + tc.src + "{{end}}")
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got, err := tp.Render(row)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
	for _, src := range []string{`{{lt .t .t}}`, `{{gt .a .t}}`, `{{eq .a .t}}`, `{{lt .missing 1}}`, `{{eq .n}}`, `{{gt .n .t}}`} {
		tp, err := Parse("{{range .rows}}" + src + "{{end}}")
		if err != nil {
			continue // refused by the checker is refused too
		}
		if got, err := tp.Render(row); err == nil {
			t.Errorf("%s rendered %q; want an error", src, got)
		}
	}
}

// FuzzCompareIntegers: lt, eq and gt on two integer cells agree with
// math/big, whatever their size.
func FuzzCompareIntegers(f *testing.F) {
	for _, p := range [][2]string{{"12345678901234567891", "12345678901234567892"}, {"9", "10"}, {"-9007199254740993", "-9007199254740992"},
		{"9223372036854775807", "9223372036854775808"}, {"0", "-0"}, {"-12345678901234567891", "5"}} {
		f.Add(p[0], p[1])
	}
	tp, err := Parse(`{{range .rows}}{{if lt .a .b}}<{{end}}{{if eq .a .b}}={{end}}{{if gt .a .b}}>{{end}}{{end}}`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		x, ok := new(big.Int).SetString(a, 10)
		y, ok2 := new(big.Int).SetString(b, 10)
		if !ok || !ok2 || len(a) > 200 || len(b) > 200 || strings.ContainsAny(a+b, "_+") {
			return
		}
		row := []map[string]any{{"a": json.Number(x.String()), "b": json.Number(y.String())}}
		if x.IsInt64() {
			row[0]["a"] = x.Int64()
		}
		got, err := tp.Render(row)
		if err != nil {
			t.Fatalf("%s vs %s: %v", x, y, err)
		}
		if want := []string{"<", "=", ">"}[x.Cmp(y)+1]; got != want {
			t.Fatalf("%s vs %s: %q, want %q", x, y, got, want)
		}
	})
}
