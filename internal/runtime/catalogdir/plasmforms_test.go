package catalogdir

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestPlasmFormsModel pins what each Plasm form of the plasmforms fixture
// loads into (the end-to-end behaviour is tested in server/internal/teaching/langcheck
// and server/plasmforms_test.go).
func TestPlasmFormsModel(t *testing.T) {
	l, err := LoadPathReport("../../../testdata/catalogs/plasmforms")
	if err != nil {
		t.Fatal(err)
	}
	c := l.Catalog
	q := c.Mappings["note_query"]
	checks := []struct {
		name      string
		got, want any
	}{
		{"tagged condition", q.Query.Fields[0].Value.Cond, &catalog.Cond{Exists: "q"}},
		{"items key", q.Response.ItemsPath, []string{"hits"}},
		{"alias into pagination", q.Pagination.Location + " " + q.Pagination.NextURLField, "response_next_url next_url"},
		{"elements", len(c.Mappings["note_archive"].Body.Fields[0].Value.Items), 2},
		{"suffix", c.Mappings["note_archive"].Path[1].Suffix, ":archive"},
		{"id var", c.Mappings["note_get"].IDVar, "note_id"},
		{"json value", c.Values["blob_json"].Type, "json"},
		{"derive", c.Entities["Note"].Fields["repo"].Derive.PartIndex, 1},
		{"derive defaults", c.Entities["Note"].Fields["sender"].Derive.MatchKey + "/" + c.Entities["Note"].Fields["sender"].Derive.ValueField, "name/value"},
		{"whole-row derive", c.Entities["Note"].Fields["label"].WholeRow, true},
		{"id_from adds the id field", c.Entities["Me"].Fields["uid"].Path, []string{"profile", "uid"}},
		{"implicit identity", c.Entities["Me"].Implicit, true},
		{"aliases", c.Entities["Note"].Aliases, []string{"Memo"}},
		{"relation without materialize", c.Entities["Note"].Relations["author"].Materialize.Kind, ""},
		{"singleton", c.Capabilities["me_get"].Kind, catalog.KindSingleton},
		{"open input", c.Capabilities["note_import"].OpenInput, true},
		{"parameter description", c.Capabilities["note_query"].Parameters[0].Description, "Words to match"},
		{"oauth bearer from hosted_kv", c.Auth, catalog.Auth{Scheme: "oauth_bearer", Env: "plasm:outbound:notes:access_token"}},
		{"oauth block", c.OAuth, &catalog.OAuth{Provider: "notes", Scopes: []string{"notes.read", "notes.write"}}},
		{"view", c.Views["digest"], &catalog.View{Name: "digest", Description: "Notes counted per title", Capability: "digest_query", Entity: "Digest", Serves: []string{"digest_query"},
			Nodes:  []catalog.ViewNode{{ID: "notes", Capability: "note_query", Bind: []catalog.ViewBind{{Param: "q", Kind: "scope", From: "q"}}}},
			Output: []catalog.ViewOutput{{Field: "id", Kind: "scope", Param: "q"}, {Field: "count", Kind: "node_row_count", Node: "notes"}}}},
		{"wrap root scalar", c.Mappings["maxnote_query"].Response.WrapRootScalar, true},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %#v, want %#v", ck.name, ck.got, ck.want)
		}
	}
}

// TestCounterStep checks Plasm's counter default: one per page.
func TestCounterStep(t *testing.T) {
	fsys := fstest.MapFS{
		"c/domain.yaml":   {Data: []byte("version: 1\nentities: {T: {id_field: id, fields: {id: {value_ref: s}}}}\nvalues: {s: {type: string}}\ncapabilities: {t_query: {kind: query, entity: T}}\n")},
		"c/mappings.yaml": {Data: []byte("t_query: {method: GET, path: [], pagination: {params: {page: {counter: 1}, off: {counter: 0, step: 25}}}}\n")},
	}
	c, err := Load(fsys, "c", "")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Mappings["t_query"].Pagination.Params
	if p["page"].Step != 1 || p["off"].Step != 25 {
		t.Errorf("steps: page %d, off %d; want 1 and 25", p["page"].Step, p["off"].Step)
	}
}

// TestWarnings checks forms Plasm tolerates although the catalog is wrong:
// they load, with a warning at the place.
func TestWarnings(t *testing.T) {
	fsys := fstest.MapFS{
		"c/domain.yaml": {Data: []byte("version: 1\nvalues: {s: {type: string}}\nentities: {T: {id_field: id, fields: {id: {value_ref: s}}}}\ncapabilities: {t_query: {kind: query, entity: T, provides: [id, ghost]}}\n")},
		"c/mappings.yaml": {Data: []byte(`t_query: {method: GET, path: [], response: {items: data, last_page: last_page}}
t_gone: {method: GET, path: []}
t_query: {method: GET, path: [], response: {items: rows}}
`)},
	}
	var warns ErrorList
	c, err := load(fsys, "c", "", func(p string) string { return p }, &warns)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`c/domain.yaml:4:65: capabilities.t_query.provides[1]: unknown field "ghost" of T (declared: id); rows will not carry it`,
		`c/mappings.yaml:2:1: t_gone: mapping for unknown capability "t_gone" (declared: t_query); it is ignored`,
		`c/mappings.yaml:3:1: mappings: duplicate key "t_query" (first at line 1); the later value is used`,
	}
	if got := strings.Split(warns.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := c.Mappings["t_query"].Response.ItemsPath; !reflect.DeepEqual(got, []string{"rows"}) {
		t.Errorf("the later duplicate should win: %v", got)
	}
	if c.Mappings["t_gone"] != nil {
		t.Errorf("a stray mapping was kept")
	}
}
