package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// inexactField finds the first key of body, by its path, that
// encoding/json would match to a field of v's type only by ignoring case
// (or by Unicode folding: "entitieſ" is "entities" to it). The decoder
// matches names case-insensitively, so {"entry_id":"tracker",
// "ENTRY_ID":"kanban"} repeated a field that duplicateKey, comparing
// exact names, could not see; and a field spelled in another case is not
// one the route documents. Keys of maps (a free-form object such as
// "secrets") are the caller's and match exactly anyway. Call it after the
// body decoded into v.
func inexactField(body []byte, v any) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil {
		return "", false
	}
	return inexactIn(tree, reflect.TypeOf(v), "")
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func inexactIn(val any, t reflect.Type, path string) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", false // a type that reads its own JSON names its own keys
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			return "", false
		}
		fields := fieldTypes(t)
		for k, sub := range obj {
			ft, known := fields[k]
			if !known {
				return joinPath(path, k), true
			}
			if p, bad := inexactIn(sub, ft, joinPath(path, k)); bad {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		list, _ := val.([]any)
		for _, item := range list {
			if p, bad := inexactIn(item, t.Elem(), path+"[]"); bad {
				return p, true
			}
		}
	case reflect.Map:
		obj, _ := val.(map[string]any)
		for k, sub := range obj {
			if p, bad := inexactIn(sub, t.Elem(), joinPath(path, k)); bad {
				return p, true
			}
		}
	}
	return "", false
}

// fieldTypes maps each exact JSON name of struct t's fields (embedded
// structs' too, as encoding/json promotes them) to the field's type.
func fieldTypes(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range fieldTypes(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
