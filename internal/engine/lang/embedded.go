package lang

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Relations followed from embedded rows. Plasm decodes a from_parent_get
// relation's objects with their own embedded relations (its decoder test
// LangItem → summary → detail): `LangItem("i1").summary.detail` reads the
// detail object inside the summary object inside LangItem's get answer.
// plasmd follows a from_parent_get relation by reading the parent's get
// again, which an entity that only ever appears embedded does not have.
// For such an entity the hop is composed with the one that embedded its
// rows: the outer parent's get is read once and the relation's rows are
// taken at the two paths joined (relation "summary.detail", which the
// decode spec resolves step by step). An entity that has a get keeps the
// usual way (re-read by its get), so rows that embed only ids, such as
// hackernews's kids, still get their own relations from their own reads.

// embeddedHop plans st (a from_parent_get relation rel of c's entity)
// when c's entity has no get. handled is false when the usual hop applies.
func (p *planner) embeddedHop(c *cur, st *step, rel *catalog.Relation) (handled bool, err *abi.Error) {
	if rel.Materialize.Kind != catalog.FromParentGet || c.ent.cat == nil || p.getCap(c.ent) != nil {
		return false, nil
	}
	rn := st.name.text
	var prev *plan.Node
	if c.node >= 0 && c.node < len(p.nodes) {
		prev = &p.nodes[c.node]
	}
	if prev == nil || prev.Op != plan.OpHop || prev.Hop == nil || prev.Hop.Materialize != catalog.FromParentGet ||
		len(prev.Transforms) > 0 || c.proj != nil || c.pend != pendNone {
		return true, errAt(st.p, abi.CodeCatalog,
			"relation "+c.ent.name+"."+rn+" is read from inside "+c.ent.name+" objects, and "+c.ent.name+" has no get to read these rows again: it can only be followed straight from the relation that embedded them",
			"follow it with no step between: Parent(…).<embedding relation>."+rn+", then sort, filter, limit or project the "+rel.Target+" rows")
	}
	target := c.ent.cat.Entities[rel.Target]
	if target == nil {
		return true, errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" targets unknown entity "+rel.Target, "the catalog is inconsistent; report it to its maintainer")
	}
	tx := ent{cat: c.ent.cat, e: target, name: rel.Target}
	tid := idField(target)
	var have []string
	if tid != "" {
		have = []string{tid} // only the id is certain in an embedded object
	}
	distinct := ""
	if rel.Cardinality == "one" {
		distinct = tid
	}
	many := c.many || rel.Cardinality != "one"
	if c.own {
		// The chain made the embedding hop and nothing else reads it:
		// it becomes the composed hop, so the parent is read once.
		h := prev.Hop
		h.Relation, h.Target, h.DistinctBy = h.Relation+"."+rn, rel.Target, distinct
		prev.Entity, prev.Columns, prev.Many = tx.name, fieldNames(target), many
		c.set(c.node, tx, many, true, have)
		return true, nil
	}
	// A label's hop is shared: the composed hop is a node of its own over
	// the same parents.
	h := p.pa.hops.put(plan.Hop{Relation: prev.Hop.Relation + "." + rn, Materialize: catalog.FromParentGet, Target: rel.Target,
		Capability: prev.Hop.Capability, Binds: append(p.pa.binds.empty(len(prev.Hop.Binds)), prev.Hop.Binds...), DistinctBy: distinct})
	n := baseNode(plan.OpHop, tx)
	n.Kind, n.Hop, n.Input, n.Many = "relation", h, prev.Input, many
	id, err := p.add(n, st.p)
	c.set(id, tx, many, true, have)
	return true, err
}

// refRelation is rel, or, for a relation declared without materialize
// that Plasm follows as a reference embedded in the parent's object
// (catalog.EmbeddedPath), the same relation embedded at that path: its
// target rows are the objects under the relation's name in the parent's
// get answer (the reference's id, and whatever else the backend embeds;
// a projection of more reads the target's get). A relation a view
// outputs, or any other declared-only relation, is left as it is.
func (p *planner) refRelation(c *cur, st *step, rel *catalog.Relation) *catalog.Relation {
	if rel.Materialize.Kind != "" || c.ent.cat == nil {
		return rel
	}
	path, ok := c.ent.cat.EmbeddedPath(c.ent.name, st.name.text)
	if !ok {
		return rel
	}
	r := *rel
	r.Materialize = catalog.Materialize{Kind: catalog.FromParentGet, Path: path}
	return &r
}
