package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// hopUntilLimit reads a to-many hop whose node starts with a .limit(n)
// (after filters only, no sort): the parents' related lists in parent
// order, one list at a time, until n rows passed the filters. The rows
// after them cannot change the answer, so reading every parent's list
// concurrently (fanOut) would only spend the run's budget and refuse a
// program that needs a handful of rows (Par.kids.limit(2) when the first
// parent's first page holds two). Nothing is reserved up front for the
// same reason; every call is still charged as it is made.
func (r *run) hopUntilLimit(ctx context.Context, n *plan.Node, relation string, count int, step *Step,
	varsFor func(int) (map[string]any, error), preds []plan.Pred, limit int) (abi.Table, error) {
	var tables []abi.Table
	kept := 0 // rows of the lists read so far that passed preds
	for i := 0; i < count && kept < limit; i++ {
		vars, err := varsFor(i)
		if err != nil {
			return abi.Table{}, err
		}
		if vars == nil {
			continue
		}
		need := limit - kept
		l, used, err := r.readList(ctx, n.EntryID, n.Hop.Capability, n.Entity, vars, resumeAt{}, relation, step,
			func(t abi.Table) (int, error) { return rowsNeeded(t, preds, need, r.datesOf(n)) })
		if err != nil {
			return abi.Table{}, limitBound(err)
		}
		t := l.table
		if used < len(t.Rows) {
			t.Rows = t.Rows[:used] // the limit is filled
			kept = limit
		} else if kept, err = countMatching(t, preds, kept, r.datesOf(n)); err != nil {
			return abi.Table{}, err
		}
		tables = append(tables, t)
	}
	out := abi.Table{Columns: concatColumns(n.Columns, tables)}
	for _, t := range tables {
		out.Rows = append(out.Rows, reorder(t, out.Columns)...)
		if len(out.Rows) > r.x.limits.MaxRows {
			return abi.Table{}, fmt.Errorf("%s yields more than %d rows", n.Hop.Capability, r.x.limits.MaxRows)
		}
	}
	return out, nil
}

// countMatching adds to kept the rows of t that pass preds.
func countMatching(t abi.Table, preds []plan.Pred, kept int, d dateCols) (int, error) {
	dp, err := compileDatePreds(preds, d)
	if err != nil {
		return kept, err
	}
	cols := make([]int, len(preds))
	for i, p := range preds {
		if cols[i] = t.Col(p.Field); cols[i] < 0 {
			if len(t.Rows) == 0 {
				return kept, nil
			}
			return kept, fmt.Errorf("filter: no field %q in the rows read", p.Field)
		}
	}
rows:
	for i, row := range t.Rows {
		for j, p := range preds {
			ok, err := dp.test(j, row[cols[j]], p, i)
			if err != nil {
				return kept, err
			}
			if !ok {
				continue rows
			}
		}
		kept++
	}
	return kept, nil
}

// limitBound marks a budget refusal of a read that already stops at its
// .limit, so its hint does not suggest what the program already is.
func limitBound(err error) error {
	var be *BudgetError
	if errors.As(err, &be) {
		be.Limited = true
	}
	return err
}
