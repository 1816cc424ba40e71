package executor

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// TestBigIntegerCells: integers beyond int64 (json.Number from the
// decoder) compare exactly in filters and sorts; two that one float64
// holds are still different values.
func TestBigIntegerCells(t *testing.T) {
	a, b := json.Number("12345678901234567891"), json.Number("12345678901234567892")
	cases := []struct {
		x, y any
		want int
	}{
		{a, b, -1},
		{b, a, 1},
		{a, json.Number("12345678901234567891"), 0},
		{json.Number("-12345678901234567891"), json.Number("-12345678901234567892"), 1},
		{json.Number("-1"), a, -1},
		{int64(9223372036854775807), json.Number("9223372036854775808"), -1},
		{json.Number("-9223372036854775809"), int64(-9223372036854775808), -1},
		{json.Number("-0"), int64(0), 0},
		{json.Number("99"), json.Number("100"), -1},
	}
	for _, c := range cases {
		if got := compareValues(c.x, c.y); got != c.want {
			t.Errorf("compareValues(%v, %v) = %d, want %d", c.x, c.y, got, c.want)
		}
		if got := equalValues(c.x, c.y); got != (c.want == 0) {
			t.Errorf("equalValues(%v, %v) = %v", c.x, c.y, got)
		}
	}
	// Non-integers still compare as numbers.
	if compareValues(json.Number("1e3"), int64(999)) != 1 || !equalValues(json.Number("1.0"), int64(1)) {
		t.Error("json.Number with exponent or fraction no longer compares numerically")
	}
	rows := [][]any{{b}, {int64(5)}, {a}, {json.Number("-12345678901234567891")}}
	tab, err := shape(abi.Table{Columns: []string{"v"}, Rows: rows}, &plan.Node{Transforms: []plan.Transform{{Kind: plan.TSort, Field: "v", Desc: true}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{b, a, int64(5), json.Number("-12345678901234567891")}
	if got := column(tab, "v"); !reflect.DeepEqual(got, want) {
		t.Errorf("sort desc: %v, want %v", got, want)
	}
}
