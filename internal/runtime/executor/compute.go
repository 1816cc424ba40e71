package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/rendering"
)

// Host-side computes over rows the run already holds: aggregate, group_by,
// derive, render and singleton transforms, semi-joins (predicates on a
// related entity), text nodes and for-each effects. None of them calls a
// backend except the effects, which go through the same fan-out as every
// per-row call.

// ErrPartialList means a step that needs every row of a list got a list
// that continues on further pages.
var ErrPartialList = errors.New("list continues past its first page")

// ErrSingleton means .singleton() met zero or several rows.
var ErrSingleton = errors.New("not exactly one row")

// applyCompute runs one compute transform.
func applyCompute(t abi.Table, tr plan.Transform, d dateCols) (abi.Table, error) {
	switch tr.Kind {
	case plan.TAggregate:
		row, err := aggregateRows(t, t.Rows, tr.Aggs, d)
		if err != nil {
			return t, err
		}
		return abi.Table{Columns: aggColumns(nil, tr.Aggs), Rows: [][]any{row}}, nil
	case plan.TGroupBy:
		return groupBy(t, tr, d)
	case plan.TDerive:
		return derive(t, tr.Derive)
	case plan.TRender:
		return renderRows(t, tr.Template)
	case plan.TDedupe:
		return dedupe(t, tr.Fields, d)
	case plan.TSingleton:
		if len(t.Rows) != 1 {
			return t, fmt.Errorf("%w: .singleton() expected exactly one row, got %d; narrow the source (filters, get by id) or use .limit(1)", ErrSingleton, len(t.Rows))
		}
		return t, nil
	}
	return t, fmt.Errorf("unknown transform %q", tr.Kind)
}

func aggColumns(lead []string, aggs []plan.Agg) []string {
	out := append([]string(nil), lead...)
	for _, a := range aggs {
		out = append(out, a.Name)
	}
	return out
}

// aggregateRows computes one output row of aggs over rows. Sums of whole
// numbers stay whole; nulls are skipped (count counts rows).
func aggregateRows(t abi.Table, rows [][]any, aggs []plan.Agg, d dateCols) ([]any, error) {
	out := make([]any, len(aggs))
	for i, a := range aggs {
		if a.Fn == plan.AggCount {
			out[i] = int64(len(rows))
			continue
		}
		c := t.Col(a.Field)
		if c < 0 {
			return nil, fmt.Errorf("%s(%s): no field %q in %s", a.Fn, a.Field, a.Field, strings.Join(t.Columns, ", "))
		}
		v, err := aggregate(a, rows, c, d)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func aggregate(a plan.Agg, rows [][]any, c int, d dateCols) (any, error) {
	switch a.Fn {
	case plan.AggSum, plan.AggAvg:
		var sum float64
		var isum wholeSum
		whole, n := true, 0
		for i, row := range rows {
			v := row[c]
			if v == nil {
				continue
			}
			f, ok := number(v)
			if !ok {
				return nil, fmt.Errorf("%s(%s): row %d holds %s, not a number", a.Fn, a.Field, i+1, text(v))
			}
			n++
			sum += f
			if whole && !isum.add(v) {
				whole = false
			}
		}
		switch {
		case a.Fn == plan.AggAvg && n == 0:
			return nil, nil
		case a.Fn == plan.AggAvg:
			return sum / float64(n), nil
		case whole:
			return isum.value(), nil
		}
		return sum, nil
	case plan.AggMin, plan.AggMax:
		if format, ok := d[a.Field]; ok {
			return minMaxDate(a, rows, c, format)
		}
		var best any
		for _, row := range rows {
			v := row[c]
			if v == nil {
				continue
			}
			if best == nil {
				best = v
				continue
			}
			d := sortOrder(v, best, false)
			if a.Fn == plan.AggMin && d < 0 || a.Fn == plan.AggMax && d > 0 {
				best = v
			}
		}
		return best, nil
	}
	return nil, fmt.Errorf("unknown aggregate %q", a.Fn)
}

// groupBy yields one row per distinct value of tr.Field, in order of first
// appearance, with the group's aggregates.
func groupBy(t abi.Table, tr plan.Transform, d dateCols) (abi.Table, error) {
	c := t.Col(tr.Field)
	if c < 0 {
		return t, fmt.Errorf("group_by: no field %q in %s", tr.Field, strings.Join(t.Columns, ", "))
	}
	index := map[any]int{}
	var keys []any
	var groups [][][]any
	for r, row := range t.Rows {
		k, err := d.cellKey("group_by("+tr.Field+")", tr.Field, r, row[c])
		if err != nil {
			return t, err
		}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			keys = append(keys, row[c])
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], row)
	}
	out := abi.Table{Columns: aggColumns([]string{tr.Field}, tr.Aggs), Rows: make([][]any, 0, len(groups))}
	for i, g := range groups {
		vals, err := aggregateRows(t, g, tr.Aggs, d)
		if err != nil {
			return t, err
		}
		out.Rows = append(out.Rows, append([]any{keys[i]}, vals...))
	}
	return out, nil
}

