package lang

import (
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Hops and calls: relation traversal, capability calls (including
// mutations and per-row effects) and postfix transforms.

// hop follows a relation from c's rows; c becomes the related rows.
func (p *planner) hop(c *cur, st *step) *abi.Error {
	rel, followed, err := p.relationOf(*c, st)
	if err != nil || followed != nil {
		if followed != nil {
			*c = *followed
		}
		return err
	}
	rel = p.refRelation(c, st, rel)
	if ok, err := p.embeddedHop(c, st, rel); ok {
		return err
	}
	rn := st.name.text
	target := c.ent.cat.EntityNamed(rel.Target)
	if target == nil {
		return errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" targets unknown entity "+rel.Target, "the catalog is inconsistent; report it to its maintainer")
	}
	h, err := p.hopBinds(*c, st, rel)
	if err != nil {
		return err
	}
	var bindFields []string
	for _, b := range h.Binds {
		bindFields = append(bindFields, b.Field)
	}
	if err := p.hydrate(c, bindFields, st.p); err != nil {
		return err
	}
	if hc := c.ent.cat.CapabilityNamed(h.Capability); hc != nil && rel.Materialize.Kind != catalog.FromParentGet {
		var missing []string
		for _, pr := range hc.Parameters {
			if pr.Required && !slices.ContainsFunc(h.Binds, func(b plan.Bind) bool { return b.Var == pr.Name }) {
				missing = append(missing, pr.Name)
			}
		}
		if len(missing) > 0 {
			return errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" cannot be followed: "+h.Capability+" also needs "+strings.Join(missing, ", "),
				"query "+rel.Target+" directly instead: "+p.listHowTo(ent{cat: c.ent.cat, e: target, name: rel.Target}))
		}
	}
	tx := ent{cat: c.ent.cat, e: target, name: rel.Target}
	tid := idField(target)
	if rel.Cardinality == "one" {
		h.DistinctBy = tid
	}
	// What the target rows carry: the target capability's provides, or, for
	// objects embedded in the parent's get, whatever the parent happened to
	// embed, which the catalog does not declare. Only the id is certain
	// there; the hydrate node skips rows that turn out complete.
	var have []string
	if h.Materialize == plan.MaterializeView {
		have = viewHave(c.ent.cat, c.ent.name, rn)
	} else if rel.Materialize.Kind == catalog.FromParentGet {
		if tid != "" {
			have = []string{tid}
		}
	} else {
		have = provided(c.ent.cat.CapabilityNamed(h.Capability))
	}
	n := baseNode(plan.OpHop, tx)
	n.Kind, n.Hop, n.Input = "relation", h, c.node
	n.Many = c.many || rel.Cardinality != "one"
	id, err := p.add(n, st.p)
	c.set(id, tx, n.Many, true, have)
	return err
}

