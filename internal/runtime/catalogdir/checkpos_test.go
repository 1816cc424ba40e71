package catalogdir

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"go.yaml.in/yaml/v3"
)

// Catalogs that pass every check the loader had before it mirrored
// catalog.Check's bounds, and fail Check. Before, each came back as one
// problem with no file, line or column, e.g.
//
//	invalid catalog "c": entity Issue, field repo: derive rule lists more than 64 strings
//
// (before is that text for each case). Now the loader refuses each at the
// node that breaks the bound (file, line, col, msg), and the guard that
// maps a Check failure back to its element (checkpos.go) points at the
// element's declaration (guard, "line:col", checked with the loader's own
// bound checks turned off).

// long is a string one byte over the bound on every name and string a
// catalog ships to the engine.
var long = strings.Repeat("x", catalog.MaxText+1)

// flow writes n strings made by f as a YAML flow list.
func flow(n int, f func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = f(i)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// keys is a flow list of n plain keys.
func keys(n int) string { return flow(n, func(i int) string { return fmt.Sprintf("k%d", i) }) }

// domainWith is a small domain: fields lines go after the id field (from
// line 9, indented 6), entity lines after the fields (indented 4).
func domainWith(fields, entity string) string {
	return "version: 1\nvalues:\n  text: {type: string}\nentities:\n  Issue:\n    id_field: id\n    fields:\n      id: {value_ref: text}\n" +
		fields + entity + "capabilities:\n  issue_get: {kind: get, entity: Issue}\n  issue_query: {kind: query, entity: Issue}\n"
}

var baseDomain = domainWith("", "")

// mappingsWith is the mappings of baseDomain; lines go at the end of
// issue_query's mapping (from line 7, indented 2).
func mappingsWith(lines string) string {
	return "issue_get:\n  method: GET\n  path: [{type: var, name: id}]\nissue_query:\n  method: GET\n  path: [{type: literal, value: issues}]\n" + lines
}

// manyFields declares n more text fields f0, f1, … (indented 6).
func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "      f%d: {value_ref: text}\n", i)
	}
	return b.String()
}

type checkCase struct {
	name             string
	domain, mappings string // split form; combined when cgs is set
	cgs              string
	file             string
	line, col        int
	msg              string
	guard            string // line:col of the element, from the guard
	before           string // the problem as the user saw it before
}

