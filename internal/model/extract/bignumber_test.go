package extract

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// A big-integer cursor that moves by less than a float64 ULP (2048 at 1e19)
// has moved: paging goes on.
func TestBigCursorMoves(t *testing.T) {
	s := okSpec()
	s.Paging = &Paging{Location: "query", Params: []Param{{Name: "after", FromResponse: "next"}}}
	for _, c := range []struct {
		next, after string
		moves       bool
	}{
		{"12345678901234567892", "12345678901234567891", true},
		{"12345678901234567891", "12345678901234567891", false},
	} {
		body := `{"items":[{"id":1}],"next":` + c.next + `}`
		out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200,
			Page: map[string]any{"after": json.Number(c.after)}}, []byte(body), Options{})
		if aerr != nil {
			t.Fatal(aerr)
		}
		if (out.Next != nil) != c.moves {
			t.Errorf("cursor %s after %s: next %v, want moved=%v", c.next, c.after, out.Next, c.moves)
		}
	}
}

// An integer beyond int64 written with a fraction or an exponent becomes
// the cell of its canonical digits; one too long to expand keeps its text.
func TestAsIntegerCanonical(t *testing.T) {
	for lit, want := range map[string]any{
		"12345678901234567891.0":     json.Number("12345678901234567891"),
		"1.2345678901234567891e19":   json.Number("12345678901234567891"),
		"-1.2345678901234567891E+19": json.Number("-12345678901234567891"),
		"12345678901234567891":       json.Number("12345678901234567891"),
		"1e999999":                   json.Number("1e999999"),
		"3.0":                        int64(3),
	} {
		if got := asInteger(json.Number(lit)); got != want {
			t.Errorf("asInteger(%s) = %#v, want %#v", lit, got, want)
		}
	}
}

// TestIntegerColumnText: an integer column takes text that is exactly an
// integer literal within ±2^53 as that integer (kept as text, "42" sorted
// before "5"); larger integer text stays text, as the backend wrote it for
// clients whose numbers are doubles (a JavaScript client would round
// 1234567890123456789012 silently); other text stays text. Text columns
// keep it as it is.
func TestIntegerColumnText(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{"42", int64(42)}, {"-7", int64(-7)}, {"-0", int64(0)},
		{"9007199254740992", int64(9007199254740992)}, {"-9007199254740992", int64(-9007199254740992)},
		{"9007199254740993", "9007199254740993"}, {"-9007199254740993", "-9007199254740993"},
		{"1234567890123456789", "1234567890123456789"},
		{"12345678901234567891", "12345678901234567891"},
		{"-9223372036854775809", "-9223372036854775809"},
		{"042", "042"}, {"+42", "+42"}, {"1e3", "1e3"}, {"4.0", "4.0"}, {" 42", " 42"}, {"abc", "abc"}, {"", ""},
	}
	for _, tc := range cases {
		if got := coerce(tc.in, "integer"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("integer column %q = %#v, want %#v", tc.in, got, tc.want)
		}
		if got := coerce(tc.in, "string"); got != tc.in {
			t.Errorf("text column %q = %#v", tc.in, got)
		}
	}
}
