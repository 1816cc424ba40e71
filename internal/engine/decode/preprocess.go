package decode

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// preprocess applies a mapping's response_preprocess rule to the decoded
// body. Rules that replace the root put their list where the response's
// items path says rows are. A body the rule does not fit is returned as is.
func preprocess(doc any, r *catalog.Response, vars map[string]any) any {
	if r == nil || r.Preprocess == nil {
		return doc
	}
	pp := r.Preprocess
	at, ok := walk(doc, pp.Path)
	if !ok {
		return doc
	}
	list, ok := at.([]any)
	if !ok {
		return doc
	}
	switch pp.Kind {
	case catalog.PreArrayFindPluck:
		want, ok := vars[pp.IDVar]
		if !ok || want == nil {
			return doc
		}
		rows := []any{}
		for _, it := range list {
			obj, ok := it.(map[string]any)
			if !ok || !sameScalar(obj[pp.IDField], want) {
				continue
			}
			if nested, ok := obj[pp.NestedArray].([]any); ok {
				rows = nested
			}
			break
		}
		return rewrap(rows, r.ItemsPath)
	case catalog.PreConcatFieldArrays:
		rows := []any{}
		for _, it := range list {
			if obj, ok := it.(map[string]any); ok {
				if part, ok := obj[pp.FromEach].([]any); ok {
					rows = append(rows, part...)
				}
			}
		}
		return rewrap(rows, r.ItemsPath)
	case catalog.PreStringIDsToObjects:
		objs := make([]any, 0, len(list))
		for _, it := range list {
			if s, ok := it.(string); ok {
				objs = append(objs, map[string]any{pp.Field: s})
			}
		}
		return replaceAt(doc, pp.Path, objs)
	}
	return doc
}

// rewrap builds a body holding rows at path.
func rewrap(rows []any, path []string) any {
	var out any = rows
	for i := len(path) - 1; i >= 0; i-- {
		out = map[string]any{path[i]: out}
	}
	return out
}

// replaceAt returns doc with the value at path (which exists) replaced.
func replaceAt(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	obj := doc.(map[string]any)
	out := make(map[string]any, len(obj))
	for k, x := range obj {
		out[k] = x
	}
	out[path[0]] = replaceAt(obj[path[0]], path[1:], v)
	return out
}

// sameScalar compares an id from the body with a call variable by their
// text, so 7, 7.0 and "7" match as Plasm's id comparison does.
func sameScalar(a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	return fmt.Sprint(plain(a)) == fmt.Sprint(plain(b))
}