var checkCases = []checkCase{
	{
		name:   "auth env",
		domain: strings.Replace(baseDomain, "version: 1\n", "version: 1\nauth:\n  scheme: bearer_token\n  env: "+long+"\n", 1),
		file:   "domain.yaml", line: 4, col: 8,
		msg:   "auth.env: 4097 bytes long, over the limit of 4096",
		guard: "1:1", before: "catalog: auth env of 4097 bytes, limit 4096",
	},
	{
		name:   "auth hosted_kv",
		domain: strings.Replace(baseDomain, "version: 1\n", "version: 1\nauth:\n  scheme: api_key_header\n  header: X-Key\n  hosted_kv: "+long+"\n", 1),
		file:   "domain.yaml", line: 5, col: 14,
		msg:   "auth.hosted_kv: 4097 bytes long, over the limit of 4096",
		guard: "1:1", before: "catalog: auth env of 4097 bytes, limit 4096",
	},
	{
		name:   "http_backend",
		domain: strings.Replace(baseDomain, "version: 1\n", "version: 1\nhttp_backend: https://api.example/"+long+"\n", 1),
		file:   "domain.yaml", line: 2, col: 15,
		msg:   "http_backend: 4117 bytes long, over the limit of 4096",
		guard: "1:1", before: "catalog: http_backend of 4117 bytes, limit 4096",
	},
	{
		name:   "field name",
		domain: domainWith("      ? "+long+"\n      : {value_ref: text}\n", ""),
		file:   "domain.yaml", line: 9, col: 9,
		msg:   "entities.Issue.fields: a field name of 4097 bytes, over the limit of 4096",
		guard: "9:9", before: "entity Issue, field xxx…: name of 4097 bytes, limit 4096",
	},
	{
		name:   "field path steps",
		domain: domainWith("      title:\n        value_ref: text\n        path: "+keys(129)+"\n", ""),
		file:   "domain.yaml", line: 11, col: 15,
		msg:   "entities.Issue.fields.title.path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "9:7", before: "entity Issue, field title: path of 129 steps, limit 128",
	},
	{
		name:   "field path dotted steps",
		domain: domainWith("      title:\n        value_ref: text\n        path: "+strings.Repeat("a.", 128)+"a\n", ""),
		file:   "domain.yaml", line: 11, col: 15,
		msg:   "entities.Issue.fields.title.path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "9:7", before: "entity Issue, field title: path of 129 steps, limit 128",
	},
	{
		name:   "field path step",
		domain: domainWith("      title:\n        value_ref: text\n        path: [data, "+long+"]\n", ""),
		file:   "domain.yaml", line: 11, col: 22,
		msg:   "entities.Issue.fields.title.path[1]: 4097 bytes long, over the limit of 4096",
		guard: "9:7", before: "entity Issue, field title: path of 4097 bytes, limit 4096",
	},
	{
		name:   "id_from steps",
		domain: domainWith("", "    id_from: "+keys(129)+"\n"),
		file:   "domain.yaml", line: 9, col: 14,
		msg:   "entities.Issue.id_from: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "8:7", before: "entity Issue, field id: path of 129 steps, limit 128",
	},
	{
		name: "derive alternate_prefixes count",
		domain: domainWith("      repo:\n        value_ref: text\n        path: url\n        derive:\n          type: segments_after_prefix\n"+
			"          prefix: https://code.example/repos/\n          alternate_prefixes: "+flow(65, func(i int) string { return fmt.Sprintf("https://c%d.example/", i) })+"\n", ""),
		file: "domain.yaml", line: 15, col: 31,
		msg:   "entities.Issue.fields.repo.derive.alternate_prefixes: 65 strings, over the limit of 64",
		guard: "9:7", before: "entity Issue, field repo: derive rule lists more than 64 strings",
	},
	{
		name: "derive alternate prefix",
		domain: domainWith("      repo:\n        value_ref: text\n        path: url\n        derive:\n          type: segments_after_prefix\n"+
			"          prefix: https://code.example/repos/\n          alternate_prefixes: [a, "+long+"]\n", ""),
		file: "domain.yaml", line: 15, col: 35,
		msg:   "entities.Issue.fields.repo.derive.alternate_prefixes[1]: 4097 bytes long, over the limit of 4096",
		guard: "9:7", before: "entity Issue, field repo: derive of 4097 bytes, limit 4096",
	},
	{
		name: "derive prefix",
		domain: domainWith("      repo:\n        value_ref: text\n        path: url\n        derive:\n          type: segments_after_prefix\n"+
			"          prefix: "+long+"\n", ""),
		file: "domain.yaml", line: 14, col: 19,
		msg:   "entities.Issue.fields.repo.derive.prefix: 4097 bytes long, over the limit of 4096",
		guard: "9:7", before: "entity Issue, field repo: derive of 4097 bytes, limit 4096",
	},
	{
		name: "derive prefer_keys count",
		domain: domainWith("      ref:\n        value_ref: text\n        derive:\n          type: colon_pair_prefer_keys_else_block_refs\n"+
			"          prefer_keys: "+keys(65)+"\n          blocks_key: blocks\n          segment: issue\n", ""),
		file: "domain.yaml", line: 13, col: 24,
		msg:   "entities.Issue.fields.ref.derive.prefer_keys: 65 strings, over the limit of 64",
		guard: "9:7", before: "entity Issue, field ref: derive rule lists more than 64 strings",
	},
	{
		name: "derive ref_field",
		domain: domainWith("      ref:\n        value_ref: text\n        derive:\n          type: colon_pair_prefer_keys_else_block_refs\n"+
			"          blocks_key: blocks\n          segment: issue\n          ref_field: "+long+"\n", ""),
		file: "domain.yaml", line: 15, col: 22,
		msg:   "entities.Issue.fields.ref.derive.ref_field: 4097 bytes long, over the limit of 4096",
		guard: "9:7", before: "entity Issue, field ref: derive of 4097 bytes, limit 4096",
	},
	{
		name:   "derive equals",
		domain: domainWith("      label:\n        value_ref: text\n        derive:\n          type: name_value_array_lookup\n          equals: "+long+"\n", ""),
		file:   "domain.yaml", line: 13, col: 19,
		msg:   "entities.Issue.fields.label.derive.equals: 4097 bytes long, over the limit of 4096",
		guard: "9:7", before: "entity Issue, field label: derive of 4097 bytes, limit 4096",
	},
	{
		name:   "derive object key",
		domain: domainWith("      label:\n        value_ref: text\n        derive:\n          type: object_key_lookup\n          key: "+long+"\n", ""),
		file:   "domain.yaml", line: 13, col: 16,
		msg:   "entities.Issue.fields.label.derive.key: 4097 bytes long, over the limit of 4096",
		guard: "9:7", before: "entity Issue, field label: derive of 4097 bytes, limit 4096",
	},
	{
		name:   "fields count",
		domain: domainWith(manyFields(catalog.MaxFields), ""),
		file:   "domain.yaml", line: 7, col: 5,
		msg:   "entities.Issue.fields: 1025 fields, over the limit of 1024",
		guard: "5:3", before: "entity Issue: has 1025 fields, limit 1024",
	},
	{
		name: "fields count with the id id_from adds",
		domain: strings.Replace(domainWith(manyFields(catalog.MaxFields-1), "    id_from: [meta, uid]\n"),
			"id_field: id\n", "id_field: uid\n", 1),
		file: "domain.yaml", line: 7, col: 5,
		msg:   "entities.Issue.fields: 1025 fields (counting uid, which id_from adds), over the limit of 1024",
		guard: "5:3", before: "entity Issue: has 1025 fields, limit 1024",
	},
	{
		name:   "from_parent_get relation name",
		domain: domainWith("", "    relations:\n      ? "+long+"\n      : {target: Issue, cardinality: one, materialize: {kind: from_parent_get, path: [{key: parent}]}}\n"),
		file:   "domain.yaml", line: 10, col: 9,
		msg:   "entities.Issue.relations: a relation name of 4097 bytes, over the limit of 4096",
		guard: "10:9", before: "entity Issue, relation xxx…: name of 4097 bytes, limit 4096",
	},
	{
		name: "from_parent_get path steps",
		domain: domainWith("", "    relations:\n      parent:\n        target: Issue\n        cardinality: one\n        materialize:\n          kind: from_parent_get\n"+
			"          path: "+flow(129, func(int) string { return "{key: k}" })+"\n"),
		file: "domain.yaml", line: 15, col: 17,
		msg:   "entities.Issue.relations.parent.materialize.path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "10:7", before: "entity Issue, relation parent: materialize path of 129 steps, limit 128",
	},
	{
		name: "from_parent_get path key",
		domain: domainWith("", "    relations:\n      parent:\n        target: Issue\n        cardinality: one\n        materialize:\n          kind: from_parent_get\n"+
			"          path: [{key: "+long+"}]\n"),
		file: "domain.yaml", line: 15, col: 24,
		msg:   "entities.Issue.relations.parent.materialize.path[0].key: 4097 bytes long, over the limit of 4096",
		guard: "10:7", before: "entity Issue, relation parent: materialize path of 4097 bytes, limit 4096",
	},
	{
		name:     "capability name",
		domain:   baseDomain + "  ? " + long + "\n  : {kind: query, entity: Issue}\n",
		mappings: mappingsWith("? " + long + "\n: {method: GET, path: []}\n"),
		file:     "domain.yaml", line: 12, col: 5,
		msg:   "capabilities: a capability name of 4097 bytes, over the limit of 4096",
		guard: "9:1", before: "capability: name of 4097 bytes, limit 4096",
	},
	{
		name:     "items_path steps",
		mappings: mappingsWith("  response:\n    items_path: " + keys(129) + "\n"),
		file:     "mappings.yaml", line: 8, col: 17,
		msg:   "issue_query.response.items_path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "4:1", before: "mapping issue_query: items_path of 129 steps, limit 128",
	},
	{
		name:     "items_path step",
		mappings: mappingsWith("  response:\n    items_path: [data, " + long + "]\n"),
		file:     "mappings.yaml", line: 8, col: 24,
		msg:   "issue_query.response.items_path[1]: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: items_path of 4097 bytes, limit 4096",
	},
	{
		name:     "items key",
		mappings: mappingsWith("  response:\n    items: " + long + "\n"),
		file:     "mappings.yaml", line: 8, col: 12,
		msg:   "issue_query.response.items: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: items_path of 4097 bytes, limit 4096",
	},
	{
		name:     "item_inner_key",
		mappings: mappingsWith("  response:\n    items_path: [data]\n    item_inner_key: " + long + "\n"),
		file:     "mappings.yaml", line: 9, col: 21,
		msg:   "issue_query.response.item_inner_key: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: item_inner_key of 4097 bytes, limit 4096",
	},
	{
		name:     "response_preprocess path steps",
		mappings: mappingsWith("  response:\n    items_path: [data]\n    response_preprocess:\n      kind: concat_field_arrays\n      path: " + keys(129) + "\n      from_each: tags\n"),
		file:     "mappings.yaml", line: 11, col: 13,
		msg:   "issue_query.response.response_preprocess.path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "4:1", before: "mapping issue_query: response_preprocess path of 129 steps, limit 128",
	},
	{
		name:     "response_preprocess from_each",
		mappings: mappingsWith("  response:\n    items_path: [data]\n    response_preprocess:\n      kind: concat_field_arrays\n      path: [data]\n      from_each: " + long + "\n"),
		file:     "mappings.yaml", line: 12, col: 18,
		msg:   "issue_query.response.response_preprocess.from_each: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: response_preprocess of 4097 bytes, limit 4096",
	},
	{
		name:     "pagination response_prefix steps",
		mappings: mappingsWith("  pagination:\n    params: {page: {counter: 1}}\n    response_prefix: " + keys(129) + "\n"),
		file:     "mappings.yaml", line: 9, col: 22,
		msg:   "issue_query.pagination.response_prefix: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "4:1", before: "mapping issue_query: pagination response_prefix of 129 steps, limit 128",
	},
	{
		name:     "pagination response_next_url_field",
		mappings: mappingsWith("  pagination:\n    location: response_next_url\n    response_next_url_field: " + long + "\n"),
		file:     "mappings.yaml", line: 9, col: 30,
		msg:   "issue_query.pagination.response_next_url_field: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: pagination response_next_url_field of 4097 bytes, limit 4096",
	},
	{
		name:     "pagination params count",
		mappings: mappingsWith("  pagination:\n    params: " + "{" + strings.Trim(flow(65, func(i int) string { return fmt.Sprintf("p%d: {fixed: 1}", i) }), "[]") + "}" + "\n"),
		file:     "mappings.yaml", line: 8, col: 5,
		msg:   "issue_query.pagination.params: 65 parameters, over the limit of 64",
		guard: "4:1", before: "mapping issue_query: pagination has 65 params, limit 64",
	},
	{
		name:     "pagination param name",
		mappings: mappingsWith("  pagination:\n    params:\n      ? " + long + "\n      : {counter: 1}\n"),
		file:     "mappings.yaml", line: 9, col: 9,
		msg:   "issue_query.pagination.params: a parameter name of 4097 bytes, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: pagination param of 4097 bytes, limit 4096",
	},
	{
		name:     "pagination from_response",
		mappings: mappingsWith("  pagination:\n    params:\n      cursor:\n        from_response: " + long + "\n"),
		file:     "mappings.yaml", line: 10, col: 24,
		msg:   "issue_query.pagination.params.cursor.from_response: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: pagination from_response of 4097 bytes, limit 4096",
	},
	{
		name:     "pagination stop_when field",
		mappings: mappingsWith("  pagination:\n    params: {page: {counter: 1}}\n    stop_when:\n      field: " + long + "\n      absent: true\n"),
		file:     "mappings.yaml", line: 10, col: 14,
		msg:   "issue_query.pagination.stop_when.field: 4097 bytes long, over the limit of 4096",
		guard: "4:1", before: "mapping issue_query: pagination stop_when field of 4097 bytes, limit 4096",
	},
	{
		name: "combined: field path steps",
		cgs:  domainWith("      title:\n        value_ref: text\n        path: "+keys(129)+"\n", "") + "mappings:\n" + indent(mappingsWith("")),
		file: "c.cgs.yaml", line: 11, col: 15,
		msg:   "entities.Issue.fields.title.path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "9:7", before: "entity Issue, field title: path of 129 steps, limit 128",
	},
	{
		name: "combined: items_path steps",
		cgs:  baseDomain + "mappings:\n" + indent(mappingsWith("  response:\n    items_path: "+keys(129)+"\n")),
		file: "c.cgs.yaml", line: 20, col: 19,
		msg:   "mappings.issue_query.response.items_path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads)",
		guard: "16:3", before: "mapping issue_query: items_path of 129 steps, limit 128",
	},
}