// relationOf resolves the step's name to a relation of c's entity. A
// reference field is followed through the target's get instead (followed
// is then the result); every other kind of name is a typed error that says
// what the name is.
func (p *planner) relationOf(c cur, st *step) (rel *catalog.Relation, followed *cur, err *abi.Error) {
	if c.ent.cat == nil {
		return nil, nil, errAt(st.p, abi.CodeType, "page(…) rows cannot be followed by ."+st.name.raw, "follow relations in the original program instead")
	}
	rn := st.name.text
	if s := st.name.sym; s != nil {
		switch s.kind {
		case symbol.KindRelation:
			r := s.relation
			if r.EntryID != c.ent.cat.EntryID || r.Entity != c.ent.name {
				return nil, nil, errAt(st.p, abi.CodeUnknownField, st.name.raw+" is a relation of "+r.EntryID+":"+r.Entity+", not of "+c.ent.qualified(),
					"follow it from "+p.entitySym(r.EntryID, r.Entity)+" rows")
			}
		case symbol.KindMethod:
			return nil, nil, errAt(st.p, abi.CodeUnknownField, st.name.raw+" is a method ("+s.method.Label+"); call it with parentheses", "."+st.name.raw+"(…)")
		case symbol.KindSlot:
			return nil, nil, symbolMixup(st.name, false)
		case symbol.KindEntity:
			return nil, nil, errAt(st.p, abi.CodeUnknownField, st.name.raw+" is an entity, not a relation of "+c.ent.name, listHint("", "relations of "+c.ent.name, relationNames(c.ent.e)))
		}
	}
	rel = c.ent.e.RelationNamed(rn)
	if rel == nil {
		switch {
		case c.ent.e.FieldNamed(rn) != nil && refTarget(c.ent.cat, c.ent.e.FieldNamed(rn).ValueRef) != "":
			f, err := p.followRef(c, st, rn)
			return nil, &f, err
		case c.ent.e.FieldNamed(rn) != nil:
			return nil, nil, errAt(st.p, abi.CodeUnknownField, rn+" is a field of "+c.ent.name+", not a relation", "project fields with ["+rn+"]")
		case c.ent.cat.MethodByLabel(c.ent.name, rn) != nil:
			return nil, nil, errAt(st.p, abi.CodeUnknownField, rn+" is a method of "+c.ent.name+"; call it with parentheses", "."+rn+"(…)")
		}
		return nil, nil, errAt(st.p, abi.CodeUnknownField, c.ent.name+" has no relation "+st.name.raw, listHint(rn, "relations of "+c.ent.name, relationNames(c.ent.e)))
	}
	return rel, nil, nil
}

// hopBinds builds the hop: which capability materializes the relation and
// which of the parent's fields bind its parameters.
func (p *planner) hopBinds(c cur, st *step, rel *catalog.Relation) (*plan.Hop, *abi.Error) {
	rn := st.name.text
	h := p.pa.hops.put(plan.Hop{Relation: rn, Materialize: rel.Materialize.Kind, Target: rel.Target, Binds: p.pa.binds.empty(2)})
	pid := idField(c.ent.e)
	needID := func() *abi.Error {
		if pid == "" {
			return errAt(st.p, abi.CodeCatalog, c.ent.name+" has no single id field to follow "+rn+" from", "")
		}
		return p.needField(c, pid, st.p, rn)
	}
	switch rel.Materialize.Kind {
	case catalog.QueryScoped:
		if c.ent.cat.CapabilityNamed(rel.Materialize.Capability) == nil {
			return nil, errAt(st.p, abi.CodeCatalog, "relation "+rn+" names unknown capability "+rel.Materialize.Capability, "")
		}
		if err := needID(); err != nil {
			return nil, err
		}
		h.Capability = rel.Materialize.Capability
		h.Binds = append(h.Binds, plan.Bind{Var: rel.Materialize.Param, Field: pid})
	case catalog.QueryScopedBindings:
		if c.ent.cat.CapabilityNamed(rel.Materialize.Capability) == nil {
			return nil, errAt(st.p, abi.CodeCatalog, "relation "+rn+" names unknown capability "+rel.Materialize.Capability, "")
		}
		h.Capability = rel.Materialize.Capability
		vars := make([]string, 0, len(rel.Materialize.Bindings))
		for v := range rel.Materialize.Bindings {
			vars = append(vars, v)
		}
		slices.Sort(vars)
		for _, v := range vars {
			f := rel.Materialize.Bindings[v]
			if err := p.needField(c, f, st.p, rn); err != nil {
				return nil, err
			}
			h.Binds = append(h.Binds, plan.Bind{Var: v, Field: f})
		}
	case catalog.GetScopedBindings:
		if err := p.getScoped(c, st, rel, h); err != nil {
			return nil, err
		}
	case catalog.FromParentGet:
		gc := p.getCap(c.ent)
		if gc == nil {
			return nil, errAt(st.p, abi.CodeCatalog, "relation "+rn+" is embedded in "+c.ent.name+"'s get, but "+c.ent.name+" has no get capability", "")
		}
		if err := needID(); err != nil {
			return nil, err
		}
		h.Capability = gc.Name
		h.Binds = append(h.Binds, plan.Bind{Var: idVar(c.ent, gc, pid), Field: pid})
	case "":
		if ok, err := p.viewHop(c, st, h); ok {
			return h, err
		}
		// Declared for documentation (Plasm's unavailable relation): the
		// catalog says what it links to, not how to fetch it.
		return nil, errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" is declared but not traversable: the catalog gives no materialize for it",
			"query "+rel.Target+" directly instead: "+p.listHowTo(ent{cat: c.ent.cat, e: c.ent.cat.EntityNamed(rel.Target), name: rel.Target}))
	default:
		return nil, errAt(st.p, abi.CodeCatalog, "relation "+rn+" has materialization "+rel.Materialize.Kind+", which plasmd does not traverse", "")
	}
	return h, nil
}

