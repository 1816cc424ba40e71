package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Steps that fan out from rows: relation hops, hydration of fields a list
// leaves out, and mutations applied per row, each bounded in calls and
// concurrency.

func (r *run) hop(ctx context.Context, n *plan.Node, step *Step) (abi.Table, error) {
	if n.Hop == nil || n.Input < 0 {
		return abi.Table{}, errors.New("hop without relation or input")
	}
	if n.Hop.Materialize == plan.MaterializeView {
		return r.viewHop(n)
	}
	parents := r.states[n.Input].table
	calls, err := hopParents(n, parents)
	if err != nil {
		return abi.Table{}, err
	}
	relation := ""
	if n.Hop.Materialize == "from_parent_get" {
		relation = n.Hop.Relation
	}
	varsFor := func(i int) (map[string]any, error) {
		i = calls[i]
		vars := literalArgs(n)
		for _, b := range n.Hop.Binds {
			c := parents.Col(b.Field)
			if c < 0 {
				return nil, fmt.Errorf("relation %s: parent rows have no field %q", n.Hop.Relation, b.Field)
			}
			v := parents.Rows[i][c]
			if v == nil {
				return nil, nil // a parent without the key has no related rows
			}
			vars[b.Var] = v
		}
		return vars, nil
	}
	if preds, limit, ok := prefixLimit(n.Filters, n.Transforms); ok && n.Hop.DistinctBy == "" {
		return r.hopUntilLimit(ctx, n, relation, len(calls), step, varsFor, preds, limit)
	}
	// Every parent called needs at least one read: refuse before the first
	// call when they cannot all be read within the run's budget.
	if err := r.meter.reserve(len(calls), n.Entity); err != nil {
		return abi.Table{}, err
	}
	t, err := r.fanOut(ctx, n, n.Hop.Capability, relation, len(calls), step, varsFor)
	if err != nil || n.Hop.DistinctBy == "" {
		return t, err
	}
	return distinct(t, n.Hop.DistinctBy)
}

// parentNotFound names the parent row when a from_parent_get hop's get of
// it answers 404: the run fails as a get of that row would (not-found,
// naming the entity and id), not with the capability's bare status.
func (r *run) parentNotFound(n *plan.Node, vars map[string]any, err error) error {
	var be *BackendError
	if n.Hop.Materialize != catalog.FromParentGet || !errors.As(err, &be) || be.Status != http.StatusNotFound || n.Input >= len(r.nodes) {
		return err
	}
	nf := &NotFoundError{Entity: r.nodes[n.Input].Entity, Capability: n.Hop.Capability}
	if len(n.Hop.Binds) == 1 {
		nf.ID = vars[n.Hop.Binds[0].Var]
	} else {
		for _, b := range n.Hop.Binds {
			nf.Key = append(nf.Key, KeyPart{Name: b.Field, Value: vars[b.Var]})
		}
	}
	return nf
}

// keyOrder is the entity's compound key (its key_vars, which Identity
// lists first when there are several), or nil.
func (r *run) keyOrder(entry, entity string) []string {
	if r.env.Identity == nil {
		return nil
	}
	if ways := r.env.Identity(entry, entity); len(ways) > 0 && len(ways[0]) > 1 {
		return ways[0]
	}
	return nil
}