// fmtKey is the group key of a value that cannot be a map key itself (a
// list or an object); its own type keeps it apart from any string cell.
type fmtKey string

// groupKey identifies a group value; the dynamic type is part of it (1 and
// "1" are different groups), and scalars cost no formatting.
func groupKey(v any) any {
	switch v.(type) {
	case nil, string, bool, int64, int, float64, json.Number:
		return v
	}
	return fmtKey(fmt.Sprintf("%T\x00%v", v, v))
}

// dedupe keeps the first row per distinct combination of fields.
func dedupe(t abi.Table, fields []string, d dateCols) (abi.Table, error) {
	idx := make([]int, len(fields))
	for i, f := range fields {
		if idx[i] = t.Col(f); idx[i] < 0 {
			return t, fmt.Errorf("dedupe: no field %q in %s", f, strings.Join(t.Columns, ", "))
		}
	}
	seen := map[string]bool{}
	rows := t.Rows[:0:0]
	for r, row := range t.Rows {
		var k strings.Builder
		for i, c := range idx {
			v, err := d.cellKey("dedupe("+fields[i]+")", fields[i], r, row[c])
			if err != nil {
				return t, err
			}
			fmt.Fprintf(&k, "%T\x00%v\x01", v, v)
		}
		if !seen[k.String()] {
			seen[k.String()] = true
			rows = append(rows, row)
		}
	}
	t.Rows = rows
	return t, nil
}

// derive maps every row onto the derived columns.
func derive(t abi.Table, cols []plan.Derived) (abi.Table, error) {
	idx := make([]int, len(cols))
	names := make([]string, len(cols))
	for i, d := range cols {
		names[i] = d.Name
		idx[i] = -1
		if d.Field != "" {
			if idx[i] = t.Col(d.Field); idx[i] < 0 {
				return t, fmt.Errorf("derive %s: no field %q in %s", d.Name, d.Field, strings.Join(t.Columns, ", "))
			}
		}
	}
	out := abi.Table{Columns: names, Rows: make([][]any, len(t.Rows))}
	for r, row := range t.Rows {
		nr := make([]any, len(cols))
		for i, d := range cols {
			if idx[i] >= 0 {
				nr[i] = row[idx[i]]
			} else {
				nr[i] = d.Value
			}
		}
		out.Rows[r] = nr
	}
	return out, nil
}

// renderRows renders the template over the rows as column → value maps.
func renderRows(t abi.Table, src string) (abi.Table, error) {
	tp, err := rendering.Parse(src)
	if err != nil {
		return t, err
	}
	rows := make([]map[string]any, len(t.Rows))
	for i, row := range t.Rows {
		m := make(map[string]any, len(t.Columns))
		for j, c := range t.Columns {
			m[c] = row[j]
		}
		rows[i] = m
	}
	s, err := tp.Render(rows)
	if err != nil {
		return t, err
	}
	return abi.Table{Columns: []string{plan.ContentColumn}, Rows: [][]any{{s}}}, nil
}

