package decode

import (
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/internal/model/extract"
)

// TestIDFallbackKeys: the generic keys stand in only for a generic id
// field; an entity identified by a field of its own (a login) never takes
// another key's value, which would be another identity.
func TestIDFallbackKeys(t *testing.T) {
	for _, tt := range []struct {
		idField string
		path    []string
		want    []string // nil: no fallback
	}{
		{"id", []string{"id"}, []string{"_id", "uuid", "key", "objectID"}},
		{"id", []string{"data", "id"}, []string{"id", "_id", "uuid", "key", "objectID"}},
		{"objectID", []string{"objectID"}, []string{"id", "_id", "uuid", "key"}},
		{"login", []string{"login"}, nil},
		{"login", []string{"user", "login"}, []string{"login"}},
	} {
		cols := []extract.Column{{Name: tt.idField, Path: tt.path}}
		f := idFallback(cols, tt.idField, tt.path)
		var got []string
		if f != nil {
			got = f.Keys
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("id field %s at %v: fallback keys %v, want %v", tt.idField, tt.path, got, tt.want)
		}
	}
}