// distinct keeps the first row per value of field. Many parents of a
// cardinality-one relation often share their target (thirty transactions,
// six accounts); the relation's rows are the targets, not one per parent.
// Rows without the field's value cannot be told apart and are all kept.
func distinct(t abi.Table, field string) (abi.Table, error) {
	c := t.Col(field)
	if c < 0 {
		if len(t.Rows) == 0 {
			return t, nil
		}
		return abi.Table{}, fmt.Errorf("relation rows have no id field %q to tell targets apart", field)
	}
	seen := make(map[string]bool, len(t.Rows))
	rows := t.Rows[:0:0]
	for _, row := range t.Rows {
		if v := row[c]; v != nil {
			// The type is part of the key: 1 and "1" are different ids.
			k := fmt.Sprintf("%T\x00%v", v, v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		rows = append(rows, row)
	}
	t.Rows = rows
	return t, nil
}

// hydrate completes Input's rows: for every row lacking one of the fields
// to fill, it runs the entity's get with the row's key and copies those
// fields from the answer, keeping the row's other cells and its position.
// Rows that already carry every field are not read again. A get answering
// 404 leaves its row as it was (the row was listed, so it is kept rather
// than silently dropped); any other failure fails the run.
func (r *run) hydrate(ctx context.Context, n *plan.Node, step *Step) (abi.Table, error) {
	h := n.Hydrate
	if h == nil || n.Input < 0 {
		return abi.Table{}, errors.New("hydrate without fields or input")
	}
	in := r.states[n.Input].table
	t := abi.Table{Columns: slices.Clone(in.Columns), Rows: make([][]any, len(in.Rows))}
	cols := make([]int, len(h.Fields))
	for i, f := range h.Fields {
		if cols[i] = t.Col(f); cols[i] < 0 {
			t.Columns = append(t.Columns, f)
			cols[i] = len(t.Columns) - 1
		}
	}
	for i, row := range in.Rows {
		// Each row is copied: hydration writes into it, and the input's
		// rows may be shared with other nodes and roots.
		t.Rows[i] = append(make([]any, 0, len(t.Columns)), row...)
		t.Rows[i] = t.Rows[i][:len(t.Columns)]
	}
	binds := make([]int, len(h.Binds))
	for i, b := range h.Binds {
		if binds[i] = in.Col(b.Field); binds[i] < 0 {
			return abi.Table{}, fmt.Errorf("hydrate %s: rows have no key field %q", n.Entity, b.Field)
		}
	}
	var todo []int
	for i, row := range t.Rows {
		if slices.ContainsFunc(cols, func(c int) bool { return row[c] == nil }) {
			todo = append(todo, i)
		}
	}
	if len(todo) > r.x.limits.MaxFanOut {
		return abi.Table{}, fmt.Errorf("%w: reading %d %s rows in full (max %d); add .limit(n) before asking for %s", ErrFanOut, len(todo), n.Entity, r.x.limits.MaxFanOut, strings.Join(h.Fields, ", "))
	}
	if err := r.meter.reserve(len(todo), n.Entity); err != nil {
		return abi.Table{}, err
	}
	err := r.forEach(ctx, len(todo), func(ctx context.Context, k int) error {
		row := t.Rows[todo[k]]
		vars := literalArgs(n)
		for i, b := range h.Binds {
			if row[binds[i]] == nil {
				return nil // a row without its key cannot be read again
			}
			vars[b.Var] = row[binds[i]]
		}
		if err := r.meter.take(n.Entity); err != nil {
			return err
		}
		dec, _, err := r.call(ctx, n.EntryID, n.Capability, vars, nil, "", step)
		var be *BackendError
		if errors.As(err, &be) && be.Status == http.StatusNotFound {
			return nil
		}
		if err != nil {
			return fmt.Errorf("hydrate %s row %d: %w", n.Entity, todo[k]+1, err)
		}
		if len(dec.Table.Rows) == 0 {
			return nil
		}
		got := dec.Table.Rows[0]
		for i, f := range h.Fields {
			if c := dec.Table.Col(f); c >= 0 {
				row[cols[i]] = got[c]
			}
		}
		return nil
	})
	if err != nil {
		return abi.Table{}, err
	}
	return t, nil
}

// fanOut calls capability once per i in [0, count) with the variables
// varsFor returns (nil skips that i), concurrently within the run's bound,
// and concatenates the answers onto one row shape.
func (r *run) fanOut(ctx context.Context, n *plan.Node, capability, relation string, count int, step *Step, varsFor func(i int) (map[string]any, error)) (abi.Table, error) {
	tables := make([]abi.Table, count)
	err := r.forEach(ctx, count, func(ctx context.Context, i int) error {
		vars, err := varsFor(i)
		if err != nil || vars == nil {
			return err
		}
		if n.Op == plan.OpHop {
			// A relation is all of the parent's related rows, not the
			// first page of them.
			l, _, err := r.readList(ctx, n.EntryID, capability, n.Entity, vars, resumeAt{}, relation, step, nil)
			if err != nil {
				return r.parentNotFound(n, vars, err)
			}
			tables[i] = l.table
			return nil
		}
		dec, _, err := r.call(ctx, n.EntryID, capability, vars, nil, relation, step)
		if err != nil {
			return err
		}
		t := dec.Table
		tables[i] = t
		return nil
	})
	if err != nil {
		return abi.Table{}, err
	}
	out := abi.Table{Columns: concatColumns(n.Columns, tables)}
	for _, t := range tables {
		out.Rows = append(out.Rows, reorder(t, out.Columns)...)
		if len(out.Rows) > r.x.limits.MaxRows {
			return abi.Table{}, fmt.Errorf("%s yields more than %d rows", capability, r.x.limits.MaxRows)
		}
	}
	return out, nil
}

// concatColumns picks the row shape for tables fanned in from several calls:
// the plan's, else the first call's that has one. Every table is then
// reordered onto it, so calls answering in different column orders (or a
// skipped parent's empty table) cannot misalign rows.
func concatColumns(planned []string, tables []abi.Table) []string {
	if planned != nil {
		return planned
	}
	for _, t := range tables {
		if t.Columns != nil {
			return t.Columns
		}
	}
	return nil
}

func (r *run) mutate(ctx context.Context, n *plan.Node, step *Step) (abi.Table, error) {
	base, err := r.vars(n)
	if err != nil {
		return abi.Table{}, err
	}
	if n.EachRow != nil {
		return r.eachRow(ctx, n, base, step)
	}
	if n.ForEach == nil {
		dec, _, err := r.call(ctx, n.EntryID, n.Capability, base, nil, "", step)
		if err != nil {
			return abi.Table{}, err
		}
		if n.Kind == catalog.KindDelete {
			return deleted([]any{base["id"]}), nil
		}
		return dec.Table, nil
	}
	if n.Input < 0 {
		return abi.Table{}, errors.New("for-each mutation without input")
	}
	in := r.states[n.Input].table
	if len(in.Rows) > r.x.limits.MaxFanOut {
		return abi.Table{}, fmt.Errorf("%w: %d receiver rows (max %d)", ErrFanOut, len(in.Rows), r.x.limits.MaxFanOut)
	}
	c := in.Col(n.ForEach.Field)
	if c < 0 {
		return abi.Table{}, fmt.Errorf("receiver rows have no field %q", n.ForEach.Field)
	}
	// Checked before any call: a change applied to some receivers and then
	// refused for a keyless one would leave the backend half-changed.
	for i, row := range in.Rows {
		if row[c] == nil {
			return abi.Table{}, fmt.Errorf("receiver row %d has no %s; nothing was changed", i+1, n.ForEach.Field)
		}
	}
	t, err := r.fanOut(ctx, n, n.Capability, "", len(in.Rows), step, func(i int) (map[string]any, error) {
		vars := maps.Clone(base)
		vars[n.ForEach.Var] = in.Rows[i][c]
		return vars, nil
	})
	if err != nil || n.Kind != catalog.KindDelete {
		return t, err
	}
	ids := make([]any, len(in.Rows))
	for i, row := range in.Rows {
		ids[i] = row[c]
	}
	return deleted(ids), nil
}

// forEach runs fn for 0..n-1 with the run's concurrency bound; the first
// error cancels the others.
func (r *run) forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}(i)
	}
	wg.Wait()
	return first
}
