package catalogdir

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestInterchangeRefused: a single file in Plasm's CGS interchange form is
// refused with one error at the first sign of it, not with a missing-key
// error for every value, field and capability.
func TestInterchangeRefused(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string // want: "" means the file loads
	}{
		{"value field_type", "http_backend: http://x.invalid\nvalues:\n  v_id:\n    field_type: string\nentities: {}\ncapabilities: {}\n",
			"x.cgs.yaml:4:5: top level: this file is Plasm's CGS interchange form (a serialized CGS, with field_type here)"},
		{"entity field field_type", "version: 1\nhttp_backend: http://x.invalid\nentities:\n  X:\n    name: X\n    id_field: id\n    fields:\n      id: {name: id, field_type: string}\ncapabilities: {}\n",
			"x.cgs.yaml:8:22: top level: this file is Plasm's CGS interchange form"},
		{"capability mapping block", "version: 1\nhttp_backend: http://x.invalid\nentities: {}\ncapabilities:\n  x_list: {name: x_list, kind: query, domain: X, mapping: {template: {}}}\n",
			"with mapping here"},
		{"authoring form", "version: 1\nhttp_backend: http://x.invalid\nvalues: {id: {type: string}}\nentities:\n  X: {id_field: id, fields: {id: {value_ref: id}}}\ncapabilities:\n  x_get: {kind: get, entity: X}\nmappings:\n  x_get: {method: GET, path: [{type: literal, value: x}, {type: var, name: id}]}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{"x.cgs.yaml": {Data: []byte(tc.src)}}, "x.cgs.yaml", "")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("loaded")
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") > 0 {
				t.Fatalf("error:\n%s\nwant one line containing %q", msg, tc.want)
			}
		})
	}
}
