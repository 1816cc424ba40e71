package decode

import (
	"slices"

	"github.com/plasmd/plasmd/internal/model/extract"
)

// idFallback is Plasm's identity fallback for the id column: the id
// field's own name as a top-level key (when its wire path is elsewhere),
// then, when the id field is itself one of extract.IDFallbackKeys, the
// others, leaving out the key the column already reads. Nil when the id is derived (its value is computed, not read) or
// is not a column.
func idFallback(cols []extract.Column, idField string, path []string) *extract.IDFallback {
	col := -1
	for i, c := range cols {
		if c.Name == idField && c.Derive == nil {
			col = i
		}
	}
	if col < 0 {
		return nil
	}
	own := ""
	if len(path) == 1 {
		own = path[0]
	}
	// An entity whose id is a field of its own (a login, a slug) falls
	// back only to that name: another key's value ("id", "key") is a
	// different identity, and a get by it would fetch another row or
	// none.
	candidates := []string{idField}
	if slices.Contains(extract.IDFallbackKeys, idField) {
		candidates = append(candidates, extract.IDFallbackKeys...)
	}
	var keys []string
	for _, k := range candidates {
		if k != own && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &extract.IDFallback{Column: col, Keys: keys}
}
