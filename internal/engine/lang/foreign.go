package lang

import (
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Reverse traversal (`Project("p1").^Issue`) and foreign predicates
// (`Issue{Project.key="CORE"}`) both walk an entity-reference field the
// catalog declares (a value of type entity_ref with a target), the first
// from the referenced side, the second from the referencing side.

// refTarget is the entity an entity_ref value domain points at, or "".
func refTarget(cat *catalog.Catalog, valueRef string) string {
	if v := cat.ValueNamed(valueRef); v != nil && v.Type == "entity_ref" {
		return v.Target
	}
	return ""
}

// reverse plans `.^Target{preds}` from c's rows: Target's query run once
// per row with its reference parameter bound to the row's id, or, when
// the query has no such parameter, Target's rows whose reference field
// holds one of the ids.
func (p *planner) reverse(c cur, st *step) (cur, *abi.Error) {
	if c.ent.cat == nil || c.cols != nil {
		return c, errAt(st.p, abi.CodeType, ".^ follows references to entity rows; these rows have none", "")
	}
	tx, err := p.entity(st.name)
	if err != nil {
		return c, err
	}
	if tx.cat != c.ent.cat {
		return c, errAt(st.name.p, abi.CodeType, ".^"+st.name.raw+" crosses catalogs ("+c.ent.qualified()+" → "+tx.qualified()+"); references live inside one catalog", "")
	}
	sid := idField(c.ent.e)
	if sid == "" {
		return c, errAt(st.p, abi.CodeCatalog, c.ent.name+" has no single id field to be referenced by", "")
	}
	if err := p.needField(c, sid, st.p, "^"+tx.name); err != nil {
		return c, err
	}
	for _, qc := range tx.cat.CapabilitiesOf(tx.name) {
		if qc.Kind != catalog.KindQuery {
			continue
		}
		for _, pr := range qc.Parameters {
			if refTarget(tx.cat, pr.ValueRef) == c.ent.name {
				return p.reverseHop(c, st, tx, qc, pr.Name, sid)
			}
		}
	}
	var fk []string
	for _, f := range fieldNames(tx.e) {
		if refTarget(tx.cat, tx.e.FieldNamed(f).ValueRef) == c.ent.name {
			fk = append(fk, f)
		}
	}
	if len(fk) == 0 {
		return c, errAt(st.name.p, abi.CodeType, tx.name+" has no field or query parameter referencing "+c.ent.name,
			"follow a relation of "+c.ent.name+" instead: "+strings.Join(relationNames(c.ent.e), ", "))
	}
	if len(fk) > 1 {
		return c, errAt(st.name.p, abi.CodeType, tx.name+" references "+c.ent.name+" through several fields ("+strings.Join(fk, ", ")+")",
			"filter explicitly: "+tx.name+"{"+fk[0]+"=…}")
	}
	var tc cur
	if err := p.readPreds(&tc, tx, catalog.KindQuery, st.preds, nil, st.p); err != nil {
		return c, err
	}
	return p.semiJoin(tc, fk[0], c.node, sid, st.p)
}

func (p *planner) reverseHop(c cur, st *step, tx ent, qc *catalog.Capability, param, sid string) (cur, *abi.Error) {
	h := &plan.Hop{Relation: "^" + tx.name, Materialize: catalog.QueryScoped, Target: tx.name, Capability: qc.Name,
		Binds: []plan.Bind{{Var: param, Field: sid}}}
	if err := p.hydrate(&c, []string{sid}, st.p); err != nil {
		return c, err
	}
	n := baseNode(plan.OpHop, tx)
	n.Kind, n.Hop, n.Input, n.Many = "relation", h, c.node, true
	args := map[string]any{}
	for _, pr := range st.preds {
		if pr.foreign != nil {
			return c, errAt(pr.p, abi.CodeType, "a predicate on another entity cannot follow .^", "filter "+tx.name+" directly")
		}
		lit, ref, err := p.val(pr.val)
		if err != nil {
			return c, err
		}
		if ref != nil {
			return c, errAt(pr.val.p, abi.CodeType, "predicates after .^ take literal values", "")
		}
		prm := qc.Param(pr.field.text)
		if pr.op == "=" && lit != nil && prm != nil && pr.field.text != param {
			if _, dup := args[pr.field.text]; dup {
				return c, errAt(pr.p, abi.CodeType, pr.field.text+" is given twice", "")
			}
			if err := p.checkValue(tx.cat, prm.ValueRef, lit, pr.val.p, pr.field.text); err != nil {
				return c, err
			}
			args[pr.field.text] = lit
			continue
		}
		pd, err := p.filterPred(tx, evPred{pred: pr, lit: lit})
		if err != nil {
			return c, err
		}
		n.Filters = append(n.Filters, pd)
	}
	for _, pr := range qc.Parameters {
		if _, ok := args[pr.Name]; pr.Required && pr.Name != param && !ok {
			return c, errAt(st.p, abi.CodeType, tx.name+" query "+qc.Name+" also needs "+pr.Name, "add it in braces: .^"+tx.name+"{"+pr.Name+"=…}")
		}
	}
	if len(args) > 0 {
		n.Args = args
	}
	id, err := p.add(n, st.p)
	return cur{node: id, ent: tx, many: true, own: true, have: provided(qc)}, err
}

// semiJoin keeps c's rows whose field holds a key of node keys' rows.
func (p *planner) semiJoin(c cur, field string, keys int, key string, at pos) (cur, *abi.Error) {
	if err := p.hydrate(&c, []string{field}, at); err != nil {
		return c, err
	}
	n := baseNode(plan.OpTransform, c.ent)
	n.Input, n.Many = c.node, true
	n.Semi = &plan.SemiJoin{Node: keys, Field: field, Key: key}
	n.Deps = []int{keys}
	id, err := p.add(n, at)
	c.node, c.own, c.many = id, true, true
	return c, err
}

// readPreds is read with foreign predicates split off: each runs as a
// query of the foreign entity, and the rows keep only those whose
// reference field points at one of its answers.
func (p *planner) readPreds(c *cur, x ent, kind string, preds []pred, phrase *value, at pos) *abi.Error {
	if !slices.ContainsFunc(preds, func(pr pred) bool { return pr.foreign != nil }) {
		return p.read(c, x, kind, preds, phrase, at) // the usual case: nothing to split
	}
	var local, foreign []pred
	for _, pr := range preds {
		if pr.foreign != nil {
			foreign = append(foreign, pr)
		} else {
			local = append(local, pr)
		}
	}
	if len(foreign) == 0 {
		return p.read(c, x, kind, preds, phrase, at)
	}
	type join struct {
		node       int
		field, key string
	}
	var joins []join
	for _, pr := range foreign {
		field, fx, err := p.foreignField(x, pr)
		if err != nil {
			return err
		}
		fk := idField(fx.e)
		if fk == "" {
			return errAt(pr.foreign.p, abi.CodeCatalog, fx.name+" has no single id field to match references on", "")
		}
		inner := pr
		inner.foreign = nil
		var fc cur
		if err := p.read(&fc, fx, catalog.KindQuery, []pred{inner}, nil, pr.p); err != nil {
			return err
		}
		if err := p.hydrate(&fc, []string{fk}, pr.p); err != nil {
			return err
		}
		joins = append(joins, join{fc.node, field, fk})
	}
	err := p.read(c, x, kind, local, phrase, at)
	for _, j := range joins {
		if err != nil {
			return err
		}
		*c, err = p.semiJoin(*c, j.field, j.node, j.key, at)
	}
	return err
}

// foreignField finds the reference field of x a `Foreign.field` predicate
// goes through: a field named like the prefix (project, project_id) or
// whose reference targets an entity of that name.
func (p *planner) foreignField(x ent, pr pred) (string, ent, *abi.Error) {
	want := strings.ToLower(pr.foreign.text)
	var refs []string
	for _, f := range fieldNames(x.e) {
		t := refTarget(x.cat, x.e.FieldNamed(f).ValueRef)
		if t == "" {
			continue
		}
		refs = append(refs, f+" → "+t)
		lf := strings.ToLower(f)
		if lf == want || strings.TrimSuffix(lf, "_id") == want || strings.TrimSuffix(lf, "id") == want || strings.ToLower(t) == want {
			te := x.cat.EntityNamed(t)
			if te == nil {
				return "", ent{}, errAt(pr.foreign.p, abi.CodeCatalog, x.name+"."+f+" references unknown entity "+t, "")
			}
			fx := ent{cat: x.cat, e: te, name: t}
			if te.FieldNamed(pr.field.text) == nil {
				return "", ent{}, errAt(pr.field.p, abi.CodeUnknownField, t+" has no field "+pr.field.raw, listHint(pr.field.text, "fields of "+t, fieldNames(te)))
			}
			return f, fx, nil
		}
	}
	hint := x.name + " references nothing"
	if len(refs) > 0 {
		hint = "references of " + x.name + ": " + strings.Join(refs, ", ")
	}
	return "", ent{}, errAt(pr.foreign.p, abi.CodeUnknownField, x.name+" has no reference to "+pr.foreign.raw, hint)
}

// followRef plans `.field` on an entity-reference field: the referenced
// row, read through the target's get with the field's value as its id
// (Plasm's reference navigation). Rows sharing a target yield it once.
func (p *planner) followRef(c cur, st *step, field string) (cur, *abi.Error) {
	t := refTarget(c.ent.cat, c.ent.e.FieldNamed(field).ValueRef)
	te := c.ent.cat.EntityNamed(t)
	if te == nil {
		return c, errAt(st.p, abi.CodeCatalog, c.ent.name+"."+field+" references unknown entity "+t, "")
	}
	tx := ent{cat: c.ent.cat, e: te, name: t}
	gc := c.ent.cat.GetCapability(t)
	tid := idField(te)
	if gc == nil || tid == "" {
		return c, errAt(st.p, abi.CodeUnknownMethod, field+" references "+t+", which cannot be read by id", p.listHowTo(tx))
	}
	if err := p.needField(c, field, st.p, field); err != nil {
		return c, err
	}
	if err := p.hydrate(&c, []string{field}, st.p); err != nil {
		return c, err
	}
	binds := []plan.Bind{{Var: "id", Field: field}}
	if tid != "id" && usesVar(c.ent.cat, gc, tid) {
		binds = append(binds, plan.Bind{Var: tid, Field: field})
	}
	for _, pr := range gc.Parameters {
		if pr.Required && !slices.ContainsFunc(binds, func(b plan.Bind) bool { return b.Var == pr.Name }) {
			return c, errAt(st.p, abi.CodeType, t+"'s get also needs "+pr.Name+", which "+c.ent.name+"."+field+" cannot supply", p.listHowTo(tx))
		}
	}
	n := baseNode(plan.OpHop, tx)
	n.Kind, n.Input, n.Many = "relation", c.node, c.many
	n.Hop = &plan.Hop{Relation: field, Materialize: catalog.QueryScopedBindings, Target: t, Capability: gc.Name, Binds: binds, DistinctBy: tid}
	id, err := p.add(n, st.p)
	return cur{node: id, ent: tx, many: c.many, own: true, have: provided(gc)}, err
}
