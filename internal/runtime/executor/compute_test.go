package executor

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

func computeInput() abi.Table {
	return abi.Table{Columns: []string{"id", "status", "score", "title"}, Rows: [][]any{
		{"i1", "open", int64(3), "A"},
		{"i2", "closed", json.Number("4"), "B"},
		{"i3", "open", nil, "C"},
		{"i4", "open", 2.5, "D"},
	}}
}

func TestComputes(t *testing.T) {
	cases := []struct {
		name string
		tr   plan.Transform
		want abi.Table
	}{
		{"aggregate", plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "n", Fn: "count"}, {Name: "s", Fn: "sum", Field: "score"}, {Name: "lo", Fn: "min", Field: "score"}, {Name: "hi", Fn: "max", Field: "title"}}},
			abi.Table{Columns: []string{"n", "s", "lo", "hi"}, Rows: [][]any{{int64(4), 9.5, 2.5, "D"}}}},
		{"group_by", plan.Transform{Kind: plan.TGroupBy, Field: "status", Aggs: []plan.Agg{{Name: "n", Fn: "count"}, {Name: "avg", Fn: "avg", Field: "score"}}},
			abi.Table{Columns: []string{"status", "n", "avg"}, Rows: [][]any{{"open", int64(3), 2.75}, {"closed", int64(1), 4.0}}}},
		{"derive", plan.Transform{Kind: plan.TDerive, Derive: []plan.Derived{{Name: "t", Field: "title"}, {Name: "k", Value: "x"}}},
			abi.Table{Columns: []string{"t", "k"}, Rows: [][]any{{"A", "x"}, {"B", "x"}, {"C", "x"}, {"D", "x"}}}},
		{"dedupe", plan.Transform{Kind: plan.TDedupe, Fields: []string{"status"}},
			abi.Table{Columns: []string{"id", "status", "score", "title"}, Rows: [][]any{{"i1", "open", int64(3), "A"}, {"i2", "closed", json.Number("4"), "B"}}}},
		{"render", plan.Transform{Kind: plan.TRender, Template: "{{len .rows}}:{{range .rows}}{{.id}}{{end}}"},
			abi.Table{Columns: []string{"content"}, Rows: [][]any{{"4:i1i2i3i4"}}}},
	}
	for _, tc := range cases {
		got, err := applyCompute(computeInput(), tc.tr, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, %v\nwant %v", tc.name, got, err, tc.want)
		}
	}
	sumInts := plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "s", Fn: "sum", Field: "score"}}}
	in := computeInput()
	in.Rows = in.Rows[:3]
	if got, err := applyCompute(in, sumInts, nil); err != nil || got.Rows[0][0] != int64(7) {
		t.Errorf("sum of whole numbers: %v %v", got, err)
	}
	if _, err := applyCompute(computeInput(), plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "s", Fn: "sum", Field: "title"}}}, nil); err == nil {
		t.Error("sum of text ran")
	}
	if _, err := applyCompute(computeInput(), plan.Transform{Kind: plan.TSingleton}, nil); !errors.Is(err, ErrSingleton) {
		t.Errorf("singleton over 4 rows: %v", err)
	}
	empty := abi.Table{Columns: []string{"score"}}
	if got, err := applyCompute(empty, plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "n", Fn: "count"}, {Name: "a", Fn: "avg", Field: "score"}}}, nil); err != nil || got.Rows[0][0] != int64(0) || got.Rows[0][1] != nil {
		t.Errorf("aggregate of nothing: %v %v", got, err)
	}
}

func TestSemiJoin(t *testing.T) {
	keys := abi.Table{Columns: []string{"id"}, Rows: [][]any{{"open"}, {json.Number("7")}}}
	in := abi.Table{Columns: []string{"id", "ref"}, Rows: [][]any{{"a", "open"}, {"b", "closed"}, {"c", int64(7)}, {"d", nil}}}
	got, err := semiJoin(in, &plan.SemiJoin{Field: "ref", Key: "id"}, keys)
	if err != nil || len(got.Rows) != 2 || got.Rows[0][0] != "a" || got.Rows[1][0] != "c" {
		t.Fatalf("semi-join: %v %v", got, err)
	}
}

