package core

// Identity returns the fields that identify an entity's rows in the catalog
// at entryID: every key field of a compound key, else its id field; nil
// when the entity has none (Plasm's implicit request identity, or a list of
// id-less records). The executor compares a list's pages by them
// (executor.OverlapError): rows are the same row only when their ids are.
func (r *Registry) Identity(entryID, entity string) []string {
	c, ok := r.Resolve(entryID)
	if !ok || c == nil {
		return nil
	}
	e := c.Entities[entity]
	if e == nil {
		for _, cand := range c.Entities {
			for _, a := range cand.Aliases {
				if a == entity {
					e = cand
				}
			}
		}
	}
	switch {
	case e == nil:
		return nil
	case len(e.KeyVars) > 1:
		return e.KeyVars
	case e.IDField != "":
		return []string{e.IDField}
	}
	return nil
}
