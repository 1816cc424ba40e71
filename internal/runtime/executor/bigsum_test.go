package executor

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// sum over whole numbers is exact: integers beyond int64 and int64 sums
// that overflow become a json.Number of the exact digits, never a rounded
// float64 or a wrapped int64.
func TestSumWholeNumbersExact(t *testing.T) {
	for _, c := range []struct {
		name string
		rows [][]any
		want any
	}{
		{"big plus one", [][]any{{json.Number("12345678901234567891")}, {int64(1)}}, json.Number("12345678901234567892")},
		{"int64 overflow", [][]any{{int64(math.MaxInt64)}, {int64(1)}}, json.Number("9223372036854775808")},
		{"int64 underflow", [][]any{{int64(math.MinInt64)}, {int64(-1)}}, json.Number("-9223372036854775809")},
		{"back into int64", [][]any{{json.Number("9223372036854775808")}, {int64(-1)}}, int64(math.MaxInt64)},
		{"overflow then back", [][]any{{int64(math.MaxInt64)}, {int64(1)}, {int64(-2)}}, int64(math.MaxInt64 - 1)},
		{"small", [][]any{{int64(2)}, {json.Number("3")}, {nil}}, int64(5)},
		{"fraction", [][]any{{int64(2)}, {1.5}}, 3.5},
	} {
		in := abi.Table{Columns: []string{"amount"}, Rows: c.rows}
		got, err := applyCompute(in, plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "s", Fn: "sum", Field: "amount"}}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v := got.Rows[0][0]; !reflect.DeepEqual(v, c.want) {
			t.Errorf("%s: sum = %#v (%T), want %#v", c.name, v, v, c.want)
		}
	}
}
