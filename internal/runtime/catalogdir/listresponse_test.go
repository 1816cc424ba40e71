package catalogdir

import (
	"reflect"
	"strings"
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
	results := &catalog.Response{ItemsPath: []string{"results"}, Default: true}
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

// TestOffsetStepWarning: a counter named as an item offset that steps by 1
// while a fixed parameter asks for more rows a page is warned about once
// per YAML block (pokeapi's shared anchor, jira's startAt), with its line.
func TestOffsetStepWarning(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		want         string // "" for no warning
	}{
		{"offset by one", "{offset: {counter: 0}, limit: {fixed: 20}}", "shapes.cgs.yaml:14:31: mappings.a_query.pagination.params.offset: an item offset that steps by 1 a page while limit asks for 20 rows"},
		{"startAt by one", "{startAt: {counter: 0}, maxResults: {fixed: 50}}", "add step: 50"},
		{"offset by the page size", "{offset: {counter: 0, step: 20}, limit: {fixed: 20}}", ""},
		{"page number", "{page: {counter: 1}, per_page: {fixed: 20}}", ""},
		{"offset without a page size", "{offset: {counter: 0}}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `version: 1
http_backend: http://shapes.invalid
values:
  id: {type: integer}
entities:
  Thing: {id_field: id, fields: {id: {value_ref: id, required: true}}}
capabilities:
  a_query: {kind: query, entity: Thing}
  b_query: {kind: query, entity: Thing}
mappings:
  a_query:
    method: GET
    path: [{type: literal, value: a}]
    pagination: &pg {params: ` + tc.params + `}
  b_query: {method: GET, path: [{type: literal, value: b}], pagination: *pg}
`
			var warns ErrorList
			if _, err := load(fstest.MapFS{"shapes.cgs.yaml": {Data: []byte(src)}}, "shapes.cgs.yaml", "", func(p string) string { return p }, &warns); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range warns {
				got = append(got, w.Error())
			}
			if tc.want == "" {
				if len(got) > 0 {
					t.Fatalf("warned: %v", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("warnings %q, want one containing %q", got, tc.want)
			}
		})
	}
}
