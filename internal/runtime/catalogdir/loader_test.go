package catalogdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

func mustLoadPath(t *testing.T, p string) *catalog.Catalog {
	t.Helper()
	c, err := LoadPath(p)
	if err != nil {
		t.Fatalf("LoadPath(%s): %v", p, err)
	}
	return c
}

// dirFS copies the files of an on-disk directory into a MapFS under prefix.
func dirFS(t testing.TB, dir, prefix string, into fstest.MapFS) fstest.MapFS {
	t.Helper()
	if into == nil {
		into = fstest.MapFS{}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		into[prefix+"/"+e.Name()] = &fstest.MapFile{Data: data}
	}
	return into
}

func i64(v int64) *int64 { return &v }

// sharedTracker is the tracker-like catalog every package's tests share
// (testdata/README.md at the top). This package cannot import
// internal/fixture, which imports it, so it names the directory.
const sharedTracker = "../../../testdata/catalogs/tracker"

// TestTrackerGolden loads the shared REST fixture and compares its JSON form
// (the form shipped to the guest) with testdata/tracker.golden.json.
func TestTrackerGolden(t *testing.T) {
	c := mustLoadPath(t, sharedTracker)
	got, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/tracker.golden.json", append(got, '\n'))
}

// TestTrackerModel checks the parts of the REST fixture whose Go types JSON
// would blur: int64 literals, null stop values, pointers and orders.
func TestTrackerModel(t *testing.T) {
	c := mustLoadPath(t, sharedTracker)
	if c.EntryID != "tracker" || c.Version != 1 || !reflect.DeepEqual(c.Auth, catalog.Auth{Scheme: "bearer_token", Env: "TRACKER_TOKEN"}) {
		t.Errorf("header: %q v%d %+v", c.EntryID, c.Version, c.Auth)
	}
	if !reflect.DeepEqual(c.RegistryAliases, []string{"trk"}) {
		t.Errorf("aliases %v", c.RegistryAliases)
	}
	issue := c.Entities["Issue"]
	if want := []string{"id", "project_id", "title", "status", "assignee_id", "score", "votes", "body"}; !reflect.DeepEqual(issue.FieldOrder, want) {
		t.Errorf("field order %v", issue.FieldOrder)
	}
	if want := []string{"comments", "labels", "assignee"}; !reflect.DeepEqual(issue.RelOrder, want) {
		t.Errorf("relation order %v", issue.RelOrder)
	}
	repo := c.Entities["Repo"]
	if got := repo.Fields["pushed_by"].Path; !reflect.DeepEqual(got, []string{"pusher", "login"}) {
		t.Errorf("dotted path %v", got)
	}
	if got := repo.Relations["stargazers"].Materialize.Path; !reflect.DeepEqual(got, []catalog.PathStep{{Key: "stargazers"}, {Wildcard: true}, {Key: "user"}}) {
		t.Errorf("stargazers path %v", got)
	}
	if got := issue.Relations["assignee"].Materialize; !reflect.DeepEqual(got, catalog.Materialize{Kind: catalog.QueryScopedBindings, Capability: "user_query", Bindings: map[string]string{"user_id": "assignee_id", "project": "project_id"}}) {
		t.Errorf("bindings %+v", got)
	}
	q := c.Mappings["member_query"]
	wantPage := &catalog.Pagination{
		Params:     map[string]catalog.PageParam{"offset": {Counter: i64(0), Step: 50}, "limit": {Fixed: int64(50)}},
		ParamOrder: []string{"offset", "limit"},
		Location:   "query",
		StopWhen:   &catalog.StopWhen{Field: "next", HasEq: true},
	}
	if !reflect.DeepEqual(q.Pagination, wantPage) {
		t.Errorf("offset pagination:\n got %#v\nwant %#v", q.Pagination, wantPage)
	}
	if want := []catalog.Segment{{Type: "literal", Value: "members"}, {Type: "literal"}}; !reflect.DeepEqual(q.Path, want) {
		t.Errorf("path %+v", q.Path)
	}
	if !reflect.DeepEqual(q.Response, &catalog.Response{ItemsPath: []string{"results"}}) {
		t.Errorf("results_list became %+v", q.Response)
	}
	if got := c.Mappings["user_search"].Query.Fields[1].Value.Value; got != int64(1) {
		t.Errorf("const 1 decoded as %T %v", got, got)
	}
	if got := c.Mappings["label_search"].Pagination; !reflect.DeepEqual(got.StopWhen, &catalog.StopWhen{Field: "has_more", Absent: true}) || got.Params["page"].Max != 100 || *got.Params["page"].Counter != 1 {
		t.Errorf("label pagination %+v", got)
	}
	for name, want := range map[string]*catalog.Response{
		"label_search": {Items: true},
		"issue_get":    {Single: true},
		"user_search":  {ItemsPath: []string{"hits"}, ItemInnerKey: "user"},
		"issue_delete": nil,
	} {
		if got := c.Mappings[name].Response; !reflect.DeepEqual(got, want) {
			t.Errorf("%s response %+v, want %+v", name, got, want)
		}
	}
	if out := c.Capabilities["issue_close"].Output; out == nil || out.Type != "side_effect" {
		t.Errorf("issue_close output %+v", out)
	}
	if got := catalog.MethodLabel(c.Capabilities["issue_add_label"]); got != "add-label" {
		t.Errorf("method label %q", got)
	}
	if len(c.Digest) != 64 {
		t.Errorf("digest %q", c.Digest)
	}
}

