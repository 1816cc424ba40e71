package core

import "github.com/plasmd/plasmd/internal/model/catalog"

// Dates returns the date fields of an entity's rows in the catalog at
// entryID, each with its value_format ("" when the catalog declares none):
// the executor compares them as instants, not as the text a backend wrote
// (executor.Env.Dates). An alias names its entity as Identity resolves it;
// an ambiguous alias, an unknown entity or one without date fields gives
// nil.
func (r *Registry) Dates(entryID, entity string) map[string]string {
	c, ok := r.Resolve(entryID)
	if !ok || c == nil {
		return nil
	}
	return entityDates(c, entity)
}

func entityDates(c *catalog.Catalog, entity string) map[string]string {
	e := entityNamed(c, entity)
	if e == nil {
		return nil
	}
	var out map[string]string
	for name, f := range e.Fields {
		if f == nil {
			continue
		}
		v := c.ValueNamed(f.ValueRef)
		if v == nil || v.Type != "date" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = v.ValueFormat
	}
	return out
}