// indent indents every line of s by two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// fsOf lays a case out as a catalog directory c (split) or c.cgs.yaml.
func (tc checkCase) fsOf() (fstest.MapFS, string) {
	if tc.cgs != "" {
		return fstest.MapFS{"c.cgs.yaml": {Data: []byte(tc.cgs)}}, "c.cgs.yaml"
	}
	d, m := tc.domain, tc.mappings
	if d == "" {
		d = baseDomain
	}
	if m == "" {
		m = mappingsWith("")
	}
	return fstest.MapFS{"c/domain.yaml": {Data: []byte(d)}, "c/mappings.yaml": {Data: []byte(m)}}, "c"
}

func (tc checkCase) path() string {
	if tc.cgs != "" {
		return tc.file
	}
	return "c/" + tc.file
}

// TestCheckPositions: each catalog that breaks one of catalog.Check's
// bounds is refused with one problem at the node that breaks it.
func TestCheckPositions(t *testing.T) {
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fsOf()
			_, err := Load(fsys, dir, "")
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("err = %v, want one problem", short(err))
			}
			e := list[0]
			if e.File != tc.path() || e.Line != tc.line || e.Column != tc.col || e.Msg != tc.msg {
				t.Fatalf("got  %s:%d:%d: %s\nwant %s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg, tc.path(), tc.line, tc.col, tc.msg)
			}
			if DocSection(e) == "" {
				t.Errorf("%v links to no section of %s", e, DocPath)
			}
		})
	}
}