// needField checks that rows still carry a field a later step reads from.
func (p *planner) needField(c cur, f string, at pos, user string) *abi.Error {
	if c.proj != nil && !slices.Contains(c.proj, f) {
		return errAt(at, abi.CodeType, user+" needs "+f+" from each row, but the projection ["+strings.Join(c.proj, ", ")+"] dropped it",
			"add "+f+" to the projection or project after ."+user)
	}
	return nil
}

// call plans a method call on c; c becomes its result.
func (p *planner) call(c *cur, st *step) *abi.Error {
	if c.ent.cat == nil {
		return errAt(st.p, abi.CodeType, "page(…) rows cannot take ."+st.name.raw+"(…)", "")
	}
	mc, err := p.methodOf(*c, st)
	if err != nil {
		return err
	}
	label := catalog.MethodLabel(mc)
	switch mc.Kind {
	case catalog.KindQuery, catalog.KindSearch, catalog.KindGet:
		if mc.Kind != catalog.KindGet && c.pend == pendAll {
			return p.readCall(c, c.ent, mc, st)
		}
		return errAt(st.p, abi.CodeUnknownMethod, label+" is a "+mc.Kind+"; reads are written as expressions, not method calls", p.listHowTo(c.ent))
	}
	n := baseNode(plan.OpMutate, c.ent)
	n.Effect, n.Kind, n.Capability = plan.EffectWrite, mc.Kind, mc.Name
	if mc.Output != nil {
		n.Columns = nil
	}
	args := map[string]any{}
	supplied := map[string]bool{}
	switch {
	case mc.Kind == catalog.KindCreate:
		if c.pend != pendAll {
			return errAt(st.p, abi.CodeType, label+" creates a new "+c.ent.name+"; call it on the entity itself", c.ent.name+"."+label+"(…)")
		}
	case c.pend == pendAll:
		return errAt(st.p, abi.CodeType, label+" needs a receiver row",
			c.ent.name+`("id").`+label+"(…) for one row, or "+c.ent.name+"{…}."+label+"(…) for each matching row")
	case c.pend == pendGet:
		gc := p.getCap(c.ent)
		if gc == nil {
			gc = &catalog.Capability{}
		}
		ka, refs, sup, err := p.keyArgs(c.ent, gc, mc, c.get)
		if err != nil {
			return err
		}
		if n.ArgRefs, err = p.preflight(*c, mc, ka, refs, st.p); err != nil {
			return err
		}
		args, supplied = ka, sup
	default:
		f := idField(c.ent.e)
		if f == "" {
			return errAt(st.p, abi.CodeType, c.ent.name+" has a compound key; "+label+" cannot run once per row", "call it on one row: "+c.ent.name+"(k=…, …)."+label+"(…)")
		}
		if err := p.needField(*c, f, st.p, label); err != nil {
			return err
		}
		if len(mc.Preflight) > 0 {
			return errAt(st.p, abi.CodeType, label+" reads its target row first (a preflight get), so it runs on one row at a time", c.ent.name+`("id").`+label+"(…)")
		}
		v := idVar(c.ent, mc, f)
		n.Input, n.ForEach, n.Many = c.node, &plan.Bind{Var: v, Field: f}, c.many
		supplied[v], supplied[f] = true, true
	}
	if err := p.callArgs(&n, *c, mc, st, args, supplied); err != nil {
		return err
	}
	var missing, optional []string
	for _, pr := range mc.Parameters {
		switch {
		case pr.Required && !supplied[pr.Name] && !idBound(c.ent.cat, mc, pr.Name, supplied):
			missing = append(missing, pr.Name)
		case !pr.Required:
			optional = append(optional, pr.Name)
		}
	}
	if len(missing) > 0 {
		hint := "required: " + strings.Join(missing, ", ")
		if len(optional) > 0 {
			hint += "; optional: " + strings.Join(optional, ", ")
		}
		return errAt(st.p, abi.CodeType, c.ent.name+"."+label+" is missing "+strings.Join(missing, ", "), hint)
	}
	if len(args) > 0 {
		n.Args = args
	}
	id, err := p.add(n, st.p)
	c.set(id, c.ent, n.Many, true, nil)
	return err
}

