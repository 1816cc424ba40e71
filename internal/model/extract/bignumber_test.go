package extract

import (
	"encoding/json"
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