// TestCheckGuardPositions: with the loader's own bound checks off, each
// case gets past the loader and Check refuses it; the problem is then
// placed at the element Check names, with Check's words.
func TestCheckGuardPositions(t *testing.T) {
	checkBounds = false
	defer func() { checkBounds = true }()
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fsOf()
			_, err := Load(fsys, dir, "")
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("err = %v, want one problem", short(err))
			}
			e := list[0]
			problem := tc.before[strings.LastIndex(tc.before, ": ")+2:]
			if got := fmt.Sprintf("%d:%d", e.Line, e.Column); e.File != tc.path() || got != tc.guard || !strings.HasSuffix(e.Msg, ": "+problem) {
				t.Fatalf("got  %s:%s: %s\nwant %s:%s: …: %s", e.File, got, e.Msg, tc.path(), tc.guard, problem)
			}
		})
	}
}

// short cuts an error message quoting a 4 KB name down to a readable size.
func short(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestLocate: every form of CheckError.Where the guard can be handed,
// views and values included (no catalog the loader builds reaches Check
// with a problem there), finds its element's declaration.
func TestLocate(t *testing.T) {
	domain := `version: 1
values:
  text: {type: string}
entities:
  Issue:
    id_field: uid
    id_from: [meta, uid]
    fields:
      title: {value_ref: text}
    relations:
      parent: {target: Issue, cardinality: one}
  "A, field b":
    fields: {c: {value_ref: text}}
capabilities:
  issue_get: {kind: get, entity: Issue}
views:
  v:
    entity: Issue
    nodes: [{id: a, capability: issue_get}]
    output: {title: {kind: field, node: a, field: title}}
    relation_outputs: [{relation: parent, target: Issue, cardinality: one, binding: {kind: single_row, node: a}}]
  w:
    nodes:
      b: {capability: issue_get}
`
	mappings := "issue_get: {method: GET, path: []}\n"
	l := newLoader("c")
	dp, mp := &parser{l: l, file: "domain.yaml"}, &parser{l: l, file: "mappings.yaml"}
	droot, _ := dp.parseYAML([]byte(domain))
	mroot, _ := mp.parseYAML([]byte(mappings))
	l.domainDoc, l.mappingsDoc = doc{p: dp, root: droot}, doc{p: mp, root: mroot}
	for _, tc := range []struct{ where, want string }{
		{"catalog", "domain.yaml:1:1 top level"},
		{"value text", "domain.yaml:3:3 values.text"},
		{"entity Issue", "domain.yaml:5:3 entities.Issue"},
		{"entity Issue, field title", "domain.yaml:9:7 entities.Issue.fields.title"},
		{"entity Issue, field uid", "domain.yaml:7:5 entities.Issue.id_from"},
		{"entity Issue, relation parent", "domain.yaml:11:7 entities.Issue.relations.parent"},
		{"entity Issue, field_order", "domain.yaml:5:3 entities.Issue"},
		{"entity A, field b", "domain.yaml:12:3 entities.A, field b"},
		{"entity A, field b, field c", "domain.yaml:13:14 entities.A, field b.fields.c"},
		{"capability", "domain.yaml:14:1 capabilities"},
		{"capability issue_get", "domain.yaml:15:3 capabilities.issue_get"},
		{"mapping issue_get", "mappings.yaml:1:1 issue_get"},
		{"view v", "domain.yaml:17:3 views.v"},
		{"view v, node a", "domain.yaml:19:18 views.v.nodes[0].id"},
		{"view w, node b", "domain.yaml:24:7 views.w.nodes.b"},
		{"view v, output title", "domain.yaml:20:14 views.v.output.title"},
		{"view v, relation parent", "domain.yaml:21:35 views.v.relation_outputs[0].relation"},
		{"entity Nope", "none"},
		{"something new", "none"},
	} {
		p, n, ctx := l.locate(tc.where)
		got := "none"
		if n != nil {
			got = fmt.Sprintf("%s:%d:%d %s", p.file, n.Line, n.Column, ctx)
		}
		if got != tc.want {
			t.Errorf("locate(%q) = %s, want %s", tc.where, got, tc.want)
		}
	}
	// Where nothing is found, the problem still gets the domain file.
	l.placeCheckError(&catalog.CheckError{Entry: "c", Where: "something new", Problem: "is wrong"})
	if len(l.errs) != 1 || l.errs[0].Error() != "domain.yaml:1:1: something new: is wrong" {
		t.Fatalf("unplaced problem: %v", l.errs)
	}
}

// TestBoundsAtLimit: a catalog at every bound loads, and Check takes it.
func TestBoundsAtLimit(t *testing.T) {
	at := strings.Repeat("x", catalog.MaxText)
	domain := domainWith(manyFields(catalog.MaxFields-4)+
		"      title:\n        value_ref: text\n        path: "+keys(catalog.MaxWirePath)+"\n"+
		"      label:\n        value_ref: text\n        derive: {type: name_value_array_lookup, equals: "+at+"}\n"+
		"      ref:\n        value_ref: text\n        derive: {type: colon_pair_prefer_keys_else_block_refs, blocks_key: b, segment: s, prefer_keys: "+keys(catalog.MaxRuleStrings)+"}\n",
		"    relations:\n      parent:\n        target: Issue\n        cardinality: one\n        materialize:\n          kind: from_parent_get\n"+
			"          path: "+flow(catalog.MaxWirePath, func(int) string { return "{key: k}" })+"\n")
	domain = strings.Replace(domain, "version: 1\n", "version: 1\nauth: {scheme: bearer_token, env: "+at+"}\n", 1)
	mappings := mappingsWith("  response: {items_path: " + keys(catalog.MaxWirePath) + ", item_inner_key: " + at + "}\n" +
		"  pagination: {params: {" + strings.Trim(flow(catalog.MaxPageParams, func(i int) string { return fmt.Sprintf("p%d: {fixed: 1}", i) }), "[]") + "}}\n")
	c, err := Load(fstest.MapFS{"c/domain.yaml": {Data: []byte(domain)}, "c/mappings.yaml": {Data: []byte(mappings)}}, "c", "")
	if err != nil {
		t.Fatal(short(err))
	}
	if n := len(c.Entities["Issue"].Fields); n != catalog.MaxFields {
		t.Fatalf("%d fields, want %d", n, catalog.MaxFields)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	// An id_from past the bound is no wire path when the id field reads
	// its own: nothing in the engine reads it, and it loads.
	domain = strings.Replace(domainWith("", "    id_from: "+keys(catalog.MaxWirePath+1)+"\n"), "id: {value_ref: text}", "id: {value_ref: text, path: [meta, id]}", 1)
	if _, err := Load(fstest.MapFS{"c/domain.yaml": {Data: []byte(domain)}, "c/mappings.yaml": {Data: []byte(mappingsWith(""))}}, "c", ""); err != nil {
		t.Fatal(short(err))
	}
	// Nor is a mapping for no capability, which is dropped with a warning.
	mappings = mappingsWith("issue_search:\n  method: GET\n  path: []\n  response: {items_path: " + keys(catalog.MaxWirePath+1) + "}\n")
	var warns ErrorList
	_, err = load(fstest.MapFS{"c/domain.yaml": {Data: []byte(baseDomain)}, "c/mappings.yaml": {Data: []byte(mappings)}}, "c", "", func(p string) string { return p }, &warns)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0].Msg, "it is ignored") {
		t.Fatalf("err %v, warnings %v", short(err), warns)
	}
}