// textTable is an OpText node's one row.
func textTable(n *plan.Node) abi.Table {
	return abi.Table{Columns: []string{plan.ContentColumn}, Rows: [][]any{{n.Args[plan.ContentColumn]}}}
}

// wholeList reports whether a transform node needs every row of its
// inputs: a compute's answer over a first page would be silently wrong.
func wholeList(n *plan.Node) bool {
	if n.Semi != nil {
		return true
	}
	for _, t := range n.Transforms {
		if plan.IsCompute(t.Kind) || t.Kind == plan.TSingleton || t.Kind == plan.TDedupe {
			return true
		}
	}
	return false
}

// transformInput is the table an OpTransform node starts from: a copy of
// its input's rows, semi-joined when the node says so. A node that needs
// whole lists refuses inputs that continue on another page, and never
// offers a continuation itself (its later pages would not be joined or
// computed).
func (r *run) transformInput(n *plan.Node) (abi.Table, *Continuation, error) {
	if n.Input < 0 {
		return abi.Table{}, nil, errors.New("transform without input")
	}
	in := r.states[n.Input]
	t := cloneTable(in.table)
	if !wholeList(n) {
		return t, in.next, nil
	}
	if in.next != nil {
		return t, nil, fmt.Errorf("%w: %s needs every %s row; narrow the list with filters or .limit(n) first", ErrPartialList, stepName(n), cmpOr(n.Entity, "input"))
	}
	if s := n.Semi; s != nil {
		if s.Node < 0 || s.Node >= len(r.states) {
			return t, nil, fmt.Errorf("malformed plan: semi-join names node %d", s.Node)
		}
		keys := r.states[s.Node]
		if keys.next != nil {
			return t, nil, fmt.Errorf("%w: the related rows this filter matches against continue on another page; narrow them", ErrPartialList)
		}
		var err error
		if t, err = semiJoin(t, s, keys.table); err != nil {
			return t, nil, err
		}
	}
	return t, nil, nil
}

