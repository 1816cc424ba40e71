package extract

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestIDFallback(t *testing.T) {
	cols := []Column{{Name: "id", Path: []string{"id"}, Type: "integer"}, {Name: "title", Path: []string{"title"}}}
	f := &IDFallback{Column: 0, Keys: []string{"_id", "uuid", "key", "objectID"}}
	for _, tt := range []struct {
		obj  string
		want any
	}{
		{`{"objectID":"42"}`, int64(42)},
		{`{"objectID":42}`, int64(42)},
		{`{"objectID":"abc"}`, nil}, // an integer id takes no other text
		{`{"_id":null,"key":"k1","objectID":"9"}`, int64(9)},
		{`{"uuid":true,"objectID":{"x":1}}`, nil},
		{`{"title":"no id"}`, nil},
	} {
		var obj map[string]any
		d := json.NewDecoder(strings.NewReader(tt.obj))
		d.UseNumber()
		if err := d.Decode(&obj); err != nil {
			t.Fatal(err)
		}
		row := []any{nil, nil}
		f.fillID(cols, row, obj)
		if !reflect.DeepEqual(row[0], tt.want) {
			t.Errorf("%s: id %#v, want %#v", tt.obj, row[0], tt.want)
		}
	}
	// A present id is never replaced.
	row := []any{int64(1), nil}
	f.fillID(cols, row, map[string]any{"objectID": "2"})
	if row[0] != int64(1) {
		t.Errorf("a present id was replaced by %v", row[0])
	}
}
