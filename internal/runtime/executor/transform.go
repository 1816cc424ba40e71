package executor

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// shape applies a node's host-side filters, then its transforms in order.
func shape(t abi.Table, n *plan.Node, d dateCols) (abi.Table, error) {
	t, _, err := shapeLimited(t, n, d)
	return t, err
}

// shapeLimited is shape that also reports whether a .limit dropped rows. A
// continuation must not be offered then: the next page would silently skip
// the rows the limit cut from this one. d is the date columns of t
// (datecompare.go), followed through each transform.
func shapeLimited(t abi.Table, n *plan.Node, d dateCols) (abi.Table, bool, error) {
	limited := false
	t, err := applyFilters(t, n.Filters, d)
	if err != nil {
		return t, false, err
	}
	for _, tr := range n.Transforms {
		dIn := d
		d = d.after(tr)
		switch tr.Kind {
		case plan.TLimit:
			if tr.N >= 0 && len(t.Rows) > tr.N {
				t.Rows = t.Rows[:tr.N]
				limited = true
			}
		case plan.TSort:
			rows, err := sortRows(t, tr, dIn)
			if err != nil {
				return t, false, err
			}
			t.Rows = rows
		case plan.TProject:
			idx := make([]int, len(tr.Fields))
			for i, f := range tr.Fields {
				if idx[i] = t.Col(f); idx[i] < 0 {
					return t, false, fmt.Errorf("projection: no field %q in %s", f, strings.Join(t.Columns, ", "))
				}
			}
			rows := make([][]any, len(t.Rows))
			for i, row := range t.Rows {
				out := make([]any, len(idx))
				for j, c := range idx {
					out[j] = row[c]
				}
				rows[i] = out
			}
			t = abi.Table{Columns: slices.Clone(tr.Fields), Rows: rows}
		case plan.TFilter:
			var err error
			if t, err = applyFilters(t, tr.Preds, dIn); err != nil {
				return t, false, err
			}
		default:
			var err error
			if t, err = applyCompute(t, tr, dIn); err != nil {
				return t, false, err
			}
		}
	}
	return t, limited, nil
}

func applyFilters(t abi.Table, preds []plan.Pred, d dateCols) (abi.Table, error) {
	if len(preds) == 0 {
		return t, nil
	}
	dp, err := compileDatePreds(preds, d)
	if err != nil {
		return t, err
	}
	cols := make([]int, len(preds))
	for i, p := range preds {
		if cols[i] = t.Col(p.Field); cols[i] < 0 {
			return t, fmt.Errorf("filter: no field %q in %s", p.Field, strings.Join(t.Columns, ", "))
		}
	}
	var rows [][]any
	for r, row := range t.Rows {
		keep := true
		for i, p := range preds {
			ok, err := dp.test(i, row[cols[i]], p, r)
			if err != nil {
				return t, err
			}
			if !ok {
				keep = false
				break
			}
		}
		if keep {
			rows = append(rows, row)
		}
	}
	return abi.Table{Columns: t.Columns, Rows: rows}, nil
}

func match(v any, op string, want any) bool {
	switch op {
	case "=":
		return equalValues(v, want)
	case "!=":
		return !equalValues(v, want)
	case "~":
		return strings.Contains(strings.ToLower(text(v)), strings.ToLower(text(want)))
	}
	if v == nil || want == nil {
		return false
	}
	c, ok := compareQuotedNumber(v, want)
	if !ok {
		c = compareValues(v, want)
	}
	switch op {
	case ">":
		return c > 0
	case "<":
		return c < 0
	case ">=":
		return c >= 0
	case "<=":
		return c <= 0
	}
	return false
}

func equalValues(a, b any) bool {
	if c, ok := compareQuotedNumber(a, b); ok {
		return c == 0
	}
	if c, ok := compareIntegers(a, b); ok {
		return c == 0
	}
	if fa, ok := number(a); ok {
		if fb, ok := number(b); ok {
			return fa == fb
		}
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return sa == sb
		}
	}
	if ba, ok := a.(bool); ok {
		if bb, ok := b.(bool); ok {
			return ba == bb
		}
	}
	// Lists: a value equals a list that contains it (status=[open, closed]).
	if list, ok := b.([]any); ok {
		for _, x := range list {
			if equalValues(a, x) {
				return true
			}
		}
		return false
	}
	return text(a) == text(b)
}

// compareValues orders numbers numerically, everything else by text; nil
// sorts last.
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	if c, ok := compareIntegers(a, b); ok {
		return c
	}
	if fa, ok := number(a); ok {
		if fb, ok := number(b); ok {
			return cmp.Compare(fa, fb)
		}
	}
	return strings.Compare(text(a), text(b))
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// text renders a cell value for comparison and for TSV output.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Text renders a cell value as plain text (exported for result rendering).
func Text(v any) string { return text(v) }

// sortOrder is the order of sort transforms: missing values last in either
// direction, then numbers, then booleans, then everything else by text.
// Ranking kinds first keeps the order total on mixed columns (comparing a
// number with a string by text is not transitive).
func sortOrder(a, b any, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	r := cmp.Compare(kindRank(a), kindRank(b))
	if r == 0 {
		r = compareValues(a, b)
	}
	if desc {
		return -r
	}
	return r
}

func kindRank(v any) int {
	if _, ok := number(v); ok {
		return 0
	}
	if _, ok := v.(bool); ok {
		return 1
	}
	return 2
}

// reorder maps t's rows onto columns (the plan's row shape); missing
// columns are nil.
func reorder(t abi.Table, columns []string) [][]any {
	if columns == nil || slices.Equal(t.Columns, columns) {
		return t.Rows
	}
	idx := make([]int, len(columns))
	for i, c := range columns {
		idx[i] = t.Col(c)
	}
	rows := make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		out := make([]any, len(columns))
		for j, c := range idx {
			if c >= 0 && c < len(row) {
				out[j] = row[c]
			}
		}
		rows[i] = out
	}
	return rows
}

func cloneTable(t abi.Table) abi.Table {
	return abi.Table{Columns: slices.Clone(t.Columns), Rows: slices.Clone(t.Rows)}
}