// Review findings on the bound checks: an items key that items_path
// overrides is never sent to the engine, so it is not bounded; an id
// field that id_from adds by a name the entity does not declare is
// bounded at id_field, where the long name is written.
func TestBoundsReviewCases(t *testing.T) {
	t.Run("items key overridden by items_path", func(t *testing.T) {
		m := mappingsWith("  response:\n    items: " + long + "\n    items_path: [data]\n")
		fsys := fstest.MapFS{"c/domain.yaml": {Data: []byte(baseDomain)}, "c/mappings.yaml": {Data: []byte(m)}}
		if _, err := Load(fsys, "c", ""); err != nil {
			t.Fatalf("refused an items key the engine never sees: %v", short(err))
		}
	})
	t.Run("id field added by id_from", func(t *testing.T) {
		d := "version: 1\nvalues:\n  text: {type: string}\nentities:\n  Issue:\n    id_field: " + long +
			"\n    id_from: [meta, uid]\n    fields:\n      title: {value_ref: text}\n" +
			"capabilities:\n  issue_get: {kind: get, entity: Issue}\n  issue_query: {kind: query, entity: Issue}\n"
		fsys := fstest.MapFS{"c/domain.yaml": {Data: []byte(d)}, "c/mappings.yaml": {Data: []byte(mappingsWith(""))}}
		_, err := Load(fsys, "c", "")
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("err = %v, want a bound problem", short(err))
		}
		if e := list[0]; e.Line != 6 || !strings.Contains(e.Msg, "id_field") {
			t.Errorf("got %d:%d: %s, want line 6 naming id_field", e.Line, e.Column, e.Msg)
		}
	})
}

// Bound problems held for a mapping are capped like reported ones: a
// list of aliases to one long string breaks a bound per step.
func TestHeldBoundsCapped(t *testing.T) {
	p := &parser{}
	p.holdBounds()
	n := &yaml.Node{Line: 1, Column: 1}
	for range 10 * maxErrors {
		p.boundf(n, "step over the limit")
	}
	if len(p.held) != maxErrors {
		t.Errorf("held %d problems, want the cap %d", len(p.held), maxErrors)
	}
}
