package server

import (
	"bytes"
	"encoding/json"
	"strings"
)

// duplicateKey finds the first object key that a JSON value repeats, by
// its path (`entry_id`, `a.b`, `list[].x`). encoding/json keeps the last
// of repeated keys without a word, so {"entry_id":"tracker",
// "entry_id":"kanban"} opened a kanban session while a reader (or a
// proxy, or a log) of the body sees tracker first; routes that accept
// exactly their documented fields refuse the ambiguity instead. Malformed
// JSON reports nothing: the decoder explains it. It reads one value.
func duplicateKey(body []byte) (string, bool) {
	type frame struct {
		keys      map[string]struct{}
		path      string
		obj       bool
		expectKey bool
		key       string
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", false
			}
			continue
		}
		if top != nil && top.obj && top.expectKey {
			k, _ := tok.(string)
			if _, seen := top.keys[k]; seen {
				return joinPath(top.path, k), true
			}
			top.keys[k], top.key, top.expectKey = struct{}{}, k, false
			continue
		}
		// A value: of the top object's current key, an array item, or the
		// whole body.
		path := ""
		switch {
		case top != nil && top.obj:
			path, top.expectKey = joinPath(top.path, top.key), true
		case top != nil:
			path = top.path + "[]"
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]struct{}{}, path: path, obj: true, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{path: path})
		default:
			if top == nil {
				return "", false // a scalar body
			}
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return strings.Join([]string{parent, key}, ".")
}
