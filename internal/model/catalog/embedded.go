package catalog

// EmbeddedPath is where the rows of relation name of entity are found in
// a parent's get answer, when they are found there: a from_parent_get
// relation's path, or, for a relation declared without materialize,
// cardinality one, to a target with an id field and output by no view,
// the object under the relation's own name. Plasm reads the latter as a
// reference (it decodes <relation>.<target id field> from the parent's
// object and reads the target by that id): pokeapi's
// PokemonSpecies.evolution_chain is {"url": …}, github's Issue.user is
// {"login": …, …}. ok is false for every other relation.
func (c *Catalog) EmbeddedPath(entity, name string) (path []PathStep, ok bool) {
	ent := c.Entities[entity]
	if ent == nil {
		return nil, false
	}
	rel := ent.Relations[name]
	if rel == nil {
		return nil, false
	}
	switch rel.Materialize.Kind {
	case FromParentGet:
		return rel.Materialize.Path, true
	case "":
		target := c.Entities[rel.Target]
		if rel.Cardinality != "one" || target == nil || target.IDField == "" {
			return nil, false
		}
		if v, _ := c.ViewRelation(entity, name); v != nil {
			return nil, false // followed from the view's rows instead
		}
		return []PathStep{{Key: name}}, true
	}
	return nil, false
}
