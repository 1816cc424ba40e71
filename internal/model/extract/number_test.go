package extract

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// TestNumberCells: how each JSON number literal becomes a cell in a text,
// an integer, a number and an untyped column, and how the row is written
// as JSON. Text keeps the literal; integers never become a rounded float.
func TestNumberCells(t *testing.T) {
	spec := &Spec{Version: Version, Capability: "list", Read: true, Columns: []Column{
		{Name: "text", Path: []string{"v"}, Type: "string"},
		{Name: "uuid", Path: []string{"v"}, Type: "uuid"},
		{Name: "int", Path: []string{"v"}, Type: "integer"},
		{Name: "num", Path: []string{"v"}, Type: "number"},
		{Name: "any", Path: []string{"v"}},
	}}
	type cells = []any
	cases := []struct {
		lit  string
		want cells
		json string // the row as JSON
	}{
		{"12345678901234567891", cells{"12345678901234567891", "12345678901234567891", json.Number("12345678901234567891"), 1.2345678901234567e19, json.Number("12345678901234567891")},
			`["12345678901234567891","12345678901234567891",12345678901234567891,12345678901234567000,12345678901234567891]`},
		{"1234567890123456789", cells{"1234567890123456789", "1234567890123456789", int64(1234567890123456789), 1.2345678901234568e18, int64(1234567890123456789)},
			`["1234567890123456789","1234567890123456789",1234567890123456789,1234567890123456800,1234567890123456789]`},
		{"-9223372036854775809", cells{"-9223372036854775809", "-9223372036854775809", json.Number("-9223372036854775809"), -9.223372036854776e18, json.Number("-9223372036854775809")},
			`["-9223372036854775809","-9223372036854775809",-9223372036854775809,-9223372036854776000,-9223372036854775809]`},
		{"1e3", cells{"1e3", "1e3", int64(1000), 1000.0, 1000.0}, `["1e3","1e3",1000,1000,1000]`},
		{"1.0", cells{"1.0", "1.0", int64(1), 1.0, 1.0}, `["1.0","1.0",1,1,1]`},
		{"-0", cells{"-0", "-0", int64(0), 0.0, int64(0)}, `["-0","-0",0,-0,0]`},
		// 9007199254740993.0 is an integer a float64 cannot hold.
		{"9007199254740993.0", cells{"9007199254740993.0", "9007199254740993.0", int64(9007199254740993), 9007199254740992.0, int64(9007199254740993)},
			`["9007199254740993.0","9007199254740993.0",9007199254740993,9007199254740992,9007199254740993]`},
		{"1.5e19", cells{"1.5e19", "1.5e19", json.Number("15000000000000000000"), 1.5e19, json.Number("15000000000000000000")}, `["1.5e19","1.5e19",15000000000000000000,15000000000000000000,15000000000000000000]`},
		// Untyped columns keep a big integer exact however it is written
		// (they rounded it to a float64 when it had an exponent).
		{"1.2345678901234567891e19", cells{"1.2345678901234567891e19", "1.2345678901234567891e19", json.Number("12345678901234567891"), 1.2345678901234567e19, json.Number("12345678901234567891")},
			`["1.2345678901234567891e19","1.2345678901234567891e19",12345678901234567891,12345678901234567000,12345678901234567891]`},
		{"123456789012345678901e0", cells{"123456789012345678901e0", "123456789012345678901e0", json.Number("123456789012345678901"), 1.2345678901234568e20, json.Number("123456789012345678901")},
			`["123456789012345678901e0","123456789012345678901e0",123456789012345678901,123456789012345680000,123456789012345678901]`},
		{"-12345678901234567891.000", cells{"-12345678901234567891.000", "-12345678901234567891.000", json.Number("-12345678901234567891"), -1.2345678901234567e19, json.Number("-12345678901234567891")},
			`["-12345678901234567891.000","-12345678901234567891.000",-12345678901234567891,-12345678901234567000,-12345678901234567891]`},
		{"2.5", cells{"2.5", "2.5", 2.5, 2.5, 2.5}, `["2.5","2.5",2.5,2.5,2.5]`},
		// Digits far longer than the literal (401 for 1e400) are not
		// expanded: the literal is kept as written.
		{"1e400", cells{"1e400", "1e400", json.Number("1e400"), "1e400", json.Number("1e400")}, `["1e400","1e400",1e400,"1e400",1e400]`},
		{"1.5e400", cells{"1.5e400", "1.5e400", json.Number("1.5e400"), "1.5e400", json.Number("1.5e400")}, `["1.5e400","1.5e400",1.5e400,"1.5e400",1.5e400]`},
		{"1e30", cells{"1e30", "1e30", json.Number("1" + strings.Repeat("0", 30)), 1e30, json.Number("1" + strings.Repeat("0", 30))},
			`["1e30","1e30",1` + strings.Repeat("0", 30) + `,1e+30,1` + strings.Repeat("0", 30) + `]`},
		{"1e999999", cells{"1e999999", "1e999999", json.Number("1e999999"), "1e999999", json.Number("1e999999")}, `["1e999999","1e999999",1e999999,"1e999999",1e999999]`},
		{"1.25e-1", cells{"1.25e-1", "1.25e-1", 0.125, 0.125, 0.125}, `["1.25e-1","1.25e-1",0.125,0.125,0.125]`},
		{"1e-400", cells{"1e-400", "1e-400", 0.0, 0.0, 0.0}, `["1e-400","1e-400",0,0,0]`},
	}
	for _, tc := range cases {
		t.Run(tc.lit, func(t *testing.T) {
			out, aerr := Apply(spec, &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(`[{"v":`+tc.lit+`}]`), Options{})
			if aerr != nil {
				t.Fatal(aerr)
			}
			if got := out.Table.Rows[0]; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("cells %#v\nwant  %#v", got, tc.want)
			}
			if b, err := json.Marshal(out.Table.Rows[0]); err != nil || string(b) != tc.json {
				t.Fatalf("JSON %s (%v)\nwant %s", b, err, tc.json)
			}
		})
	}
}

