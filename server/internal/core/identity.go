package core

// Identity returns the ways the catalog at entryID identifies an entity's
// rows, best first: every key field of a compound key, then its id field
// (a list whose mapping lacks a key field, such as a path variable, is
// still compared by the id field); nil when the entity has none (Plasm's
// implicit request identity, or a list of id-less records). An alias
// names the entity it belongs to; one that several entities share names
// none, rather than whichever a map walk meets first. The executor
// compares a list's pages by them (executor.OverlapError): rows are the
// same row only when their ids are.
func (r *Registry) Identity(entryID, entity string) [][]string {
	c, ok := r.Resolve(entryID)
	if !ok || c == nil {
		return nil
	}
	e := c.Entities[entity]
	if e == nil {
		for _, cand := range c.Entities {
			for _, a := range cand.Aliases {
				if a != entity {
					continue
				}
				if e != nil && e != cand {
					return nil // an ambiguous alias: compare nothing rather than guess
				}
				e = cand
			}
		}
	}
	if e == nil {
		return nil
	}
	var ways [][]string
	if len(e.KeyVars) > 1 {
		ways = append(ways, e.KeyVars)
	}
	if e.IDField != "" {
		ways = append(ways, []string{e.IDField})
	}
	return ways
}
