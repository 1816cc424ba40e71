package decode

import (
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// embedded resolves the relation a from_parent_get hop decodes, starting
// at ent (the entity of the capability read): one relation name, or a
// chain "summary.detail" of from_parent_get relations, each embedded in
// the objects of the one before (Plasm's LangItem → LangSummary →
// LangDetail). The chain's path is the steps' paths in order, so the last
// relation's rows are found inside the parent's one answer. A declared
// cardinality-one relation counts as embedded under its own name
// (catalog.EmbeddedPath). Each relation of the chain is a hop with its
// own steps and cardinality, which the decoder enforces per parent
// (extract.Hop). invalid says why the relation cannot be decoded ("" when
// it can).
func embedded(cat *catalog.Catalog, ent *catalog.Entity, relation string) (path []catalog.PathStep, hops []extract.Hop, target *catalog.Entity, invalid string) {
	names := []string{relation}
	if ent.Relations[relation] == nil && strings.Contains(relation, ".") {
		names = strings.Split(relation, ".")
	}
	for _, name := range names {
		rel := ent.Relations[name]
		if rel == nil {
			return nil, nil, nil, fmt.Sprintf("entity %s has no relation %q", ent.Name, name)
		}
		steps, ok := cat.EmbeddedPath(ent.Name, name)
		if !ok {
			return nil, nil, nil, fmt.Sprintf("relation %s.%s is %s, not embedded in the parent (%s)", ent.Name, name, rel.Materialize.Kind, catalog.FromParentGet)
		}
		if ent = cat.Entities[rel.Target]; ent == nil {
			return nil, nil, nil, fmt.Sprintf("relation %q targets unknown entity %q", name, rel.Target)
		}
		path = append(path, steps...)
		hops = append(hops, extract.Hop{Name: name, Steps: len(steps), One: rel.Cardinality == "one"})
		// An entity embedding itself (Node.kids → Node) chains without
		// end; past the decoder's path limit no answer could hold the
		// rows, and the host refuses such a spec.
		if len(path) > extract.MaxPath || len(hops) > extract.MaxPath {
			return nil, nil, nil, fmt.Sprintf("relation chain %.64q reaches %d path steps, limit %d", relation, len(path), extract.MaxPath)
		}
	}
	return path, hops, ent, ""
}
