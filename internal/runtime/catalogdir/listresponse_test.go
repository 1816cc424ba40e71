package catalogdir

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestListResponseDefault: a query or search mapping without `response`
// reads its rows under "results", as Plasm does; other kinds, and mappings
// that say where their rows are, keep what they say.
func TestListResponseDefault(t *testing.T) {
	src := `version: 1
http_backend: http://shapes.invalid
values:
  id: {type: integer}
entities:
  Thing:
    id_field: id
    fields:
      id: {value_ref: id, required: true}
capabilities:
  thing_query: {kind: query, entity: Thing}
  thing_search:
    kind: search
    entity: Thing
    parameters: [{name: q, value_ref: id, role: search, required: true}]
  thing_get: {kind: get, entity: Thing}
  thing_create: {kind: create, entity: Thing}
  thing_list: {kind: query, entity: Thing}
  thing_graph: {kind: query, entity: Thing}
mappings:
  thing_query: {method: GET, path: [{type: literal, value: things}]}
  thing_search: {method: GET, path: [{type: literal, value: search}], query: {type: object, fields: [[q, {type: var, name: q}]]}}
  thing_get: {method: GET, path: [{type: literal, value: things}, {type: var, name: id}]}
  thing_create: {method: POST, path: [{type: literal, value: things}]}
  thing_list: {method: GET, path: [{type: literal, value: list}], response: bare_list}
  thing_graph: {transport: graphql, method: POST, path: [{type: literal, value: graphql}], body: {type: const, value: {query: "{ things { id } }"}}}
`
	c, err := Load(fstest.MapFS{"shapes.cgs.yaml": {Data: []byte(src)}}, "shapes.cgs.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	results := &catalog.Response{ItemsPath: []string{"results"}}
	for name, want := range map[string]*catalog.Response{
		"thing_query":  results,
		"thing_search": results,
		"thing_graph":  results,
		"thing_get":    nil,
		"thing_create": nil,
		"thing_list":   {Items: true},
	} {
		if got := c.Mappings[name].Response; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: response %+v, want %+v", name, got, want)
		}
	}
}
