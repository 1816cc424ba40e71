package catalogdir

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// viewCatalog is a small catalog with one view whose computed output is
// the given template.
func viewCatalog(template string) fstest.MapFS {
	domain := `version: 1
http_backend: http://127.0.0.1:1/api
values:
  text: {type: string}
entities:
  Item:
    id_field: id
    fields:
      id: {value_ref: text}
      status: {value_ref: text}
  Card:
    id_field: item_id
    fields:
      item_id: {value_ref: text}
      slug: {value_ref: text}
capabilities:
  item_get: {kind: get, entity: Item, provides: [id, status]}
  card_query: {kind: query, entity: Card, parameters: [{name: item_id, value_ref: text, required: true}]}
views:
  card:
    capability: card_query
    entity: Card
    scope: [{name: item_id, required: true}]
    nodes:
      - {id: row, capability: item_get, bind: {id: {kind: scope, param: item_id}}}
    output:
      item_id: {kind: scope, param: item_id}
      slug:
        kind: computed
        template: ` + template + "\n"
	mappings := `item_get: {method: GET, path: [{type: literal, value: items}, {type: var, name: id}]}
card_query: {transport: view, view: card}
`
	return fstest.MapFS{"c/domain.yaml": {Data: []byte(domain)}, "c/mappings.yaml": {Data: []byte(mappings)}}
}

// TestViewTemplateUnsupportedLoads: valid Jinja the template subset does
// not run makes only its view not executable here, with the reason; a
// malformed template is the catalog's error, at its line and column.
func TestViewTemplateUnsupportedLoads(t *testing.T) {
	for _, tpl := range []string{
		`"{{ item_id }}-{{ 'C' if status == 'closed' else 'O' }}"`,
		`"{% if status is defined %}x{% endif %}"`,
		`"{{ item_id is none }}"`,
		`"{{ item_id * 2 }}"`,
		`"{{ item_id / 2 }}"`,
		`"{{ item_id // 2 }}"`,
		`"{{ item_id % 2 }}"`,
		`"{{ item_id[0:1] }}"`,
		`"{{ {'a': item_id} }}"`,
		`"{% for x in y %}{% endfor %}"`,
	} {
		c, err := Load(viewCatalog(tpl), "c", "c")
		if err != nil {
			t.Errorf("%s: catalog failed to load: %v", tpl, err)
			continue
		}
		cp := c.Capabilities["card_query"]
		if cp == nil || !strings.Contains(cp.Unavailable, "views.card.output.slug.template (template line 1") {
			t.Errorf("%s: card_query should be not executable with the template's reason, got %+v", tpl, cp)
		}
		if c.Capabilities["item_get"].Unavailable != "" {
			t.Errorf("%s: item_get marked unavailable too", tpl)
		}
	}
	for _, tpl := range []string{`"{{ item_id }"`, `"{{ item_id status }}"`, `"{{ item_id ; 1 }}"`, `"{% if item_id %}x"`} {
		_, err := Load(viewCatalog(tpl), "c", "c")
		var el ErrorList
		if !errors.As(err, &el) || !strings.Contains(err.Error(), "c/domain.yaml:") || !strings.Contains(err.Error(), "template line 1, column") {
			t.Errorf("%s: err = %v, want a catalog error at file:line:col", tpl, err)
		}
	}
	if c, err := Load(viewCatalog(`"{{ item_id }}-{{ status | default('open') }}"`), "c", "c"); err != nil || c.Capabilities["card_query"].Unavailable != "" {
		t.Errorf("supported template: err %v, card_query %+v", err, c.Capabilities["card_query"])
	}
}
