package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/viewtemplate"
)

// Views (plan.OpView): the steps of a catalog view run in order, each
// with variables bound from the view's scope (the node's arguments), a
// literal, the first row of an earlier step, or a template over those; a
// list step reads every page (its row count is part of the answer). The
// outputs then fill the one row the node yields, and the rows each
// relation output selects are kept for hops that follow it.

// ErrView marks a view that cannot produce its row (a missing scope value,
// a get that returned no single row where one is required, a template
// that fails).
var ErrView = errors.New("view")

func (r *run) view(ctx context.Context, n *plan.Node, step *Step) (abi.Table, *Continuation, error) {
	v := n.View
	if v == nil {
		return abi.Table{}, nil, errors.New("malformed plan: view node without a view")
	}
	scope, err := r.vars(n)
	if err != nil {
		return abi.Table{}, nil, err
	}
	for _, name := range v.Required {
		if scope[name] == nil {
			return abi.Table{}, nil, fmt.Errorf("%w %s: scope value %s is empty", ErrView, v.Name, name)
		}
	}
	results := map[string]abi.Table{}
	firsts := map[string]any{} // step id → its first row as a map
	for _, st := range v.Steps {
		t, err := r.viewStep(ctx, n.EntryID, v.Name, st, scope, firsts, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		results[st.ID] = t
		first := map[string]any{}
		if len(t.Rows) > 0 {
			for i, c := range t.Columns {
				first[c] = t.Rows[0][i]
			}
		}
		firsts[st.ID] = first
	}
	row, err := viewRow(v, n.Columns, scope, results)
	if err != nil {
		return abi.Table{}, nil, err
	}
	related, err := viewRelations(v, results)
	if err != nil {
		return abi.Table{}, nil, err
	}
	r.states[n.ID].related = related
	t, err := shape(abi.Table{Columns: n.Columns, Rows: [][]any{row}}, n, r.datesOf(n))
	return t, nil, err
}

// viewStep runs one step: a get or singleton reads one row, a list every page.
func (r *run) viewStep(ctx context.Context, entry, view string, st plan.ViewStep, scope map[string]any, firsts map[string]any, step *Step) (abi.Table, error) {
	vars := map[string]any{}
	var filters []plan.Pred
	for _, b := range st.Binds {
		val, err := bindValue(view, st.ID, b, scope, firsts)
		if err != nil {
			return abi.Table{}, err
		}
		if b.Filter {
			filters = append(filters, plan.Pred{Field: b.Var, Op: "=", Value: val})
			continue
		}
		vars[b.Var] = val
	}
	enough := onePage
	switch st.Kind {
	case catalog.KindGet:
		id := vars[st.IDFrom]
		switch id.(type) {
		case nil:
			return abi.Table{}, fmt.Errorf("%w %s: step %s reads %s by id, but its %s is empty", ErrView, view, st.ID, st.Entity, st.IDFrom)
		case []any, map[string]any:
			// As in Plasm: an identity is one scalar (a scope of several
			// values, from Entity{id=[…]}, cannot name one row).
			return abi.Table{}, fmt.Errorf("%w %s: step %s reads %s by id, but its %s is not one value", ErrView, view, st.ID, st.Entity, st.IDFrom)
		}
		for _, iv := range st.IDVars {
			vars[iv] = id
		}
	case catalog.KindSingleton:
	default:
		enough = nil // the whole list: counts and any-row tests need it
	}
	l, _, err := r.readList(ctx, entry, st.Capability, st.Entity, vars, resumeAt{}, "", step, enough)
	var t abi.Table
	if l != nil {
		t = l.table
	}
	if st.Kind == catalog.KindGet {
		// A missing row is the same answer as for a plain get of it.
		err = notFound(&plan.Node{Kind: st.Kind, Entity: st.Entity, Capability: st.Capability, Args: map[string]any{"id": vars["id"]}}, t, err, nil)
	}
	if err != nil {
		return abi.Table{}, fmt.Errorf("view %s step %s: %w", view, st.ID, err)
	}
	if len(filters) > 0 {
		if t, err = applyFilters(t, filters, r.entityDates(entry, st.Entity)); err != nil {
			return abi.Table{}, err
		}
	}
	return t, nil
}

// bindValue resolves one step variable.
func bindValue(view, stepID string, b plan.ViewBind, scope map[string]any, firsts map[string]any) (any, error) {
	switch b.Kind {
	case catalog.ViewScope:
		v, ok := scope[b.From]
		if !ok {
			return nil, fmt.Errorf("%w %s: step %s needs scope value %s", ErrView, view, stepID, b.From)
		}
		return v, nil
	case catalog.ViewLiteral:
		return b.Value, nil
	case catalog.ViewField:
		row, ok := firsts[b.Node].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w %s: step %s reads step %s, which has not run", ErrView, view, stepID, b.Node)
		}
		return row[b.Field], nil
	case catalog.ViewComputed:
		vars := map[string]any{}
		for k, v := range scope {
			vars[k] = v
		}
		for k, v := range firsts {
			if _, dup := vars[k]; dup || k == "nodes" {
				// The loader refuses such ids; never let one replace a
				// scope value silently.
				return nil, fmt.Errorf("%w %s: step id %s is also a scope name", ErrView, view, k)
			}
			vars[k] = v
		}
		vars["nodes"] = firsts
		return render(view, "step "+stepID+" "+b.Var, b.Template, vars)
	}
	return nil, fmt.Errorf("%w %s: step %s: unknown bind kind %q", ErrView, view, stepID, b.Kind)
}

