package lang

import (
	"errors"
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/render"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Planning of the computes (aggregate, group_by, derive, render,
// singleton), text bindings and for-each effects. Computes are host-side
// transforms over rows the executor already holds; each gets its own
// OpTransform node, so a label's rows stay what the label said.

// rowNode marks an ArgRef that reads the current row of a for-each (`_.f`);
// add turns such refs into the mutation's EachRow binds.
const rowNode = -2

// rhsExtra plans the right-hand sides that are not chains into c, which
// it overwrites whole; ok is false (and c untouched) for a chain.
func (p *planner) rhsExtra(r *rhs, c *cur) (ok bool, err *abi.Error) {
	switch r.kind {
	case rhsText:
		n := plan.Node{Op: plan.OpText, Effect: plan.EffectRead, Input: -1, Columns: []string{plan.ContentColumn},
			Args: map[string]any{plan.ContentColumn: r.text.lit}}
		id, err := p.add(n, r.p)
		c.set(id, ent{}, false, true, nil)
		c.cols = n.Columns
		return true, err
	case rhsDerive, rhsEffect:
		in, err := p.forEachInput(r.over)
		if err != nil {
			*c = cur{}
			return true, err
		}
		if r.kind == rhsDerive {
			*c, err = p.derive(in, r)
			return true, err
		}
		p.row = &in
		defer func() { p.row = nil }()
		err = p.rhs(r.effect, c)
		if err == nil && !p.ranEachRow {
			err = errAt(r.effect.p, abi.CodeType, "the effect after => must call a method (create, update, delete or an action); it runs once per row of "+r.over.raw,
				r.over.raw+" => Entity(_.id).update(field=_.other)")
		}
		p.ranEachRow = false
		return true, err
	}
	return false, nil
}

// forEachInput is the label a derive or effect runs over.
func (p *planner) forEachInput(l *name) (cur, *abi.Error) {
	b, _ := p.labels.get(l.text)
	if b == nil {
		if at, ok := p.boundLater.get(l.text); ok {
			return cur{}, errAt(l.p, abi.CodeUnknownEntity, "label "+l.text+" is used before it is bound (line "+itoa(at.line)+")", "move the binding above its first use")
		}
		return cur{}, errAt(l.p, abi.CodeUnknownEntity, "unknown label "+l.raw, listHint(l.text, "labels", p.labelNames())+"; => runs over the rows of a label bound on an earlier line")
	}
	c := b.c
	c.own = false
	return c, nil
}

// rowColumns is what a row of c can be asked for.
func rowColumns(c cur) []string {
	switch {
	case c.cols != nil:
		return c.cols
	case c.proj != nil:
		return c.proj
	case c.ent.e != nil:
		return fieldNames(c.ent.e)
	}
	return nil
}

// rowField checks that c's rows carry f (hydrating entity rows if the list
// left it out) and returns the possibly extended c.
func (p *planner) rowField(c *cur, f name, what string) *abi.Error {
	cols := rowColumns(*c)
	if c.cols == nil && c.ent.cat == nil {
		return errAt(f.p, abi.CodeType, "page(…) rows have no known fields", "")
	}
	if !slices.Contains(cols, f.text) {
		if c.proj != nil && c.ent.e != nil && c.ent.e.FieldNamed(f.text) != nil {
			return errAt(f.p, abi.CodeUnknownField, f.text+" was dropped by the projection ["+strings.Join(c.proj, ", ")+"]", "add "+f.text+" to the projection")
		}
		return errAt(f.p, abi.CodeUnknownField, what+" has no field "+f.raw, listHint(f.text, "fields", cols))
	}
	if c.cols == nil {
		return p.hydrate(c, []string{f.text}, f.p)
	}
	return nil
}

func (c cur) what() string {
	if c.ent.name != "" {
		return c.ent.name
	}
	return "the rows"
}

// computeNode appends a transform node over c producing new columns.
func (p *planner) computeNode(c cur, t plan.Transform, cols []string, many bool, at pos) (cur, *abi.Error) {
	n := plan.Node{Op: plan.OpTransform, Effect: plan.EffectRead, Input: c.node, Many: many,
		Columns: cols, Transforms: []plan.Transform{t}}
	if c.ent.cat != nil {
		n.EntryID = c.ent.cat.EntryID
	}
	id, err := p.add(n, at)
	return cur{node: id, own: true, many: many, cols: cols}, err
}

// computeStep plans the postfix steps beyond limit/sort/filter/projection.
func (p *planner) computeStep(c *cur, st *step) *abi.Error {
	switch st.kind {
	case stAggregate, stGroupBy:
		return p.aggregate(c, st)
	case stSingleton:
		if !c.own {
			n := plan.Node{Op: plan.OpTransform, Effect: plan.EffectRead, Input: c.node, Many: c.many, Columns: rowColumns(*c)}
			if c.ent.cat != nil {
				n.EntryID, n.Entity, n.Columns = c.ent.cat.EntryID, c.ent.name, fieldNames(c.ent.e)
			}
			id, err := p.add(n, st.p)
			if err != nil {
				return err
			}
			c.node, c.own = id, true
		}
		p.nodes[c.node].Transforms = append(p.nodes[c.node].Transforms, plan.Transform{Kind: plan.TSingleton})
		return nil
	case stDedupe:
		t := plan.Transform{Kind: plan.TDedupe}
		for _, f := range st.fields {
			if err := p.rowField(c, f, c.what()); err != nil {
				return err
			}
			t.Fields = append(t.Fields, f.text)
		}
		n := plan.Node{Op: plan.OpTransform, Effect: plan.EffectRead, Input: c.node, Many: c.many, Columns: rowColumns(*c), Transforms: []plan.Transform{t}}
		if c.ent.cat != nil {
			n.EntryID, n.Entity, n.Columns = c.ent.cat.EntryID, c.ent.name, fieldNames(c.ent.e)
		}
		id, err := p.add(n, st.p)
		c.node, c.own = id, true
		return err
	case stPageSize:
		n := &p.nodes[c.node]
		if !c.own || n.Op != plan.OpFetch || !n.Many || len(n.Transforms) > 0 || n.PageSize > 0 {
			return errAt(st.p, abi.CodeType, ".page_size(n) sets how many rows of a list read each answer holds; put it right after the read",
				"e.g. Entity{…}.page_size(20)[fields], then page(handle) for the next rows")
		}
		n.PageSize = st.n
		return nil
	case stReverse:
		nc, err := p.reverse(*c, st)
		if err == nil {
			*c = nc
		}
		return err
	}
	return unsupportedStep(st)
}

var numericTypes = map[string]bool{"integer": true, "number": true}

func (p *planner) aggregate(c *cur, st *step) *abi.Error {
	t := plan.Transform{Kind: plan.TAggregate}
	var cols []string
	if st.kind == stGroupBy {
		if err := p.rowField(c, *st.field, c.what()); err != nil {
			return err
		}
		t.Kind, t.Field = plan.TGroupBy, st.field.text
		cols = append(cols, st.field.text)
	}
	for _, sp := range st.specs {
		if slices.Contains(cols, sp.name.text) {
			return errAt(sp.name.p, abi.CodeType, "column "+sp.name.text+" is named twice", "give each aggregate its own name")
		}
		a := plan.Agg{Name: sp.name.text, Fn: sp.fn}
		if sp.field != nil {
			if err := p.rowField(c, *sp.field, c.what()); err != nil {
				return err
			}
			a.Field = sp.field.text
			if sp.fn == plan.AggSum || sp.fn == plan.AggAvg {
				if typ := p.fieldType(*c, a.Field); typ != "" && !numericTypes[typ] {
					return errAt(sp.field.p, abi.CodeType, sp.fn+"("+a.Field+") needs a number, but "+a.Field+" is "+typ,
						"count it instead (n=count), or group by it: .group_by("+a.Field+", n=count)")
				}
			}
		}
		t.Aggs = append(t.Aggs, a)
		cols = append(cols, a.Name)
	}
	nc, err := p.computeNode(*c, t, cols, st.kind == stGroupBy, st.p)
	if err == nil {
		*c = nc
	}
	return err
}

// fieldType is the declared value type of an entity field, "" when unknown.
func (p *planner) fieldType(c cur, f string) string {
	if c.cols != nil || c.ent.e == nil {
		return ""
	}
	fd := c.ent.e.FieldNamed(f)
	if fd == nil {
		return ""
	}
	if v := c.ent.cat.ValueNamed(fd.ValueRef); v != nil {
		return v.Type
	}
	return ""
}

// derive plans `label => {col: _.field | literal, …}`.
func (p *planner) derive(in cur, r *rhs) (cur, *abi.Error) {
	t := plan.Transform{Kind: plan.TDerive}
	var cols []string
	for _, a := range r.derive {
		if slices.Contains(cols, a.key.text) {
			return cur{}, errAt(a.key.p, abi.CodeType, "column "+a.key.text+" is named twice", "")
		}
		d := plan.Derived{Name: a.key.text}
		switch a.val.kind {
		case vUnderscore:
			if err := p.rowField(&in, *a.val.field, in.what()); err != nil {
				return cur{}, err
			}
			d.Field = a.val.field.text
		case vLit:
			d.Value = a.val.lit
		default:
			lit, ref, err := p.val(a.val)
			if err != nil {
				return cur{}, err
			}
			if ref != nil {
				return cur{}, errAt(a.val.p, abi.CodeType, "a derived column takes _.field or a literal", "write "+a.key.text+": _.field")
			}
			d.Value = lit
		}
		t.Derive = append(t.Derive, d)
		cols = append(cols, d.Name)
	}
	return p.computeNode(in, t, cols, in.many, r.arrow)
}

// renderStep plans `rows <<TAG template TAG`: one row {content}, in c.
func (p *planner) renderStep(c *cur, r *rhs) *abi.Error {
	if c.cols == nil && c.ent.cat == nil {
		return errAt(*r.render, abi.CodeType, "page(…) rows cannot be rendered", "render the original program's rows")
	}
	if err := render.Check(r.tmpl); err != nil {
		var te *render.Error
		if errors.As(err, &te) {
			return errAt(pos{r.render.line + te.Line, 1}, abi.CodeSyntax, "template: "+te.Msg, te.Hint)
		}
		return errAt(*r.render, abi.CodeSyntax, "template: "+err.Error(), render.GoSyntaxHint)
	}
	t := plan.Transform{Kind: plan.TRender, Template: r.tmpl}
	var err *abi.Error
	*c, err = p.computeNode(*c, t, []string{plan.ContentColumn}, false, *r.render)
	return err
}

// rowRef is `_.field` inside an effect: the field of the row being
// processed, checked against the for-each input's columns.
func (p *planner) rowRef(v *value) (any, *plan.ArgRef, *abi.Error) {
	if p.row == nil {
		return nil, nil, errAt(v.p, abi.CodeSyntax, "_."+v.field.raw+" only has a meaning inside a derive or effect (=>)", "refer to a bound row with label.field")
	}
	if err := p.rowField(p.row, *v.field, p.row.what()); err != nil {
		return nil, nil, err
	}
	return nil, &plan.ArgRef{Node: rowNode, Field: v.field.text}, nil
}

// eachRow rewrites a node planned inside an effect: a mutation without its
// own input runs once per row of the effect's input, with `_.field`
// arguments bound from that row. `_.field` anywhere else is refused.
func (p *planner) eachRow(n *plan.Node, at pos) *abi.Error {
	var binds []plan.Bind
	refs := n.ArgRefs[:0:0]
	for _, r := range n.ArgRefs {
		if r.Node == rowNode {
			binds = append(binds, plan.Bind{Var: r.Var, Field: r.Field})
		} else {
			refs = append(refs, r)
		}
	}
	rowTemplates := false
	for i := range n.Templates {
		for j, r := range n.Templates[i].Refs {
			if r.Node == rowNode {
				n.Templates[i].Refs[j].Node = plan.RowRef
				rowTemplates = true
			}
		}
	}
	if p.row == nil || n.Op != plan.OpMutate || n.Input >= 0 {
		if len(binds) > 0 || rowTemplates {
			return errAt(at, abi.CodeType, "_.field can only fill a method's arguments inside an effect",
				"label => Entity(_.id).method(field=_.other); to read related rows per row, follow a relation")
		}
		return nil
	}
	if len(refs) == 0 {
		refs = nil
	}
	if binds == nil {
		binds = []plan.Bind{}
	}
	n.ArgRefs, n.Input, n.Many = refs, p.row.node, p.row.many
	n.EachRow = &plan.EachRow{Binds: binds}
	p.ranEachRow = true
	return nil
}

// labelRef is a label used as a value without a field: a bound single
// row stands for its id (`Comment{issue_id=top}`), so an entity-reference
// slot takes the row itself. Text rows must name .content.
func (p *planner) labelRef(v *value, c cur) (any, *plan.ArgRef, *abi.Error) {
	id := v.ident.text
	if c.cols != nil {
		hint := id + "." + c.cols[0]
		return nil, nil, errAt(v.p, abi.CodeType, id+" is a row of computed columns ("+strings.Join(c.cols, ", ")+"); pass one of them", hint)
	}
	f := ""
	if c.ent.e != nil {
		f = idField(c.ent.e)
	}
	if f == "" {
		return nil, nil, errAt(v.p, abi.CodeType, id+" is a label; pass one of its fields", id+".id")
	}
	fv := &value{p: v.p, kind: vIdent, ident: v.ident, field: &name{p: v.p, text: f, raw: f}}
	return p.val(fv)
}

// colsRef is label.field on a label of computed columns.
func (p *planner) colsRef(v *value, c cur) (any, *plan.ArgRef, *abi.Error) {
	id, f := v.ident.text, v.field.text
	if !slices.Contains(c.cols, f) {
		return nil, nil, errAt(v.field.p, abi.CodeUnknownField, id+" has no column "+v.field.raw, listHint(f, "columns of "+id, c.cols))
	}
	if !p.single(c.node) {
		return nil, nil, errAt(v.p, abi.CodeType, id+" is a list; "+id+"."+f+" needs a single row", "bind one row, e.g. with .limit(1) or .aggregate(…)")
	}
	return nil, &plan.ArgRef{Node: c.node, Field: f}, nil
}

// colsTransform applies limit/sort/filter/projection/singleton to rows of
// computed columns (after a group_by, say).
func (p *planner) colsTransform(c *cur, st *step) *abi.Error {
	check := func(f name) *abi.Error {
		if !slices.Contains(c.cols, f.text) {
			return errAt(f.p, abi.CodeUnknownField, "the rows have no column "+f.raw, listHint(f.text, "columns", c.cols))
		}
		return nil
	}
	var t plan.Transform
	cols := c.cols
	switch st.kind {
	case stLimit:
		t = plan.Transform{Kind: plan.TLimit, N: st.n}
	case stSort:
		if err := check(*st.field); err != nil {
			return err
		}
		t = plan.Transform{Kind: plan.TSort, Field: st.field.text, Desc: st.desc}
	case stFilter:
		t = plan.Transform{Kind: plan.TFilter}
		for _, pr := range st.preds {
			if err := check(pr.field); err != nil {
				return err
			}
			lit, ref, err := p.val(pr.val)
			if err != nil {
				return err
			}
			if ref != nil {
				return errAt(pr.val.p, abi.CodeType, "a filter compares with a literal value", "")
			}
			if err := hostComparable(pr.field, pr.op, lit, pr.val.p); err != nil {
				return err
			}
			t.Preds = append(t.Preds, plan.Pred{Field: pr.field.text, Op: pr.op, Value: lit})
		}
	case stProject:
		cols = nil
		for _, f := range st.fields {
			if err := check(f); err != nil {
				return err
			}
			cols = append(cols, f.text)
		}
		t = plan.Transform{Kind: plan.TProject, Fields: cols}
	case stAggregate, stGroupBy, stSingleton, stDedupe:
		return p.computeStep(c, st)
	default:
		return errAt(st.p, abi.CodeType, "computed rows cannot take ."+st.name.raw, "apply it before the compute")
	}
	if !c.own {
		n := plan.Node{Op: plan.OpTransform, Effect: plan.EffectRead, Input: c.node, Many: c.many, Columns: c.cols}
		id, err := p.add(n, st.p)
		if err != nil {
			return err
		}
		c.node, c.own = id, true
	}
	n := &p.nodes[c.node]
	n.Transforms = append(n.Transforms, t)
	c.cols = cols
	return nil
}

// isMethodStep reports whether `.name` without parentheses names a method
// of c's entity rather than a relation: Plasm lets `.close` stand for
// `.close()`.
func (p *planner) isMethodStep(c *cur, st *step) bool {
	if c.ent.cat == nil || c.cols != nil {
		return false
	}
	if s := st.name.sym; s != nil {
		return s.kind == symbol.KindMethod
	}
	return c.ent.e.RelationNamed(st.name.text) == nil && c.ent.cat.MethodByLabel(c.ent.name, st.name.text) != nil
}

// computeReasons adds the verdict reasons of computes: a compute over a
// list that may be long reads the whole collection.
func computeReasons(nodes []plan.Node, add func(string)) {
	for i := range nodes {
		n := &nodes[i]
		if n.Input < 0 {
			continue
		}
		for _, t := range n.Transforms {
			if plan.IsCompute(t.Kind) && !bounded(nodes, n.Input) {
				what := nodes[n.Input].Entity
				if what == "" {
					what = "rows"
				}
				add("full-collection compute: " + t.Kind + " over " + what)
			}
		}
		if n.EachRow != nil && !bounded(nodes, n.Input) {
			add("for-each over unbounded input: " + n.Capability)
		}
	}
}

func isComputed(n *plan.Node) bool {
	for _, t := range n.Transforms {
		if plan.IsCompute(t.Kind) {
			return true
		}
	}
	return n.Op == plan.OpText
}