// methodOf resolves the step's name to a method (a capability) of c's
// entity, or says what the name is instead.
func (p *planner) methodOf(c cur, st *step) (*catalog.Capability, *abi.Error) {
	var mc *catalog.Capability
	if s := st.name.sym; s != nil {
		switch s.kind {
		case symbol.KindMethod:
			m := s.method
			if m.EntryID != c.ent.cat.EntryID || m.Entity != c.ent.name {
				owner := m.EntryID + ":" + m.Entity
				if s := p.symbols().EntitySym(m.EntryID, m.Entity); s != "" {
					owner += " (" + s + ")"
				}
				return nil, errAt(st.p, abi.CodeUnknownMethod, st.name.raw+" ("+m.Label+") is a method of "+m.EntryID+":"+m.Entity+", not of "+c.ent.qualified(),
					st.name.raw+" belongs to "+owner+"; call it on a row of that entity, or use a method of "+c.ent.name+": "+strings.Join(methodLabels(c.ent), ", "))
			}
			mc = c.ent.cat.CapabilityNamed(m.Capability)
		case symbol.KindRelation:
			return nil, errAt(st.p, abi.CodeUnknownMethod, st.name.raw+" is a relation ("+s.relation.Name+"); drop the parentheses", "."+st.name.raw)
		case symbol.KindEntity:
			return nil, errAt(st.p, abi.CodeUnknownMethod, st.name.raw+" is an entity, not a method of "+c.ent.name, listHint("", "methods of "+c.ent.name, methodLabels(c.ent)))
		}
	}
	if mc == nil {
		mc = c.ent.cat.MethodByLabel(c.ent.name, st.name.text)
	}
	if mc == nil {
		if c.ent.e.RelationNamed(st.name.text) != nil {
			return nil, errAt(st.p, abi.CodeUnknownMethod, st.name.text+" is a relation of "+c.ent.name+"; drop the parentheses", "."+st.name.text)
		}
		if u := unavailableMethod(c.ent, st.name.text); u != nil {
			return nil, errAt(st.p, abi.CodeCatalog, c.ent.name+"."+st.name.raw+" ("+u.Name+") is not executable here: "+u.Unavailable, listHint("", "methods of "+c.ent.name, methodLabels(c.ent)))
		}
		return nil, errAt(st.p, abi.CodeUnknownMethod, c.ent.name+" has no method "+st.name.raw, listHint(st.name.text, "methods of "+c.ent.name, methodLabels(c.ent)))
	}
	return mc, nil
}

// callArgs binds the call's arguments into n: literals into args (checked
// against their value domains), references into ArgRefs, text with ${…}
// into templates; a parameter may be given once.
func (p *planner) callArgs(n *plan.Node, c cur, mc *catalog.Capability, st *step, args map[string]any, supplied map[string]bool) *abi.Error {
	label := catalog.MethodLabel(mc)
	for _, a := range st.args {
		if a.val.kind == vUnion {
			_, _, err := p.val(a.val)
			return err
		}
		k := a.key.text
		prm := mc.Param(k)
		if prm == nil && !mc.OpenInput {
			return errAt(a.key.p, abi.CodeUnknownField, c.ent.name+"."+label+" has no parameter "+a.key.raw, listHint(k, "parameters of "+label, paramNames(mc)))
		}
		if supplied[k] {
			return errAt(a.key.p, abi.CodeType, "parameter "+k+" given twice", "")
		}
		supplied[k] = true
		if t, ok, err := p.interpolation(a.val, k); ok || err != nil {
			addTemplate(n, t)
			if err != nil {
				return err
			}
			continue
		}
		lit, ref, err := p.val(a.val)
		if err != nil {
			return err
		}
		if ref != nil {
			ref.Var = k
			n.ArgRefs = append(n.ArgRefs, *ref)
			continue
		}
		if prm != nil {
			if err := p.checkValue(c.ent.cat, prm.ValueRef, lit, a.val.p, k); err != nil {
				return err
			}
		}
		args[k] = lit // an undeclared name is an open input's extra field
	}
	return nil
}