// TestBigIDFallbackAndMatch: the id fallback and the id match of
// response_preprocess keep a big id's digits too.
func TestBigIDFallbackAndMatch(t *testing.T) {
	cols := []Column{{Name: "id", Path: []string{"id"}, Type: "string"}, {Name: "n", Path: []string{"n"}, Type: "integer"}}
	row := []any{nil, nil}
	(&IDFallback{Column: 0, Keys: []string{"objectID"}}).fillID(cols, row, map[string]any{"objectID": json.Number("12345678901234567891")})
	if row[0] != "12345678901234567891" {
		t.Errorf("text id from fallback = %#v", row[0])
	}
	row = []any{nil, nil}
	(&IDFallback{Column: 1, Keys: []string{"objectID"}}).fillID(cols, row, map[string]any{"objectID": "12345678901234567891"})
	if row[1] != "12345678901234567891" {
		t.Errorf("integer id from text beyond 2^53 = %#v, want the text as an integer column keeps it", row[1])
	}
	// 12345678901234567891 and 12345678901234567892 are one float64.
	if sameScalar(json.Number("12345678901234567891"), "12345678901234567892") {
		t.Error("two big ids that round to one float64 matched")
	}
	if !sameScalar(json.Number("12345678901234567891"), "12345678901234567891") {
		t.Error("a big id did not match its own text")
	}
}

func TestDecimalInteger(t *testing.T) {
	cases := []struct {
		lit            string
		i              int64
		fits, integral bool
	}{
		{"0", 0, true, true},
		{"-0.0e5", 0, true, true},
		{"3.0", 3, true, true},
		{"1e3", 1000, true, true},
		{"1E+3", 1000, true, true},
		{"12.5e1", 125, true, true},
		{"1250e-1", 125, true, true},
		{"2.5", 0, false, false},
		{"1e-1", 0, false, false},
		{"9223372036854775807", 9223372036854775807, true, true},
		{"-9223372036854775808", -9223372036854775808, true, true},
		{"9223372036854775808", 0, false, true},
		{"9007199254740993.0", 9007199254740993, true, true},
		{"1e19", 0, false, true},
		{"1e999999999999", 0, false, true},
		{"1e-999999999999", 0, false, false},
		{"0e999999999999", 0, true, true},
		{"", 0, false, false},
		{"-", 0, false, false},
		{"1.", 0, false, false},
		{".5", 0, false, false},
		{"1e", 0, false, false},
		{"1x", 0, false, false},
		{"00", 0, false, false},
	}
	for _, c := range cases {
		i, fits, integral := decimalInteger(c.lit)
		if i != c.i || fits != c.fits || integral != c.integral {
			t.Errorf("decimalInteger(%q) = %d %v %v, want %d %v %v", c.lit, i, fits, integral, c.i, c.fits, c.integral)
		}
	}
}

