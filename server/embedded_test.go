package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// embedDomain is Plasm's language-matrix shape (LangItem → summary →
// detail), except that Summary and Line have no get of their own: they
// exist only inside an Item's answer, as many APIs' nested objects do.
const embedDomain = `version: 1
http_backend: http://embed.invalid
values:
  text: {type: string}
entities:
  Detail:
    id_field: id
    fields:
      id: {value_ref: text, required: true}
      body: {value_ref: text}
  Summary:
    id_field: id
    fields:
      id: {value_ref: text, required: true}
      headline: {value_ref: text}
    relations:
      detail:
        target: Detail
        cardinality: one
        materialize: {kind: from_parent_get, path: [{key: detail}]}
  Line:
    id_field: id
    fields:
      id: {value_ref: text, required: true}
    relations:
      notes:
        target: Detail
        cardinality: many
        materialize: {kind: from_parent_get, path: [{key: notes}, {wildcard: true}]}
  Item:
    id_field: id
    fields:
      id: {value_ref: text, required: true}
      title: {value_ref: text}
    relations:
      summary:
        target: Summary
        cardinality: one
        materialize: {kind: from_parent_get, path: [{key: summary}]}
      lines:
        target: Line
        cardinality: many
        materialize: {kind: from_parent_get, path: [{key: lines}, {wildcard: true}]}
capabilities:
  item_query: {kind: query, entity: Item, provides: [id, title]}
  item_get: {kind: get, entity: Item}
`

const embedMappings = `item_query:
  method: GET
  path: [{type: literal, value: items}]
  response: bare_list
item_get:
  method: GET
  path: [{type: literal, value: items}, {type: var, name: id}]
`

// TestEmbeddedRelations: a relation of an entity that only appears
// embedded is read from inside the object that embeds it, in the one
// answer of the outer parent's get; what cannot be read so (a step
// between the two relations) is refused at the step's position.
func TestEmbeddedRelations(t *testing.T) {
	item := func(id string) map[string]any {
		return map[string]any{
			"id": id, "title": "T" + id,
			"summary": map[string]any{"id": "sum-" + id, "headline": "H" + id,
				"detail": map[string]any{"id": "det-" + id, "body": "nested " + id}},
			"lines": []any{
				map[string]any{"id": id + "-l1", "notes": []any{map[string]any{"id": id + "-n1", "body": "a"}, map[string]any{"id": id + "-n2", "body": "b"}}},
				map[string]any{"id": id + "-l2"},
			},
		}
	}
	api := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			json.NewEncoder(w).Encode([]any{map[string]any{"id": "i1", "title": "Ti1"}, map[string]any{"id": "i2", "title": "Ti2"}})
		case "/items/i1", "/items/i2":
			json.NewEncoder(w).Encode(item(strings.TrimPrefix(r.URL.Path, "/items/")))
		default:
			http.NotFound(w, r)
		}
	})
	f := catalogFixture(t, "embed", map[string]string{"domain.yaml": embedDomain, "mappings.yaml": embedMappings}, api.URL)
	path := f.open(t, "embed", "Item")

	values := func(res map[string]any, col string) string {
		var got []string
		for _, r := range rows(t, res) {
			got = append(got, fmt.Sprint(r[col]))
		}
		return strings.Join(got, " ")
	}
	tests := []struct {
		program string
		col     string
		want    []string // per root, the col values of its rows
		calls   int      // requests the backend receives
	}{
		// The get, then one read of the parent for the whole chain (a
		// from_parent_get hop reads its parent's get, as before).
		{`Item("i1").summary.detail`, "body", []string{"nested i1"}, 2},
		{`Item("i1").summary.detail[id,body]`, "id", []string{"det-i1"}, 2},
		{`Item("i1").summary[id,headline]`, "headline", []string{"Hi1"}, 2},
		{`Item("i1").lines.notes`, "id", []string{"i1-n1 i1-n2"}, 2},
		{`Item.summary.detail.sort(id, desc)`, "id", []string{"det-i2 det-i1"}, 3},
		// A label's hop is shared: the composed hop reads the parent again.
		{"s = Item(\"i1\").summary\ns.detail, s", "id", []string{"det-i1", "sum-i1"}, 3},
	}
	for _, tt := range tests {
		api.reset()
		res := f.runJSON(t, path, tt.program)
		if len(res) != len(tt.want) {
			t.Fatalf("%s: %d roots, want %d", tt.program, len(res), len(tt.want))
		}
		for i, want := range tt.want {
			if got := values(res[i], tt.col); got != want {
				t.Errorf("%s: root %d: %s = %q, want %q", tt.program, i, tt.col, got, want)
			}
		}
		if got := api.got(); len(got) != tt.calls {
			t.Errorf("%s: backend got %v, want %d requests", tt.program, got, tt.calls)
		}
	}

	refused := []struct{ program, at string }{
		{`Item("i1").summary.limit(1).detail`, `"line":1,"column":29`},
		{`Item("i1").summary[id].detail`, `"line":1,"column":24`},
	}
	for _, tt := range refused {
		api.reset()
		r := f.do(t, "POST", path, "text/plain", tt.program)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "straight from the relation that embedded them") || !strings.Contains(r.body, tt.at) {
			t.Errorf("%s: %d %s; want 422 at %s", tt.program, r.status, r.body, tt.at)
		}
		if got := api.got(); len(got) != 0 {
			t.Errorf("%s: a refused program reached the backend: %v", tt.program, got)
		}
	}
}