// checkField checks that a transform may name field f of c's rows. It is
// a function, not a closure: the guest calls a closure indirectly, and the
// meter ticks after every indirect call.
func checkField(c *cur, f *name) *abi.Error {
	x := &c.ent
	if err := symbolMixup(*f, true); err != nil && x.e.FieldNamed(f.text) == nil {
		return err
	}
	if x.e.FieldNamed(f.text) == nil {
		return errAt(f.p, abi.CodeUnknownField, x.name+" has no field "+f.raw, listHint(f.text, "fields of "+x.name, fieldNames(x.e)))
	}
	if c.proj != nil && !slices.Contains(c.proj, f.text) {
		return errAt(f.p, abi.CodeUnknownField, f.text+" was dropped by the projection ["+strings.Join(c.proj, ", ")+"]", "project after sorting and filtering")
	}
	return nil
}

func (p *planner) transform(c *cur, st *step) *abi.Error {
	if c.cols != nil {
		return p.colsTransform(c, st)
	}
	if c.ent.cat == nil {
		return errAt(st.p, abi.CodeType, "page(…) rows cannot take further steps", "")
	}
	var t plan.Transform
	x := c.ent
	switch st.kind {
	case stLimit:
		t = plan.Transform{Kind: plan.TLimit, N: st.n}
	case stSort:
		if err := checkField(c, st.field); err != nil {
			return err
		}
		if err := p.hydrate(c, []string{st.field.text}, st.p); err != nil {
			return err
		}
		t = plan.Transform{Kind: plan.TSort, Field: st.field.text, Desc: st.desc}
	case stFilter:
		t = plan.Transform{Kind: plan.TFilter}
		for i := range st.preds {
			pr := &st.preds[i]
			if err := checkField(c, &pr.field); err != nil {
				return err
			}
			lit, ref, err := p.val(pr.val)
			if err != nil {
				return err
			}
			pd, err := p.filterPred(x, evPred{pred: *pr, lit: lit, ref: ref})
			if err != nil {
				return err
			}
			t.Preds = append(t.Preds, pd)
		}
		var fs []string
		for _, pd := range t.Preds {
			fs = append(fs, pd.Field)
		}
		if err := p.hydrate(c, fs, st.p); err != nil {
			return err
		}
	case stProject:
		for i := range st.fields {
			f := &st.fields[i]
			if err := checkField(c, f); err != nil {
				return err
			}
			if slices.Contains(t.Fields, f.text) {
				return errAt(f.p, abi.CodeType, f.text+" is listed twice in the projection", "")
			}
			if t.Fields == nil {
				t.Fields = p.pa.strs.slice(len(st.fields))
			}
			t.Fields = append(t.Fields, f.text)
		}
		if err := p.hydrate(c, t.Fields, st.p); err != nil {
			return err
		}
		t.Kind = plan.TProject
		c.proj = t.Fields
	default:
		return p.computeStep(c, st)
	}
	if !c.own {
		n := baseNode(plan.OpTransform, x)
		n.Input, n.Many = c.node, c.many
		id, err := p.add(n, st.p)
		if err != nil {
			return err
		}
		c.node, c.own = id, true
	}
	n := &p.nodes[c.node]
	if n.Transforms == nil {
		n.Transforms = p.pa.transforms.slice(2)
	}
	n.Transforms = append(n.Transforms, t)
	return nil
}