// FuzzDecimalInteger checks decimalInteger against math/big on every
// literal whose exponent is small enough to expand.
func FuzzDecimalInteger(f *testing.F) {
	for _, s := range []string{"12345678901234567891", "-9223372036854775809", "9007199254740993.0", "1.5e19", "1e3", "1.0", "-0", "2.5e-3", "100e-2", "00", "1E700"} {
		f.Add(s)
	}
	// A mantissa longer than maxExponent digits whose exponent brings the
	// point back into range (0.1): the exponent must not be clamped before
	// the mantissa's length is taken into account. big.Rat refuses
	// exponents this large, so TestDecimalIntegerLongMantissa checks the
	// values; here the seed guards against panics and the non-JSON rule.
	f.Add("1" + strings.Repeat("0", maxExponent+4) + "e-1048581")
	f.Fuzz(func(t *testing.T, s string) {
		i, fits, integral := decimalInteger(s)
		// A JSON number: valid JSON, starting with a digit or minus, no
		// surrounding space.
		number := json.Valid([]byte(s)) && s != "" && strings.IndexByte("-0123456789", s[0]) >= 0 &&
			!strings.ContainsAny(s, " \t\r\n")
		if !number {
			if integral {
				t.Fatalf("%q is not a JSON number but was found integral", s)
			}
			return
		}
		if e := strings.IndexAny(s, "eE"); e >= 0 {
			// Expand only exponents that stay near the literal's length:
			// big.Rat writes 10^|exp| out in full.
			exp, err := strconv.Atoi(strings.TrimPrefix(s[e+1:], "+"))
			if err != nil || exp > len(s)+9999 || exp < -(len(s)+9999) {
				return
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok && len(s) > maxExponent {
			return // beyond big.Rat's exponent range; see above
		}
		if !ok {
			t.Fatalf("big.Rat refuses %.60q", s)
		}
		if integral != r.IsInt() {
			t.Fatalf("%q: integral %v, big.Rat %v", s, integral, r.IsInt())
		}
		if integral {
			n := r.Num()
			if fits != n.IsInt64() || (fits && i != n.Int64()) {
				t.Fatalf("%q: %d fits %v, big.Int %s", s, i, fits, n)
			}
		}
	})
}

// FuzzUntypedInteger: a number in an untyped place (a column with no
// declared type, or inside an object) that denotes an integer is that
// integer exactly, however it is written: an int64, a float64 holding it
// exactly, or a json.Number of its digits (its literal when they would be
// more than maxExpansion bytes longer: canonicalInteger). big.Rat is the
// oracle.
func FuzzUntypedInteger(f *testing.F) {
	for _, s := range []string{"1.2345678901234567891e19", "123456789012345678901e0", "9007199254740993.0", "1e3", "3.0", "-0",
		"1.5e19", "2.5", "1e400", "-9.223372036854775809e18", "100e-2", "1e22", "1e23", "1e999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || s == "" || strings.IndexByte("-0123456789", s[0]) < 0 || strings.ContainsAny(s, " \t\r\n") {
			return // not a JSON number literal: the decoder never hands one over
		}
		v := plain(json.Number(s))
		if e := strings.IndexAny(s, "eE"); e >= 0 {
			exp, err := strconv.Atoi(strings.TrimPrefix(s[e+1:], "+"))
			if err != nil || exp > len(s)+9999 || exp < -(len(s)+9999) {
				return // big.Rat writes 10^|exp| out in full
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok || !r.IsInt() {
			return
		}
		want := r.Num()
		switch c := v.(type) {
		case int64:
			if !want.IsInt64() || c != want.Int64() {
				t.Fatalf("%q: int64 %d, want %s", s, c, want)
			}
		case float64:
			if got, _ := new(big.Float).SetFloat64(c).Int(nil); got.Cmp(want) != 0 {
				t.Fatalf("%q: float64 %v rounds %s", s, c, want)
			}
		case json.Number:
			if string(c) != want.String() && !(string(c) == s && len(strings.TrimPrefix(want.String(), "-")) > len(s)+maxExpansion) {
				t.Fatalf("%q: json.Number %s, want %s", s, c, want)
			}
		default:
			t.Fatalf("%q: an integer read as %T %v", s, v, v)
		}
	})
}
