package decode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// selectItems finds the row objects in a decoded body according to the
// mapping's response shape. A missing or null collection is an empty page;
// a collection of the wrong kind is an error (the catalog does not describe
// this backend's answer).
func selectItems(doc any, r *catalog.Response) ([]any, error) {
	if r == nil {
		return either(doc, "the response")
	}
	node := doc
	for i, k := range r.ItemsPath {
		if node == nil {
			return nil, nil
		}
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected an object at %s, got %s", where(r.ItemsPath[:i]), kindOf(node))
		}
		node = obj[k]
	}
	at := where(r.ItemsPath)
	var items []any
	switch {
	case r.Single:
		switch t := node.(type) {
		case nil:
		case map[string]any:
			items = []any{t}
		default:
			return nil, fmt.Errorf("expected one object at %s, got %s", at, kindOf(node))
		}
	case r.Items || len(r.ItemsPath) > 0:
		switch t := node.(type) {
		case nil:
		case []any:
			items = t
		default:
			return nil, fmt.Errorf("expected an array at %s, got %s", at, kindOf(node))
		}
	default:
		var err error
		if items, err = either(node, at); err != nil {
			return nil, err
		}
	}
	if r.ItemInnerKey == "" {
		return items, nil
	}
	inner := make([]any, 0, len(items))
	for i, it := range items {
		switch t := it.(type) {
		case nil:
		case map[string]any:
			inner = append(inner, t[r.ItemInnerKey])
		default:
			return nil, fmt.Errorf("item %d at %s is %s, expected an object holding %q", i, at, kindOf(it), r.ItemInnerKey)
		}
	}
	return inner, nil
}

// either treats an array as a list of rows and an object as one row.
func either(node any, at string) ([]any, error) {
	switch t := node.(type) {
	case nil:
		return nil, nil
	case []any:
		return t, nil
	case map[string]any:
		return []any{t}, nil
	}
	return nil, fmt.Errorf("expected an object or an array at %s, got %s", at, kindOf(node))
}

// materialize walks a from_parent_get path from each parent: key steps
// descend into objects, wildcard steps fan out over arrays, and an array
// reached by the last step is iterated. Missing or null values end that
// branch quietly (the parent has no such rows).
func materialize(parents []any, path []catalog.PathStep) ([]any, error) {
	cur := parents
	for i, st := range path {
		var next []any
		for _, v := range cur {
			if v == nil {
				continue
			}
			switch {
			case st.Wildcard:
				l, ok := v.([]any)
				if !ok {
					return nil, fmt.Errorf("step %d (wildcard) expected an array, got %s", i+1, kindOf(v))
				}
				next = append(next, l...)
			case st.Key != "":
				obj, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("step %d (key %q) expected an object, got %s", i+1, st.Key, kindOf(v))
				}
				if e, ok := obj[st.Key]; ok && e != nil {
					next = append(next, e)
				}
			default:
				return nil, fmt.Errorf("step %d is neither a key nor a wildcard", i+1)
			}
		}
		cur = next
	}
	var out []any
	for _, v := range cur {
		if l, ok := v.([]any); ok {
			out = append(out, l...)
		} else {
			out = append(out, v)
		}
	}
	return out, nil
}

// walk follows object keys; ok is false when a step is missing or lands on
// something that is not an object.
func walk(v any, path []string) (any, bool) {
	for _, k := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func where(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	return strings.Join(path, ".")
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, int64, float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}