func render(view, what, src string, vars map[string]any) (any, error) {
	t, err := viewtemplate.Parse(src)
	if err == nil {
		var s string
		if s, err = t.Render(vars); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w %s: %s: %w", ErrView, view, what, err)
}

// viewRow fills the view's row: every output but the computed ones first,
// then the computed ones in order, each seeing the scope and the fields
// filled before it.
func viewRow(v *plan.View, columns []string, scope map[string]any, results map[string]abi.Table) ([]any, error) {
	fields := map[string]any{}
	for _, o := range v.Outputs {
		if o.Kind == catalog.ViewComputed {
			continue
		}
		val, err := outputValue(v.Name, o, scope, results)
		if err != nil {
			return nil, err
		}
		fields[o.Field] = val
	}
	for _, o := range v.Outputs {
		if o.Kind != catalog.ViewComputed {
			continue
		}
		vars := map[string]any{}
		for k, x := range scope {
			vars[k] = x
		}
		for k, x := range fields {
			vars[k] = x
		}
		val, err := render(v.Name, "output "+o.Field, o.Template, vars)
		if err != nil {
			return nil, err
		}
		fields[o.Field] = val
	}
	row := make([]any, len(columns))
	for i, c := range columns {
		row[i] = fields[c]
	}
	return row, nil
}

func outputValue(view string, o plan.ViewOutput, scope map[string]any, results map[string]abi.Table) (any, error) {
	if o.Kind == catalog.ViewScope {
		return scope[o.Param], nil
	}
	t, ok := results[o.Node]
	if !ok {
		return nil, fmt.Errorf("%w %s: output %s reads unknown step %s", ErrView, view, o.Field, o.Node)
	}
	c := t.Col(o.Of)
	switch o.Kind {
	case catalog.ViewRowCount:
		return int64(len(t.Rows)), nil
	case catalog.ViewRowCountPositive:
		return len(t.Rows) > 0, nil
	case catalog.ViewField:
		if len(t.Rows) == 0 || c < 0 {
			return nil, nil
		}
		return t.Rows[0][c], nil
	case catalog.ViewAnyRowEquals:
		for _, row := range t.Rows {
			var x any
			if c >= 0 {
				x = row[c]
			}
			if equalValues(x, o.Equals) {
				return true, nil
			}
		}
		return false, nil
	case catalog.ViewHistogram:
		counts := map[string]any{}
		for _, row := range t.Rows {
			key := "<missing>"
			if c >= 0 && row[c] != nil {
				switch x := row[c].(type) {
				case map[string]any, []any:
					key = "<non_scalar>"
				default:
					key = text(x)
				}
			}
			n, _ := counts[key].(int64)
			counts[key] = n + 1
		}
		return counts, nil
	}
	return nil, fmt.Errorf("%w %s: output %s: unknown kind %q", ErrView, view, o.Field, o.Kind)
}

// viewRelations selects, per relation output, the rows it leads to.
func viewRelations(v *plan.View, results map[string]abi.Table) (map[string]abi.Table, error) {
	out := map[string]abi.Table{}
	for _, ro := range v.Relations {
		t, ok := results[ro.Node]
		if !ok {
			return nil, fmt.Errorf("%w %s: relation %s reads unknown step %s", ErrView, v.Name, ro.Relation, ro.Node)
		}
		var rows [][]any
		c := t.Col(ro.Where)
		switch ro.Kind {
		case catalog.ViewSingleRow:
			if len(t.Rows) != 1 {
				return nil, fmt.Errorf("%w %s: relation %s needs exactly one row from step %s, which returned %d", ErrView, v.Name, ro.Relation, ro.Node, len(t.Rows))
			}
			rows = t.Rows
		case catalog.ViewAllRows:
			rows = t.Rows
		case catalog.ViewFirstRowWhere, catalog.ViewRowsWhere:
			for _, row := range t.Rows {
				var x any
				if c >= 0 {
					x = row[c]
				}
				if equalValues(x, ro.Equals) {
					rows = append(rows, row)
					if ro.Kind == catalog.ViewFirstRowWhere {
						break
					}
				}
			}
		default:
			return nil, fmt.Errorf("%w %s: relation %s: unknown kind %q", ErrView, v.Name, ro.Relation, ro.Kind)
		}
		out[ro.Relation] = abi.Table{Columns: ro.Columns, Rows: reorder(abi.Table{Columns: t.Columns, Rows: rows}, ro.Columns)}
	}
	return out, nil
}

// viewHop follows a relation a view output: the rows the view selected,
// none when the view's row was filtered away.
func (r *run) viewHop(n *plan.Node) (abi.Table, error) {
	id := n.Input
	for range len(r.nodes) { // a valid plan is acyclic; bound the walk anyway
		if id < 0 || id >= len(r.nodes) || r.nodes[id].Op != plan.OpTransform {
			break
		}
		id = r.nodes[id].Input
	}
	if id < 0 || id >= len(r.states) || r.states[id].related == nil {
		return abi.Table{}, fmt.Errorf("%w: relation %s is followed from rows no view produced", ErrView, n.Hop.Relation)
	}
	if len(r.states[n.Input].table.Rows) == 0 {
		return abi.Table{Columns: n.Columns}, nil
	}
	t := r.states[id].related[n.Hop.Relation]
	return abi.Table{Columns: n.Columns, Rows: reorder(t, n.Columns)}, nil
}

// viewReads says what a view node reads, for Reads.
func viewReads(n *plan.Node) string {
	if n.View == nil {
		return "a view"
	}
	one, lists := 0, 0
	for _, st := range n.View.Steps {
		if st.Kind == catalog.KindGet || st.Kind == catalog.KindSingleton {
			one++
		} else {
			lists++
		}
	}
	return fmt.Sprintf("view %s: %d single-row reads and %d lists read whole, in order, for one row", n.View.Name, one, lists)
}