// linearWant is the exact model of testdata/catalogs/linear (the shared GraphQL tracker).
func linearWant() *catalog.Catalog {
	v := func(name string) *catalog.Expr { return &catalog.Expr{Type: "var", Name: name} }
	k := func(x any) *catalog.Expr { return &catalog.Expr{Type: "const", Value: x} }
	obj := func(kv ...catalog.ObjectKV) *catalog.Expr { return &catalog.Expr{Type: "object", Fields: kv} }
	return &catalog.Catalog{
		EntryID:     "linear",
		Version:     2,
		HTTPBackend: "https://api.linear.example/",
		Auth:        catalog.Auth{Scheme: "api_key_header", Header: "Authorization", Env: "LINEAR_API_KEY"},
		Values: map[string]*catalog.Value{
			"id":       {Type: "uuid"},
			"text":     {Type: "string"},
			"priority": {Type: "select", AllowedValues: []string{"0", "1", "2", "3", "4"}},
			"count":    {Type: "integer"},
		},
		Entities: map[string]*catalog.Entity{
			"Issue": {
				Name:    "Issue",
				IDField: "id",
				Fields: map[string]*catalog.Field{
					"id":       {Name: "id", ValueRef: "id", Required: true},
					"title":    {Name: "title", ValueRef: "text"},
					"priority": {Name: "priority", ValueRef: "priority"},
					"team_key": {Name: "team_key", ValueRef: "text", Path: []string{"team", "key"}},
				},
				FieldOrder: []string{"id", "title", "priority", "team_key"},
			},
		},
		Capabilities: map[string]*catalog.Capability{
			"issue_query": {
				Name:   "issue_query",
				Kind:   "query",
				Entity: "Issue",
				Parameters: []catalog.Parameter{
					{Name: "team", ValueRef: "text"},
					{Name: "first", ValueRef: "count", Role: "response_control"},
				},
				Provides: []string{"id", "title", "priority", "team_key"},
			},
		},
		Mappings: map[string]*catalog.Mapping{
			"issue_query": {
				Method:    "POST",
				Transport: "graphql",
				Path:      []catalog.Segment{{Type: "literal", Value: "graphql"}},
				Headers:   obj(catalog.ObjectKV{Key: "Content-Type", Value: k("application/json")}),
				Body: obj(
					catalog.ObjectKV{Key: "query", Value: k("query Issues($first: Int, $after: String, $filter: IssueFilter) { issues(first: $first, after: $after, filter: $filter) { nodes { id title priority team { key } } pageInfo { hasNextPage endCursor } } }")},
					catalog.ObjectKV{Key: "variables", Value: obj(
						catalog.ObjectKV{Key: "first", Value: k(int64(50))},
						catalog.ObjectKV{Key: "filter", Value: &catalog.Expr{
							Type: "if",
							Cond: &catalog.Cond{Exists: "team"},
							Then: obj(catalog.ObjectKV{Key: "team", Value: obj(catalog.ObjectKV{Key: "key", Value: obj(catalog.ObjectKV{Key: "eq", Value: v("team")})})}),
							Else: k(nil),
						}},
						catalog.ObjectKV{Key: "label", Value: &catalog.Expr{
							Type:     "format",
							Template: "{prefix}-{team}",
							Vars:     map[string]*catalog.Expr{"prefix": k("LIN"), "team": v("team")},
						}},
						catalog.ObjectKV{Key: "tags", Value: &catalog.Expr{Type: "array", Items: []*catalog.Expr{
							k([]any{"a", int64(1), 2.5, true, nil, map[string]any{"k": "v"}}),
							{
								Type: "if",
								Cond: &catalog.Cond{Equals: &catalog.EqualsCond{Left: v("team"), Right: k("ENG")}},
								Then: k("engineering"),
								Else: k("other"),
							},
						}}},
						catalog.ObjectKV{Key: "urgent", Value: &catalog.Expr{
							Type: "if",
							Cond: &catalog.Cond{Bool: v("priority")},
							Then: k(int64(1)),
						}},
					)},
				),
				Response: &catalog.Response{ItemsPath: []string{"data", "issues", "nodes"}},
				Pagination: &catalog.Pagination{
					Params: map[string]catalog.PageParam{
						"after": {FromResponse: "endCursor"},
						"first": {Fixed: int64(50)},
					},
					ParamOrder:     []string{"after", "first"},
					Location:       "body",
					ResponsePrefix: []string{"data", "issues", "pageInfo"},
					StopWhen:       &catalog.StopWhen{Field: "hasNextPage", Eq: false, HasEq: true},
				},
			},
		},
	}
}