func stepName(n *plan.Node) string {
	for _, t := range n.Transforms {
		if plan.IsCompute(t.Kind) || t.Kind == plan.TSingleton {
			return "." + t.Kind + "(…)"
		}
	}
	return "a predicate on a related entity"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// semiJoin keeps the rows whose s.Field value is among keys' s.Key values.
func semiJoin(t abi.Table, s *plan.SemiJoin, keys abi.Table) (abi.Table, error) {
	c := t.Col(s.Field)
	if c < 0 {
		return t, fmt.Errorf("semi-join: no field %q in %s", s.Field, strings.Join(t.Columns, ", "))
	}
	kc := keys.Col(s.Key)
	if kc < 0 && len(keys.Rows) > 0 {
		return t, fmt.Errorf("semi-join: related rows have no field %q", s.Key)
	}
	set := make(map[string]bool, len(keys.Rows))
	for _, row := range keys.Rows {
		if v := row[kc]; v != nil {
			set[text(v)] = true
		}
	}
	rows := t.Rows[:0:0]
	for _, row := range t.Rows {
		if v := row[c]; v != nil && set[text(v)] {
			rows = append(rows, row)
		}
	}
	t.Rows = rows
	return t, nil
}

// eachRow runs a mutation once per input row, with EachRow's variables
// filled from that row on top of the literal and referenced arguments.
func (r *run) eachRow(ctx context.Context, n *plan.Node, base map[string]any, step *Step) (abi.Table, error) {
	if n.Input < 0 {
		return abi.Table{}, errors.New("for-each effect without input")
	}
	in := r.states[n.Input].table
	if r.states[n.Input].next != nil {
		return abi.Table{}, fmt.Errorf("%w: the effect would run for the first page only; narrow the input with filters or .limit(n)", ErrPartialList)
	}
	if len(in.Rows) > r.x.limits.MaxFanOut {
		return abi.Table{}, fmt.Errorf("%w: %d input rows (max %d)", ErrFanOut, len(in.Rows), r.x.limits.MaxFanOut)
	}
	cols := make([]int, len(n.EachRow.Binds))
	for i, b := range n.EachRow.Binds {
		if cols[i] = in.Col(b.Field); cols[i] < 0 {
			return abi.Table{}, fmt.Errorf("effect: input rows have no field %q", b.Field)
		}
	}
	return r.fanOut(ctx, n, n.Capability, "", len(in.Rows), step, func(i int) (map[string]any, error) {
		vars := maps.Clone(base)
		for j, b := range n.EachRow.Binds {
			vars[b.Var] = in.Rows[i][cols[j]]
		}
		return vars, r.fillTemplates(n, vars, in, in.Rows[i])
	})
}

// pageSizeEnough is the settle rule of a .page_size(size) read that
// answers by pages: settled once size rows are read (reading further
// backend pages when one holds fewer). Other reads keep their rule.
func pageSizeEnough(size int, paged bool, enough func(abi.Table) (int, error)) func(abi.Table) (int, error) {
	if size <= 0 || !paged {
		return enough
	}
	return func(t abi.Table) (int, error) {
		if len(t.Rows) >= size {
			return size, nil
		}
		return -1, nil
	}
}

// computeSources marks the nodes n reads besides its input: the keys of a
// semi-join and the rows its argument templates interpolate. They are
// read whole, never a page at a time: a semi-join against the first page
// of its keys would drop rows silently.
func computeSources(n *plan.Node, count int, sources []bool) {
	if n.Semi != nil && n.Semi.Node >= 0 && n.Semi.Node < count {
		sources[n.Semi.Node] = true
	}
	for _, t := range n.Templates {
		for _, r := range t.Refs {
			if r.Node >= 0 && r.Node < count {
				sources[r.Node] = true
			}
		}
	}
}

// cutToPage keeps the rows a .page_size read answers with; the rest stay
// for the continuation (listRead.after(used) resumes after them).
func cutToPage(l *listRead, used, size int) {
	if size > 0 && used >= 0 && used < len(l.table.Rows) {
		l.table.Rows = l.table.Rows[:used]
	}
}

// maxInterpolated bounds the text one ${…} template may produce.
const maxInterpolated = 512 << 10

// fillTemplates sets the variables of n's argument templates. Without a
// row (row == nil) templates reading the current row are left for the
// per-row pass; with one, only those are filled.
func (r *run) fillTemplates(n *plan.Node, vars map[string]any, in abi.Table, row []any) error {
	for _, t := range n.Templates {
		perRow := slices.ContainsFunc(t.Refs, func(ref plan.ArgRef) bool { return ref.Node == plan.RowRef })
		if perRow != (row != nil) {
			continue
		}
		if len(t.Parts) != len(t.Refs)+1 {
			return fmt.Errorf("malformed plan: template for %s has %d parts for %d references", t.Var, len(t.Parts), len(t.Refs))
		}
		var b strings.Builder
		b.WriteString(t.Parts[0])
		for i, ref := range t.Refs {
			src, cells := in, row
			if ref.Node != plan.RowRef {
				if ref.Node < 0 || ref.Node >= len(r.states) {
					return fmt.Errorf("malformed plan: template reads node %d", ref.Node)
				}
				src = r.states[ref.Node].table
				if len(src.Rows) != 1 {
					return fmt.Errorf("argument %s interpolates %s from a result with %d rows; it needs exactly one", t.Var, ref.Field, len(src.Rows))
				}
				cells = src.Rows[0]
			}
			c := src.Col(ref.Field)
			if c < 0 {
				return fmt.Errorf("argument %s: field %q is not in the referenced rows", t.Var, ref.Field)
			}
			b.WriteString(text(cells[c]))
			b.WriteString(t.Parts[i+1])
			if b.Len() > maxInterpolated {
				return fmt.Errorf("argument %s: interpolated text exceeds %d bytes", t.Var, maxInterpolated)
			}
		}
		vars[t.Var] = b.String()
	}
	return nil
}
