package core

import (
	"slices"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

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
	e := entityNamed(c, entity)
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

// entityNamed is the entity name or an alias of it names in c; nil when
// none does or several share the alias: the callers compare rows by what
// they find, and comparing nothing is better than guessing.
func entityNamed(c *catalog.Catalog, name string) *catalog.Entity {
	if e := c.Entities[name]; e != nil {
		return e
	}
	var e *catalog.Entity
	for _, cand := range c.Entities {
		if !slices.Contains(cand.Aliases, name) {
			continue
		}
		if e != nil && e != cand {
			return nil
		}
		e = cand
	}
	return e
}
