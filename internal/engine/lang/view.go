package lang

import (
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Views (Plasm's views:): a read of a capability a view serves becomes an
// OpView node that carries the view's steps, so the host runs the
// composition without the catalog. The read's arguments are the view's
// scope: a query's pushed-down predicates by name, a get's id under the
// view entity's id field. A view yields one row, whatever form read it.

// viewNode lowers n in place when its capability is served by a view.
func (p *planner) viewNode(n *plan.Node, at pos) *abi.Error {
	if n.Op != plan.OpFetch || n.Capability == "" {
		return nil
	}
	cat := p.catalogOf(n.EntryID)
	if cat == nil {
		return nil
	}
	v := cat.ViewServing(n.Capability)
	if v == nil {
		return nil
	}
	e := cat.EntityNamed(v.Entity)
	if e == nil {
		return errAt(at, abi.CodeCatalog, "view "+v.Name+" builds rows of unknown entity "+v.Entity, "the catalog is inconsistent; report it to its maintainer")
	}
	if n.Kind == catalog.KindGet {
		scopeID(n, idField(e))
	}
	supplied := map[string]bool{}
	for k := range n.Args {
		supplied[k] = true
	}
	for _, r := range n.ArgRefs {
		supplied[r.Var] = true
	}
	for _, s := range v.Scope {
		// Plasm injects the session's origin; plasmd's is the catalog's
		// backend origin, the one its requests go to.
		if origin := strings.TrimRight(cat.HTTPBackend, "/"); s.Inject != "" && !supplied[s.Name] && origin != "" {
			if n.Args == nil {
				n.Args = map[string]any{}
			}
			n.Args[s.Name], supplied[s.Name] = origin, true
		}
	}
	pv := &plan.View{Name: v.Name}
	for _, s := range v.Scope {
		if !s.Required {
			continue
		}
		if !supplied[s.Name] {
			return errAt(at, abi.CodeType, v.Entity+" is a view ("+v.Name+") that needs "+s.Name, scopeHint(v, n.Kind, s.Name))
		}
		pv.Required = append(pv.Required, s.Name)
	}
	for _, node := range v.Nodes {
		st, err := viewStep(cat, v, node, supplied, n.Kind, at)
		if err != nil {
			return err
		}
		pv.Steps = append(pv.Steps, st)
	}
	for _, o := range v.Output {
		pv.Outputs = append(pv.Outputs, plan.ViewOutput{Field: o.Field, Kind: o.Kind, Param: o.Param, Node: o.Node, Of: o.Of, Equals: o.Equals, Template: o.Template})
	}
	for _, r := range v.Relations {
		var cols []string
		if te := cat.EntityNamed(r.Target); te != nil {
			cols = fieldNames(te)
		}
		pv.Relations = append(pv.Relations, plan.ViewRelation{Relation: r.Relation, Kind: r.Kind, Node: r.Node, Where: r.Where, Equals: r.Equals, Columns: cols})
	}
	n.Op, n.View, n.Many = plan.OpView, pv, false
	return nil
}

// scopeID renames a get's "id" argument to the view entity's id field:
// that is the scope value the view's binds name.
func scopeID(n *plan.Node, idf string) {
	if idf == "" || idf == "id" {
		return
	}
	if v, ok := n.Args["id"]; ok {
		if _, has := n.Args[idf]; !has {
			n.Args[idf] = v
		}
		delete(n.Args, "id")
	}
	var refs []plan.ArgRef
	for _, r := range n.ArgRefs {
		if r.Var == "id" {
			r.Var = idf
		}
		if !slices.ContainsFunc(refs, func(o plan.ArgRef) bool { return o.Var == r.Var }) {
			refs = append(refs, r)
		}
	}
	n.ArgRefs = refs
}

func scopeHint(v *catalog.View, kind, name string) string {
	if kind == catalog.KindGet {
		return "a read by id gives only the id; write " + v.Entity + "{" + name + "=…} if a query of " + v.Entity + " takes it"
	}
	return "give it in the braces: " + v.Entity + "{" + name + "=…}"
}

// viewStep resolves one node of v against the catalog.
func viewStep(cat *catalog.Catalog, v *catalog.View, node catalog.ViewNode, supplied map[string]bool, kind string, at pos) (plan.ViewStep, *abi.Error) {
	cp := cat.CapabilityNamed(node.Capability)
	if cp == nil || cat.EntityNamed(cp.Entity) == nil {
		return plan.ViewStep{}, errAt(at, abi.CodeCatalog, "view "+v.Name+" node "+node.ID+" calls unknown capability "+node.Capability, "the catalog is inconsistent; report it to its maintainer")
	}
	te := cat.EntityNamed(cp.Entity)
	st := plan.ViewStep{ID: node.ID, Capability: cp.Name, Kind: cp.Kind, Entity: cp.Entity, Columns: fieldNames(te)}
	bound := map[string]bool{}
	for _, b := range node.Bind {
		pb := plan.ViewBind{Var: b.Param, Kind: b.Kind, From: b.From, Node: b.Node, Field: b.Field, Value: b.Value, Template: b.Template}
		if b.Kind == catalog.ViewScope && !supplied[b.From] {
			return st, errAt(at, abi.CodeType, v.Entity+" is a view ("+v.Name+") whose step "+node.ID+" needs "+b.From+", which the program does not give", scopeHint(v, kind, b.From))
		}
		if (cp.Kind == catalog.KindQuery || cp.Kind == catalog.KindSearch) && cp.Param(b.Param) == nil {
			if te.FieldNamed(b.Param) == nil {
				return st, errAt(at, abi.CodeCatalog, "view "+v.Name+" node "+node.ID+" binds "+b.Param+", neither a parameter of "+cp.Name+" nor a field of "+cp.Entity, "the catalog is inconsistent; report it to its maintainer")
			}
			pb.Filter = true // Plasm's predicate on a field: kept on the host
		}
		bound[b.Param] = true
		st.Binds = append(st.Binds, pb)
	}
	switch cp.Kind {
	case catalog.KindGet:
		idf := idField(te)
		switch {
		case idf != "" && bound[idf]:
			st.IDFrom = idf
		case len(node.Bind) == 1:
			st.IDFrom = node.Bind[0].Param
		case bound["id"]:
			st.IDFrom = "id"
		case len(node.Bind) == 0 && parameterless(cat, cp):
			// Plasm's parameterless get (Linear's user_viewer, the
			// authenticated user): one row, read like a singleton.
			st.Kind = catalog.KindSingleton
			return st, nil
		case len(node.Bind) == 0 && requiredParam(cp) != "" && !slices.Contains([]string{"id", idf}, requiredParam(cp)):
			return st, errAt(at, abi.CodeCatalog, "view "+v.Name+" node "+node.ID+" leaves "+requiredParam(cp)+" of "+cp.Name+" unbound", "the catalog is inconsistent; report it to its maintainer")
		default:
			return st, errAt(at, abi.CodeCatalog, "view "+v.Name+" node "+node.ID+" reads "+cp.Entity+" by id but binds no id", "the catalog is inconsistent; report it to its maintainer")
		}
		st.IDVars = []string{"id"}
		if idf != "" && idf != "id" && usesVar(cat, cp, idf) {
			st.IDVars = append(st.IDVars, idf)
		}
	default:
		for _, pr := range cp.Parameters {
			if pr.Required && !bound[pr.Name] {
				return st, errAt(at, abi.CodeCatalog, "view "+v.Name+" node "+node.ID+" leaves "+pr.Name+" of "+cp.Name+" unbound", "the catalog is inconsistent; report it to its maintainer")
			}
		}
	}
	return st, nil
}

// catalogOf returns the catalog of an exposed entry, or nil.
func (p *planner) catalogOf(entryID string) *catalog.Catalog {
	for _, c := range p.entries {
		if c != nil && c.EntryID == entryID {
			return c
		}
	}
	return nil
}

// viewHop makes h follow a relation a view outputs, from rows c read
// through the view. ok is false when rel is not a view output.
func (p *planner) viewHop(c cur, st *step, h *plan.Hop) (ok bool, err *abi.Error) {
	v, ro := c.ent.cat.ViewRelation(c.ent.name, st.name.text)
	if v == nil {
		return false, nil
	}
	id := c.node
	for id >= 0 && p.nodes[id].Op == plan.OpTransform {
		id = p.nodes[id].Input
	}
	if id < 0 || p.nodes[id].Op != plan.OpView {
		return true, errAt(st.p, abi.CodeType, "relation "+c.ent.name+"."+ro.Relation+" is filled by view "+v.Name+" as it reads a row",
			"follow it from a read of the view: "+c.ent.name+`("…").`+ro.Relation)
	}
	h.Materialize = plan.MaterializeView
	return true, nil
}

// viewHave is what the rows of a view relation carry: what the step that
// produced them provides.
func viewHave(cat *catalog.Catalog, entity, relation string) []string {
	v, ro := cat.ViewRelation(entity, relation)
	if v == nil {
		return nil
	}
	for _, n := range v.Nodes {
		if n.ID == ro.Node {
			return provided(cat.CapabilityNamed(n.Capability))
		}
	}
	return nil
}

// getScoped builds the hop of a get_scoped_bindings relation: the target's
// get runs once per parent row, its parameters taken from the parent's
// fields. A binding of the target's id also fills the "id" variable every
// get is compiled with.
func (p *planner) getScoped(c cur, st *step, rel *catalog.Relation, h *plan.Hop) *abi.Error {
	cat := c.ent.cat
	gc := cat.CapabilityNamed(rel.Materialize.Capability)
	target := cat.EntityNamed(rel.Target)
	if gc == nil || target == nil {
		return errAt(st.p, abi.CodeCatalog, "relation "+st.name.text+" names unknown capability "+rel.Materialize.Capability, "")
	}
	h.Capability = gc.Name
	tid := idField(target)
	vars := make([]string, 0, len(rel.Materialize.Bindings))
	for v := range rel.Materialize.Bindings {
		vars = append(vars, v)
	}
	slices.Sort(vars)
	for _, v := range vars {
		f := rel.Materialize.Bindings[v]
		if err := p.needField(c, f, st.p, st.name.text); err != nil {
			return err
		}
		h.Binds = append(h.Binds, plan.Bind{Var: v, Field: f})
		if (v == tid || v == "id") && gc.Kind == catalog.KindGet {
			for _, iv := range []string{"id", tid} {
				if iv != "" && iv != v && (iv == "id" || usesVar(cat, gc, iv)) && !slices.ContainsFunc(h.Binds, func(b plan.Bind) bool { return b.Var == iv }) {
					h.Binds = append(h.Binds, plan.Bind{Var: iv, Field: f})
				}
			}
		}
	}
	return nil
}
