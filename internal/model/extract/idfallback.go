package extract

import (
	"encoding/json"
	"strconv"
)

// IDFallback fills a row's id column, when the item has no value at the id
// field's path, from the first of Keys the item holds as a string or a
// number, as Plasm's decoder does: its identity falls back to "id", "_id",
// "uuid", "key", then Algolia's "objectID" (hackernews's search hits carry
// their item id only as objectID).
type IDFallback struct {
	Column int      `json:"column"`
	Keys   []string `json:"keys"`
}

// IDFallbackKeys are the top-level keys Plasm tries, in order, after the
// id field itself.
var IDFallbackKeys = []string{"id", "_id", "uuid", "key", "objectID"}

// fillID applies f to row, decoded from obj.
func (f *IDFallback) fillID(cols []Column, row []any, obj map[string]any) {
	if f.Column < 0 || f.Column >= len(row) || row[f.Column] != nil {
		return
	}
	for _, k := range f.Keys {
		if v, ok := idValue(obj[k], cols[f.Column].Type); ok {
			row[f.Column] = v
			return
		}
	}
}

// idValue is v as an id of a column of type typ: a string (an integer
// column takes "42" as 42, as Plasm's backfill does) or a number; anything
// else is no id.
func idValue(v any, typ string) (any, bool) {
	switch x := v.(type) {
	case string:
		if typ == "integer" {
			// An integer id never takes other text: "abc" would be an id
			// no get of the entity can answer. An integer literal is what
			// a column of the type holds (the integer within ±2^53, else
			// the text); "042" and "+42" are 42, as they always were here.
			if integerLiteral(x) {
				return coerce(x, typ), true
			}
			i, err := strconv.ParseInt(x, 10, 64)
			return i, err == nil
		}
		return x, true
	case json.Number:
		return coerce(x, typ), true
	case float64, int64, int:
		return x, true
	}
	return nil, false
}
