package lang

import (
	"slices"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// ent is a resolved, usable entity of one catalog.
type ent struct {
	cat  *catalog.Catalog
	e    *catalog.Entity
	name string
}

func (x ent) qualified() string { return x.cat.EntryID + ":" + x.name }

// sessionEntries returns the catalogs a program may use, in session order.
// With no entries listed every loaded catalog is usable (native callers and
// tests); the host always lists the session's entries.
func sessionEntries(req *abi.PlanRequest, cats map[string]*catalog.Catalog, out []*catalog.Catalog) []*catalog.Catalog {
	if len(req.Entries) == 0 {
		ids := make([]string, 0, len(cats))
		for id, c := range cats {
			if c != nil {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, cats[id])
		}
		return out
	}
	for i, id := range req.Entries {
		// A repeated id is skipped; sessions list a handful of entries, so
		// a scan is cheaper than a set (string hashing is slow in Wasm).
		if c := cats[id]; c != nil && !slices.Contains(req.Entries[:i], id) {
			out = append(out, c)
		}
	}
	return out
}

func (p *planner) entryIDs() []string {
	out := make([]string, len(p.entries))
	for i, c := range p.entries {
		out[i] = c.EntryID
	}
	return out
}

// entry finds a session catalog by entry id or registry alias.
func (p *planner) entry(q string) *catalog.Catalog {
	for _, c := range p.entries {
		if c.EntryID == q {
			return c
		}
	}
	for _, c := range p.entries {
		if slices.Contains(c.RegistryAliases, q) {
			return c
		}
	}
	return nil
}

// entityNames lists every usable entity name of the session (plus labels
// bound so far) for suggestions.
func (p *planner) entityNames() []string {
	var out []string
	for _, c := range p.entries {
		for name, e := range c.Entities {
			if e != nil && !e.Abstract && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (p *planner) isEntityName(s string) bool {
	for _, c := range p.entries {
		if e := c.EntityNamed(s); e != nil {
			return true
		}
	}
	return false
}

// entity resolves a name in entity position.
func (p *planner) entity(n name) (ent, *abi.Error) {
	if n.sym != nil {
		switch n.sym.kind {
		case symbol.KindEntity:
			se := n.sym.entity
			// The symbol already names its catalog; a qualifier may only
			// repeat it (by entry id or alias), never redirect it.
			if n.qual != "" {
				if q := p.entry(n.qual); q == nil || q.EntryID != se.EntryID {
					sym := n.sym.name
					return ent{}, errAt(n.p, abi.CodeUnknownEntity,
						n.qual+":"+sym+" names two catalogs: "+sym+" is "+se.EntryID+":"+se.Name+", not an entity of "+n.qual,
						sym+" belongs to catalog "+se.EntryID+"; write "+sym+" alone, or "+n.qual+":"+se.Name+" for the entity of "+n.qual)
				}
			}
			c := p.entry(se.EntryID)
			if c == nil {
				return ent{}, errAt(n.p, abi.CodeUnknownEntity, n.raw+" belongs to catalog "+se.EntryID+", which is not part of this session", symbolHint)
			}
			return p.usable(c, se.Name, n)
		case symbol.KindMethod:
			m := n.sym.method
			return ent{}, errAt(n.p, abi.CodeUnknownEntity, n.raw+" is a method symbol ("+m.Entity+"."+m.Label+"), not an entity",
				"call it on its entity: "+p.entitySym(m.EntryID, m.Entity)+"."+n.raw+"(…)")
		case symbol.KindRelation:
			r := n.sym.relation
			return ent{}, errAt(n.p, abi.CodeUnknownEntity, n.raw+" is a relation symbol ("+r.Entity+"."+r.Name+"), not an entity",
				"follow it from a row: "+p.entitySym(r.EntryID, r.Entity)+"(id)."+n.raw)
		}
	}
	if n.qual != "" {
		c := p.entry(n.qual)
		if c == nil {
			return ent{}, errAt(n.p, abi.CodeUnknownEntity, "catalog "+n.qual+" is not part of this session",
				listHint(n.qual, "catalogs", p.entryIDs()))
		}
		return p.usable(c, n.text, n)
	}
	var found []*catalog.Catalog
	abstract := false
	for _, c := range p.entries {
		if e := c.EntityNamed(n.text); e != nil {
			if hidden(c, n.text, e) {
				abstract = true
				continue
			}
			found = append(found, c)
		}
	}
	switch {
	case len(found) == 1:
		return p.usable(found[0], n.text, n)
	case len(found) > 1:
		opts := make([]string, len(found))
		for i, c := range found {
			opts[i] = c.EntryID + ":" + n.text
			if s := p.symbols().EntitySym(c.EntryID, n.text); s != "" {
				opts[i] += " (" + s + ")"
			}
		}
		return ent{}, errAt(n.p, abi.CodeUnknownEntity, "ambiguous entity "+n.text+": several catalogs define it",
			"qualify it: "+strings.Join(opts, " or "))
	case abstract:
		return ent{}, errAt(n.p, abi.CodeUnknownEntity, n.text+" is abstract and has no capability of its own: it is reached through relations", listHint("", "entities", p.entityNames()))
	}
	if at, ok := p.boundLater.get(n.text); ok {
		return ent{}, errAt(n.p, abi.CodeUnknownEntity, "label "+n.text+" is used before it is bound (line "+strconv.Itoa(at.line)+")",
			"move the binding above its first use")
	}
	cands := append(p.entityNames(), p.labelNames()...)
	return ent{}, errAt(n.p, abi.CodeUnknownEntity, "unknown entity or label "+n.raw, listHint(n.text, "entities and labels", cands))
}

func (p *planner) usable(c *catalog.Catalog, name string, n name) (ent, *abi.Error) {
	e := c.EntityNamed(name)
	if e == nil {
		var names []string
		for k, x := range c.Entities {
			if x != nil && !x.Abstract {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		return ent{}, errAt(n.p, abi.CodeUnknownEntity, "catalog "+c.EntryID+" has no entity "+name, listHint(name, "entities of "+c.EntryID, names))
	}
	if hidden(c, name, e) {
		return ent{}, errAt(n.p, abi.CodeUnknownEntity, c.EntryID+":"+name+" is abstract and has no capability of its own: it is reached through relations", "")
	}
	return ent{cat: c, e: e, name: name}, nil
}

// hidden reports an abstract entity a program cannot name: one with no
// capability of its own. Plasm's abstract keeps an entity out of the
// teaching table, not out of programs: Linear's IssueContext and
// MyWorkSnapshot are abstract views its README reads as IssueContext(ENG-42).
func hidden(c *catalog.Catalog, name string, e *catalog.Entity) bool {
	return e.Abstract && len(c.CapabilitiesOf(name)) == 0
}

// entGet is one remembered answer of getCap.
type entGet struct {
	cat  *catalog.Catalog
	name string
	gc   *catalog.Capability
}

// getCap is x.cat.GetCapability(x.name), remembered for the rest of the
// call: planning asks for the same entity's get at several steps, and each
// answer costs two or three map lookups by string, which the Wasm guest
// hashes in software. Catalogs do not change during a call.
func (p *planner) getCap(x ent) *catalog.Capability {
	for _, g := range p.gets {
		if g.cat == x.cat && g.name == x.name {
			return g.gc
		}
	}
	gc := x.cat.GetCapability(x.name)
	p.gets = append(p.gets, entGet{x.cat, x.name, gc})
	return gc
}

func (p *planner) symbols() *symbol.Map {
	if p.req.Symbols == nil {
		return &symbol.Map{}
	}
	return p.req.Symbols
}

// entitySym is the taught symbol of an entity, or its qualified name.
func (p *planner) entitySym(entryID, name string) string {
	if s := p.symbols().EntitySym(entryID, name); s != "" {
		return s
	}
	return entryID + ":" + name
}

func (p *planner) labelNames() []string {
	out := slices.Clone(p.labels.keys)
	slices.Sort(out)
	return out
}

// idField is the field that identifies a row, or "" for compound keys.
func idField(e *catalog.Entity) string {
	switch {
	case e.IDField != "":
		return e.IDField
	case len(e.KeyVars) == 1:
		return e.KeyVars[0]
	case len(e.KeyVars) == 0 && e.FieldNamed("id") != nil:
		return "id"
	}
	return ""
}

func fieldNames(e *catalog.Entity) []string {
	if len(e.FieldOrder) > 0 {
		return e.FieldOrder
	}
	out := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func relationNames(e *catalog.Entity) []string {
	if len(e.RelOrder) > 0 {
		return e.RelOrder
	}
	out := make([]string, 0, len(e.Relations))
	for k := range e.Relations {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func paramNames(c *catalog.Capability) []string {
	out := make([]string, len(c.Parameters))
	for i, pr := range c.Parameters {
		out[i] = pr.Name
	}
	return out
}

// methodLabels lists the write methods of an entity by label.
func methodLabels(x ent) []string {
	var out []string
	for _, c := range x.cat.CapabilitiesOf(x.name) {
		if !c.IsRead() {
			out = append(out, catalog.MethodLabel(c))
		}
	}
	return out
}