func TestPageSizeEnough(t *testing.T) {
	rows := func(n int) abi.Table { return abi.Table{Rows: make([][]any, n)} }
	e := pageSizeEnough(3, true, onePage)
	if u, _ := e(rows(2)); u != -1 {
		t.Errorf("2 of 3 rows settled (%d)", u)
	}
	if u, _ := e(rows(5)); u != 3 {
		t.Errorf("5 rows settled at %d, want 3", u)
	}
	if u, _ := pageSizeEnough(3, false, onePage)(rows(5)); u != 5 {
		t.Errorf("a whole-list read took the page size (%d)", u)
	}
	l := &listRead{table: rows(5)}
	cutToPage(l, 3, 3)
	if len(l.table.Rows) != 3 {
		t.Errorf("cut to %d rows", len(l.table.Rows))
	}
}

// FuzzComputes feeds arbitrary cells through every compute: none may
// panic, and aggregates always answer one row.
func FuzzComputes(f *testing.F) {
	f.Add("open", int64(3), 2.5, "x", true)
	f.Add("", int64(-1), 0.0, "{{len .rows}}", false)
	f.Fuzz(func(t *testing.T, s string, i int64, x float64, tmpl string, b bool) {
		in := abi.Table{Columns: []string{"k", "v"}, Rows: [][]any{{s, i}, {s + "x", x}, {b, nil}, {nil, json.Number(s)}, {s, s}}}
		for _, tr := range []plan.Transform{
			{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "n", Fn: "count"}, {Name: "s", Fn: "sum", Field: "v"}, {Name: "m", Fn: "max", Field: "v"}, {Name: "a", Fn: "avg", Field: "k"}}},
			{Kind: plan.TGroupBy, Field: "k", Aggs: []plan.Agg{{Name: "lo", Fn: "min", Field: "v"}}},
			{Kind: plan.TDerive, Derive: []plan.Derived{{Name: "c", Field: "v"}, {Name: "d", Value: s}}},
			{Kind: plan.TRender, Template: tmpl},
			{Kind: plan.TSingleton},
		} {
			out, err := applyCompute(in, tr, nil)
			if err == nil && tr.Kind == plan.TAggregate && len(out.Rows) != 1 {
				t.Fatalf("aggregate answered %d rows", len(out.Rows))
			}
		}
	})
}

func benchRows(n int) abi.Table {
	t := abi.Table{Columns: []string{"status", "priority"}}
	for i := range n {
		t.Rows = append(t.Rows, []any{[]string{"open", "closed", "in_progress"}[i%3], int64(i % 5)})
	}
	return t
}

// BenchmarkGroupBy compares the host compute with a direct loop over the
// same rows (the baseline: what hand-written Go over the table costs).
func BenchmarkGroupBy(b *testing.B) {
	t := benchRows(10000)
	tr := plan.Transform{Kind: plan.TGroupBy, Field: "status", Aggs: []plan.Agg{{Name: "n", Fn: "count"}, {Name: "s", Fn: "sum", Field: "priority"}}}
	b.Run("compute", func(b *testing.B) {
		for b.Loop() {
			if _, err := applyCompute(t, tr, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			n, s := map[string]int64{}, map[string]int64{}
			for _, r := range t.Rows {
				k := r[0].(string)
				n[k]++
				s[k] += r[1].(int64)
			}
		}
	})
}

// A compute or semi-join over a list that continues on another page is
// refused rather than answered from the first page.
func TestWholeListGuard(t *testing.T) {
	rows := abi.Table{Columns: []string{"id"}, Rows: [][]any{{"a"}}}
	agg := plan.Node{Op: plan.OpTransform, Input: 0, Transforms: []plan.Transform{{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "n", Fn: "count"}}}}}
	semi := plan.Node{Op: plan.OpTransform, Input: 0, Semi: &plan.SemiJoin{Node: 1, Field: "id", Key: "id"}}
	plain := plan.Node{Op: plan.OpTransform, Input: 0, Transforms: []plan.Transform{{Kind: plan.TLimit, N: 1}}}
	more := &Continuation{Page: map[string]any{"offset": 20}}
	for _, tc := range []struct {
		name           string
		n              plan.Node
		inNext, keyNxt *Continuation
		partial        bool
	}{
		{"aggregate over a partial list", agg, more, nil, true},
		{"aggregate over a whole list", agg, nil, nil, false},
		{"semi-join with partial keys", semi, nil, more, true},
		{"limit keeps the continuation", plain, more, nil, false},
	} {
		r := &run{states: []*nodeState{{table: rows, next: tc.inNext}, {table: rows, next: tc.keyNxt}}}
		_, next, err := r.transformInput(&tc.n)
		if got := errors.Is(err, ErrPartialList); got != tc.partial {
			t.Errorf("%s: err %v", tc.name, err)
		}
		if tc.name == "limit keeps the continuation" && next == nil {
			t.Errorf("%s: continuation dropped", tc.name)
		}
	}
}
