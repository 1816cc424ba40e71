package decode

import (
	"slices"

	"github.com/plasmd/plasmd/internal/model/extract"
)

// idFallback is Plasm's identity fallback for the id column: the id
// field's own name as a top-level key (when its wire path is elsewhere),
// then extract.IDFallbackKeys, leaving out the key the column already
// reads. Nil when the id is derived (its value is computed, not read) or
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
	var keys []string
	for _, k := range append([]string{idField}, extract.IDFallbackKeys...) {
		if k != own && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return &extract.IDFallback{Column: col, Keys: keys}
}
