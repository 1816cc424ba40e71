package lang

import (
	"slices"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// singletonRead returns the capability that reads an entity's only row
// (Plasm's singleton kind: the current user, account settings) when the
// entity has one and no query: then a bare Entity means that row.
func singletonRead(x ent) *catalog.Capability {
	if x.cat.FirstOfKind(x.name, catalog.KindQuery) != nil {
		return nil
	}
	return x.cat.FirstOfKind(x.name, catalog.KindSingleton)
}

// fetchSingleton plans the one-row read of a singleton entity. It takes no
// id; its parameters, if any, must be optional.
func (p *planner) fetchSingleton(c *cur, sc *catalog.Capability) *abi.Error {
	if pr := requiredParam(sc); pr != "" {
		return errAt(c.at, abi.CodeCatalog, c.ent.name+" is read by "+sc.Name+", which requires "+pr+"; a singleton read takes no required input", "")
	}
	n := baseNode(plan.OpFetch, c.ent)
	n.Kind, n.Capability = sc.Kind, sc.Name
	id, err := p.add(n, c.at)
	c.set(id, c.ent, false, true, nil)
	return err
}

// requiredParam is the first parameter cp requires, "" when none: a
// singleton read takes no required input.
func requiredParam(cp *catalog.Capability) string {
	for _, pr := range cp.Parameters {
		if pr.Required {
			return pr.Name
		}
	}
	return ""
}

// parameterless reports whether a get can be read like a singleton (Plasm's
// parameterless get, Linear's user_viewer): fetchSingleton's rule, no
// required parameter, and a request that reads no variable at all, so no
// input the call would need is left unsent.
func parameterless(cat *catalog.Catalog, cp *catalog.Capability) bool {
	if requiredParam(cp) != "" {
		return false
	}
	m := cat.Mappings[cp.Name]
	if m == nil {
		return true
	}
	if m.IDVar != "" || slices.ContainsFunc(m.Path, func(sg catalog.Segment) bool { return sg.Type == "var" }) {
		return false
	}
	anyVar := func(string) bool { return true }
	return !exprVars(m.Query, anyVar, 0) && !exprVars(m.Body, anyVar, 0) && !exprVars(m.Headers, anyVar, 0)
}

// idBound reports whether parameter name of cp receives the row's id: it
// is the mapping's id variable (Plasm's single path variable, see
// catalog.Mapping.IDVar) and the call supplies the id, which the compiler
// then copies into it.
func idBound(cat *catalog.Catalog, cp *catalog.Capability, name string, supplied map[string]bool) bool {
	m := cat.Mappings[cp.Name]
	return m != nil && m.IDVar == name && supplied["id"]
}

// preflight plans a capability's hydrate_invoke_target steps: a get of the
// target row with the same keys, whose fields the call receives as
// <prefix>_<field> variables. It returns the call's argument references:
// the keys' own, then one per field of each preflight row.
func (p *planner) preflight(c cur, mc *catalog.Capability, keys map[string]any, keyRefs []plan.ArgRef, at pos) ([]plan.ArgRef, *abi.Error) {
	refs := keyRefs
	for _, step := range mc.Preflight {
		gc := c.ent.cat.CapabilityNamed(step.Get)
		if gc == nil || gc.Unavailable != "" {
			return nil, errAt(at, abi.CodeCatalog, mc.Name+" reads its target with "+step.Get+", which cannot run here", "")
		}
		ge := c.ent
		if gc.Entity != c.ent.name {
			ge = ent{cat: c.ent.cat, e: c.ent.cat.EntityNamed(gc.Entity), name: gc.Entity}
			if ge.e == nil {
				return nil, errAt(at, abi.CodeCatalog, step.Get+" reads unknown entity "+gc.Entity, "")
			}
		}
		g := baseNode(plan.OpFetch, ge)
		g.Kind, g.Capability, g.ArgRefs = gc.Kind, gc.Name, slices.Clone(keyRefs)
		if len(keys) > 0 {
			g.Args = make(map[string]any, len(keys))
			for k, v := range keys {
				g.Args[k] = v
			}
		}
		id, err := p.add(g, at)
		if err != nil {
			return nil, err
		}
		for _, f := range g.Columns {
			refs = append(refs, plan.ArgRef{Var: step.Prefix + "_" + f, Node: id, Field: f})
		}
	}
	return refs, nil
}