func TestLinearExactModel(t *testing.T) {
	got := mustLoadPath(t, "../../../testdata/catalogs/linear")
	want := linearWant()
	want.Digest = got.Digest
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("model differs:\n got %s\nwant %s", g, w)
	}
}

// combine writes a split catalog as one .cgs.yaml document.
func combine(t *testing.T, dir string) []byte {
	t.Helper()
	d, err := os.ReadFile(filepath.Join(dir, DomainFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(dir, MappingsFile))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(d)
	b.WriteString("mappings:\n")
	for _, line := range strings.SplitAfter(string(m), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	return []byte(b.String())
}

func TestCombinedForm(t *testing.T) {
	for name, src := range map[string]string{"linear": "../../../testdata/catalogs/linear", "tracker": sharedTracker} {
		split := mustLoadPath(t, src)
		data := combine(t, src)
		fsys := fstest.MapFS{
			"cats/" + name + CombinedSuffix:                 {Data: data},
			"wrapped/" + name + "/" + name + CombinedSuffix: {Data: data},
		}
		for _, dir := range []string{"cats/" + name + CombinedSuffix, "wrapped/" + name} {
			got, err := Load(fsys, dir, "")
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			if got.Digest == split.Digest {
				t.Errorf("%s: combined and split forms share a digest", dir)
			}
			got.Digest = split.Digest
			if !reflect.DeepEqual(got, split) {
				t.Errorf("%s: combined form loads differently from the split form", dir)
			}
		}
	}

	c := mustLoadPath(t, "testdata/good/pets.cgs.yaml")
	if c.EntryID != "pets" || c.Auth.Scheme != "api_key_query" || c.Mappings["pet_query"] == nil {
		t.Errorf("pets: %+v", c)
	}

	// Problems inside the combined file are named by their full path.
	bad := fstest.MapFS{"x.cgs.yaml": {Data: []byte("version: 1\nmappings:\n  thing_get: {method: FETCH, path: []}\n")}}
	_, err := Load(bad, "x.cgs.yaml", "")
	want := "x.cgs.yaml:3:23: mappings.thing_get.method: \"FETCH\" is not one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"
	if err == nil || err.Error() != want {
		t.Errorf("combined errors:\n%v\nwant:\n%s", err, want)
	}
}

func TestLoadForms(t *testing.T) {
	good := dirFS(t, "../../../testdata/catalogs/linear", "a/linear", nil)
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		dir, id string
		wantID  string
		wantErr string
		notCat  bool
	}{
		{name: "dir", fsys: good, dir: "a/linear", wantID: "linear"},
		{name: "explicit id", fsys: good, dir: "a/linear", id: "linear-eu", wantID: "linear-eu"},
		{name: "bad id", fsys: good, dir: "a/linear", id: "no spaces", wantErr: `a/linear: entry id "no spaces" must be 1-128 letters, digits, '_', '-' or '.', starting with a letter or digit`},
		{name: "root needs id", fsys: fstest.MapFS{"domain.yaml": {}, "mappings.yaml": {}}, dir: ".", wantErr: `catalogdir: cannot derive an entry id from "."; pass one`},
		{name: "missing mappings", fsys: fstest.MapFS{"c/domain.yaml": {Data: []byte("version: 1\n")}}, dir: "c", wantErr: "c/mappings.yaml: missing: a catalog directory needs both domain.yaml and mappings.yaml"},
		{name: "both forms", fsys: fstest.MapFS{"c/domain.yaml": {}, "c/mappings.yaml": {}, "c/c.cgs.yaml": {}}, dir: "c", wantErr: "c: holds both domain.yaml/mappings.yaml and c.cgs.yaml; keep one form"},
		{name: "two combined", fsys: fstest.MapFS{"c/a.cgs.yaml": {}, "c/b.cgs.yaml": {}}, dir: "c", wantErr: "c: holds several combined catalogs (a.cgs.yaml, b.cgs.yaml); keep one per directory"},
		{name: "empty dir", fsys: fstest.MapFS{"c/README.md": {}}, dir: "c", wantErr: "catalogdir: c: not a catalog: no domain.yaml/mappings.yaml or *.cgs.yaml", notCat: true},
		{name: "plain file", fsys: fstest.MapFS{"c.yaml": {}}, dir: "c.yaml", wantErr: "catalogdir: c.yaml: not a catalog (expected a directory or a *.cgs.yaml file)", notCat: true},
		{name: "absent", fsys: fstest.MapFS{}, dir: "nope", wantErr: "catalogdir: open nope: file does not exist"},
		{name: "invalid path", fsys: fstest.MapFS{}, dir: "../x", wantErr: `catalogdir: invalid path "../x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.fsys, tt.dir, tt.id)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %s", err, tt.wantErr)
				}
				if errors.Is(err, ErrNotCatalog) != tt.notCat {
					t.Errorf("errors.Is(ErrNotCatalog) = %v", !tt.notCat)
				}
				if c != nil {
					t.Error("catalog returned with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.EntryID != tt.wantID {
				t.Errorf("entry id %q, want %q", c.EntryID, tt.wantID)
			}
		})
	}
}

func TestLoadPathErrors(t *testing.T) {
	if _, err := LoadPath("testdata/does-not-exist"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.cgs.yaml"), []byte("version: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPath(filepath.Join(dir, "bad.cgs.yaml"))
	want := filepath.Join(dir, "bad.cgs.yaml") + `:1:10: version: expected an integer, got "x"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestLoadAll(t *testing.T) {
	fsys := dirFS(t, sharedTracker, "cats/tracker", nil)
	dirFS(t, "../../../testdata/catalogs/linear", "cats/linear", fsys)
	pets, err := os.ReadFile("testdata/good/pets.cgs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys["cats/pets.cgs.yaml"] = &fstest.MapFile{Data: pets}
	fsys["cats/README.md"] = &fstest.MapFile{Data: []byte("not a catalog")}
	fsys["cats/.git/config"] = &fstest.MapFile{Data: []byte("[core]")}
	fsys["cats/broken/domain.yaml"] = &fstest.MapFile{Data: []byte("version: 0\n")}
	fsys["cats/broken/mappings.yaml"] = &fstest.MapFile{Data: []byte("x_get: {method: GET, path: []}\n")}
	fsys["cats/alsobroken.cgs.yaml"] = &fstest.MapFile{Data: []byte("version: 1\nvalues: {a: {type: nope}}\n")}
	fsys["cats/empty/notes.txt"] = &fstest.MapFile{Data: []byte("x")}
	// linear.cgs.yaml would duplicate the linear directory's entry id.
	fsys["cats/linear.cgs.yaml"] = &fstest.MapFile{Data: combine(t, "../../../testdata/catalogs/linear")}
	// An alias that names another entry is reported without dropping either.
	fsys["cats/shadow.cgs.yaml"] = &fstest.MapFile{Data: []byte("version: 1\nregistry_aliases: [pets]\n")}

	cats, err := LoadAll(fsys, "cats")
	var ids []string
	for _, c := range cats {
		ids = append(ids, c.EntryID)
	}
	if want := []string{"linear", "pets", "shadow", "tracker"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("loaded %v, want %v", ids, want)
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want an ErrorList, got %v", err)
	}
	want := strings.Join([]string{
		`cats/alsobroken.cgs.yaml:2:20: values.a.type: "nope" is not one of string, uuid, integer, number, boolean, select, multi_select, date, array, entity_ref, blob, json`,
		`cats/broken/domain.yaml:1:10: version: must be an integer ≥ 1, got 0`,
		`cats/empty: not a catalog: no domain.yaml/mappings.yaml or *.cgs.yaml`,
		`cats/linear.cgs.yaml: entry id "linear" is already taken by cats/linear`,
		`cats/shadow.cgs.yaml: registry_aliases: "pets" is the entry id of cats/pets.cgs.yaml`,
	}, "\n")
	if err.Error() != want {
		t.Errorf("errors:\n%v\nwant:\n%s", err, want)
	}

	if _, err := LoadAll(fsys, "missing"); err == nil || errors.As(err, &list) {
		t.Errorf("unreadable root: %v", err)
	}
	good := dirFS(t, "../../../testdata/catalogs/linear", "r/linear", nil)
	if cats, err := LoadAll(good, "r"); err != nil || len(cats) != 1 {
		t.Errorf("clean root: %d catalogs, %v", len(cats), err)
	}
}

func TestDigest(t *testing.T) {
	a := dirFS(t, "../../../testdata/catalogs/linear", "one/linear", nil)
	b := dirFS(t, "../../../testdata/catalogs/linear", "two/other", nil)
	ca, err := Load(a, "one/linear", "")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := Load(b, "two/other", "")
	if err != nil {
		t.Fatal(err)
	}
	if ca.Digest != cb.Digest {
		t.Error("digest depends on where the catalog lives")
	}
	again, _ := Load(a, "one/linear", "")
	if again.Digest != ca.Digest {
		t.Error("digest is not deterministic")
	}
	b["two/other/mappings.yaml"].Data = append(append([]byte(nil), b["two/other/mappings.yaml"].Data...), "\n# comment\n"...)
	changed, err := Load(b, "two/other", "")
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest == ca.Digest {
		t.Error("digest ignores a content change")
	}
	// Moving bytes from one file to the other must change the digest.
	if digest([]source{{"a", []byte("xy")}, {"b", nil}}) == digest([]source{{"a", []byte("x")}, {"b", []byte("y")}}) {
		t.Error("digest collides across file boundaries")
	}
}

func TestModule(t *testing.T) {
	const sum = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	fsys := fstest.MapFS{
		"m/domain.yaml": {Data: []byte(`version: 1
module: {sha256: ` + sum + `, hooks: [invoke, prepare_request], secrets: [SIGNING_KEY, API_TOKEN]}
auth: {scheme: bearer_token, env: API_TOKEN}
values: {text: {type: string}}
entities:
  Thing: {id_field: id, fields: {id: {value_ref: text}}}
capabilities:
  thing_get: {kind: get, entity: Thing}
  thing_query: {kind: query, entity: Thing}
`)},
		"m/mappings.yaml": {Data: []byte(`thing_get: {transport: wasm}
thing_query: {method: GET, path: [{type: literal, value: things}]}
`)},
		"m/module.wasm": {Data: []byte("\x00asm\x01\x00\x00\x00")},
	}
	c, err := Load(fsys, "m", "")
	if err != nil {
		t.Fatal(err)
	}
	want := &catalog.Module{SHA256: strings.ToLower(sum), Hooks: []string{"invoke", "prepare_request"}, Secrets: []string{"SIGNING_KEY", "API_TOKEN"}}
	if !reflect.DeepEqual(c.Module, want) {
		t.Errorf("module %+v", c.Module)
	}
	// The auth's name and the module's own are one declared set.
	if got := c.SecretNames(); !reflect.DeepEqual(got, []string{"API_TOKEN", "SIGNING_KEY"}) {
		t.Errorf("SecretNames = %q", got)
	}
	if m := c.Mappings["thing_get"]; m.Transport != "wasm" || m.Method != "" || m.Path != nil {
		t.Errorf("wasm mapping %+v", m)
	}
	// The module's bytes are pinned by its own digest, not the catalog's.
	fsys["m/module.wasm"] = &fstest.MapFile{Data: []byte("\x00asm\x02")}
	c2, err := Load(fsys, "m", "")
	if err != nil || c2.Digest != c.Digest {
		t.Errorf("module bytes changed the catalog digest (%v)", err)
	}
	// A combined file cannot carry a module.
	combined := fstest.MapFS{"m.cgs.yaml": {Data: []byte("version: 1\nmodule: {sha256: " + sum + ", hooks: [invoke]}\n")}}
	if _, err := Load(combined, "m.cgs.yaml", ""); err == nil || !strings.Contains(err.Error(), "m.cgs.yaml:2:1: module: a vendor module needs a catalog directory") {
		t.Errorf("combined module: %v", err)
	}
}

func TestHostileInput(t *testing.T) {
	laughs := "version: 1\nvalues:\n  a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i, c := range "bcdefghi" {
		prev := string("abcdefgh"[i])
		laughs += "  " + string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
	}
	deep := "version: 1\nvalues: {a: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}\n"
	deeper := "version: 1\nx: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	nested := "type: array\nitems:\n"
	for i := 0; i < 40; i++ {
		nested = "type: array\nitems:\n- " + strings.ReplaceAll(nested, "\n", "\n  ")
	}
	nestedConst := "{type: const, value: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"
	tests := []struct {
		name, domain, mappings, want string
	}{
		{"billion laughs", laughs, "", "c/domain.yaml:1:1: YAML aliases expand to more than 500000 nodes"},
		{"too big", "version: 1\n#" + strings.Repeat("x", MaxFileSize) + "\n", "", "c/domain.yaml: file is larger than the 4194304-byte (4 MiB) limit"},
		{"deep flow", deep, "", `c/domain.yaml:2:13: values.a: expected a mapping, got a list`},
		{"deeper flow", deeper, "", "c/domain.yaml:2: invalid YAML: exceeded max depth of 10000"},
		{"deep expression", "version: 1\n", "x:\n  query:\n    " + strings.ReplaceAll(nested, "\n", "\n    ") + "\n", "expression nested deeper than 32 levels"},
		{"deep literal", "version: 1\n", "x: {query: " + nestedConst + "}\n", "value nested deeper than 64 levels"},
		{"binary", "\x00\xff\xfe", "", "c/domain.yaml:1:1: invalid YAML: control character U+0000"},
		{"huge name", "version: 1\nvalues: {a: {type: " + strings.Repeat("k", 100000) + "}}\n", "", "c/domain.yaml:2:20: values.a.type: \"kkkk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"c/domain.yaml": {Data: []byte(tt.domain)}, "c/mappings.yaml": {Data: []byte(tt.mappings)}}
			_, err := Load(fsys, "c", "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want it to contain %q", err, tt.want)
			}
			if err != nil && len(err.Error()) > 100*maxMsg {
				t.Errorf("error text is %d bytes", len(err.Error()))
			}
		})
	}
}

func TestErrorCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nvalues:\n")
	for i := 0; i < 500; i++ {
		b.WriteString("  v" + strings.Repeat("x", i%7) + itoa3(i) + ": {type: nope}\n")
	}
	_, err := Load(fstest.MapFS{"c/domain.yaml": {Data: []byte(b.String())}, "c/mappings.yaml": {}}, "c", "")
	var list ErrorList
	if !errors.As(err, &list) || len(list) != maxErrors+1 || list[maxErrors].Msg != "too many errors; stopping here" {
		t.Fatalf("got %d errors", len(list))
	}
}

// TestHostileScale checks that large files full of dangling references stay
// fast: hints and listings are computed only for recorded problems.
func TestHostileScale(t *testing.T) {
	var d, m strings.Builder
	d.WriteString("version: 1\nvalues:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&d, "  v%d: {type: array, items: {value_ref: v%d}}\n", i, i+1)
	}
	d.WriteString("entities:\n  E:\n    key_vars: [")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&d, "k%d, ", i)
	}
	d.WriteString("]\n    fields:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&d, "      f%d: {value_ref: nope%d}\n", i, i)
	}
	d.WriteString("capabilities:\n  e_query:\n    kind: get\n    entity: E\n    parameters:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&d, "      - {name: p%d, value_ref: v0}\n", i)
	}
	m.WriteString("e_query:\n  method: GET\n  path:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&m, "    - {type: var, name: x%d}\n", i)
	}
	start := time.Now()
	_, err := Load(fstest.MapFS{"c/domain.yaml": {Data: []byte(d.String())}, "c/mappings.yaml": {Data: []byte(m.String())}}, "c", "")
	if err == nil {
		t.Fatal("want errors")
	}
	t.Logf("took %v", time.Since(start))
}

func TestHints(t *testing.T) {
	if got := smallest([]string{"d", "b", "a", "c", "e"}, 3); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("smallest: %v", got)
	}
	tests := []struct {
		s    string
		in   []string
		want string
	}{
		{"titel", []string{"title", "body"}, ` (did you mean "title"?)`},
		{"strng", valueTypes, ` (did you mean "string"?)`},
		{"issue_list", []string{"issue_get"}, ""},
		{"x", nil, ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.s, tt.in); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	if d := editDistance("ab", "ba"); d != 1 {
		t.Errorf("transposition costs %d", d)
	}
}

func itoa3(i int) string {
	return string(rune('a'+i/100%26)) + string(rune('a'+i/10%10)) + string(rune('a'+i%10))
}
