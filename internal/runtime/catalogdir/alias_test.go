package catalogdir

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestAliases checks that anchors, aliases and merge keys expand as YAML
// says: an alias is the anchored value, explicit keys win over merged ones.
func TestAliases(t *testing.T) {
	domain := `version: 1
values:
  text: &text {type: string, description: shared}
  copy: *text
  merged: {<<: *text, description: own}
  multi: {<<: [{type: integer}, *text]}
entities:
  Thing:
    id_field: id
    fields:
      id: {value_ref: text}
capabilities:
  thing_query: {kind: query, entity: Thing}
  thing_search: {kind: query, entity: Thing}
`
	mappings := `x-paging: &paging
  params: {page: {counter: 1}}
thing_query:
  method: GET
  path: [{type: literal, value: things}]
  response: {items: data}
  pagination: *paging
thing_search:
  method: GET
  path: [{type: literal, value: search}]
  pagination: {<<: *paging, location: query}
`
	fsys := fstest.MapFS{"c/domain.yaml": {Data: []byte(domain)}, "c/mappings.yaml": {Data: []byte(mappings)}}
	c, err := Load(fsys, "c", "")
	if err != nil {
		t.Fatal(err)
	}
	v := c.Values
	if v["copy"].Type != "string" || v["copy"].Description != "shared" {
		t.Errorf("alias: %+v", v["copy"])
	}
	if v["merged"].Type != "string" || v["merged"].Description != "own" {
		t.Errorf("merge with override: %+v", v["merged"])
	}
	if v["multi"].Type != "integer" || v["multi"].Description != "shared" {
		t.Errorf("merge list, earlier wins: %+v", v["multi"])
	}
	for _, name := range []string{"thing_query", "thing_search"} {
		pg := c.Mappings[name].Pagination
		if pg == nil || pg.Params["page"].Counter == nil || *pg.Params["page"].Counter != 1 {
			t.Errorf("%s: pagination %+v", name, pg)
		}
	}
	if got := c.Mappings["thing_query"].Response.ItemsPath; len(got) != 1 || got[0] != "data" {
		t.Errorf("items: data → items_path %v", got)
	}
}

// TestBillionLaughsBound checks that the expansion bound is exact: a tree
// just under it loads, one just over is refused before expansion.
func TestBillionLaughsBound(t *testing.T) {
	// Level k is a list of 10 aliases of level k-1: 10^k leaves.
	doc := func(levels int) string {
		var b strings.Builder
		b.WriteString("version: 1\nx0: &x0 [a, a, a, a, a, a, a, a, a, a]\n")
		for i := 1; i < levels; i++ {
			p := "*x" + itoa(i-1)
			b.WriteString("x" + itoa(i) + ": &x" + itoa(i) + " [" + strings.Repeat(p+", ", 9) + p + "]\n")
		}
		return b.String()
	}
	for _, tt := range []struct {
		levels  int
		refused bool
	}{{4, false}, {5, false}, {6, true}, {40, true}} {
		fsys := fstest.MapFS{"c/domain.yaml": {Data: []byte(doc(tt.levels))}, "c/mappings.yaml": {Data: nil}}
		_, err := Load(fsys, "c", "")
		refused := err != nil && strings.Contains(err.Error(), "YAML aliases expand to more than")
		if refused != tt.refused {
			t.Errorf("%d levels: refused=%v, want %v (err %v)", tt.levels, refused, tt.refused, err)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// FuzzAliases feeds arbitrary YAML through the loader: it must return (a
// catalog or errors), never panic or run away, whatever the anchors.
func FuzzAliases(f *testing.F) {
	f.Add("version: 1\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n")
	f.Add("version: 1\nvalues: {a: &a {type: string}, b: {<<: *a}}\n")
	f.Add("a: &a {<<: *a}\n")
	f.Add("a: &a [*a]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		fsys := fstest.MapFS{"c/domain.yaml": {Data: []byte(doc)}, "c/mappings.yaml": {Data: nil}}
		_, _ = Load(fsys, "c", "")
	})
}
