package request_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/request"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// diffCatalogs is every catalog the differential test compiles against:
// the demo catalogs, the test fixtures under testdata/catalogs (Plasm
// forms, tracker, kanban) and a synthetic one with the
// corners a template must reproduce (base query, id variable, suffix,
// constant and optional query keys, constant headers, key auth).
func diffCatalogs(t testing.TB) []*catalog.Catalog {
	t.Helper()
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1/base/")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"plasmforms", "tracker", "kanban"} {
		c, err := catalogdir.LoadPath("../../../testdata/catalogs/" + dir)
		if err != nil {
			t.Fatal(err)
		}
		c.EntryID = "testdata-" + dir // the fixtures reuse the demo's entry ids
		cats = append(cats, c)
	}
	return append(cats, cornerCatalog())
}

func cornerCatalog() *catalog.Catalog {
	lit := func(v string) catalog.Segment { return catalog.Segment{Type: "literal", Value: v} }
	v := func(n string) *catalog.Expr { return &catalog.Expr{Type: catalog.ExprVar, Name: n} }
	k := func(x any) *catalog.Expr { return &catalog.Expr{Type: catalog.ExprConst, Value: x} }
	opt := func(n string) *catalog.Expr {
		return &catalog.Expr{Type: catalog.ExprIf, Cond: &catalog.Cond{Exists: n}, Then: v(n), Else: k(nil)}
	}
	obj := func(kv ...any) *catalog.Expr {
		e := &catalog.Expr{Type: catalog.ExprObject}
		for i := 0; i < len(kv); i += 2 {
			e.Fields = append(e.Fields, catalog.ObjectKV{Key: kv[i].(string), Value: kv[i+1].(*catalog.Expr)})
		}
		return e
	}
	start := int64(10)
	return &catalog.Catalog{
		EntryID: "corner", HTTPBackend: "https://api.example.com/v2/?key=fixed&z=1",
		Auth: catalog.Auth{Scheme: "api_key_query", Param: "api_key", Env: "CORNER_KEY"},
		Capabilities: map[string]*catalog.Capability{
			"thing_get":    {Name: "thing_get", Kind: catalog.KindGet, Entity: "Thing"},
			"thing_query":  {Name: "thing_query", Kind: catalog.KindQuery, Entity: "Thing"},
			"thing_delete": {Name: "thing_delete", Kind: catalog.KindDelete, Entity: "Thing"},
			"thing_fmt":    {Name: "thing_fmt", Kind: catalog.KindQuery, Entity: "Thing"},
			"thing_pages":  {Name: "thing_pages", Kind: catalog.KindQuery, Entity: "Thing"},
			"thing_links":  {Name: "thing_links", Kind: catalog.KindQuery, Entity: "Thing"},
		},
		Mappings: map[string]*catalog.Mapping{
			"thing_get": {Method: "get", Path: []catalog.Segment{lit("things"), {Type: "var", Name: "thing_id", Suffix: ":full view"}}, IDVar: "thing_id",
				Headers: obj("X-Const", k("yes"), "Accept", k("application/json"))},
			"thing_query": {Path: []catalog.Segment{lit("things")},
				Query: obj("q", opt("q"), "status", v("status"), "a", k("b c"), "n", k(7), "drop", k(nil), "thing_id", v("thing_id"))},
			"thing_delete": {Method: "DELETE", Path: []catalog.Segment{lit("things"), {Type: "var", Name: "id"}, lit("x y")}},
			"thing_pages": {Path: []catalog.Segment{lit("things"), {Type: "var", Name: "cursor"}},
				Query: obj("offset", v("offset"), "status", opt("status"), "limit", k(5)),
				Pagination: &catalog.Pagination{Location: "query", ParamOrder: []string{"offset"},
					Params: map[string]catalog.PageParam{"offset": {Counter: &start}, "limit": {Fixed: 25}, "cursor": {FromResponse: "next"}, "size": {Fixed: "big one"}}}},
			"thing_links": {Path: []catalog.Segment{lit("things")},
				Pagination: &catalog.Pagination{Location: "link_header", Params: map[string]catalog.PageParam{"page": {Counter: &start}}}},
			"thing_fmt": {Path: []catalog.Segment{lit("things")},
				Query: obj("q", &catalog.Expr{Type: catalog.ExprFormat, Template: "{a}", Vars: map[string]*catalog.Expr{"a": v("a")}})},
		},
	}
}

// values is the pool a call's variables are drawn from: plain and awkward
// strings, every number form that crosses the ABI, booleans, null and
// non-scalars.
var values = []any{
	"iss-1", "", ".", "..", "a/b", "a b&c=d", "ü€", "%2F", "x\xffy", "line\nbreak", "<tag>",
	42, int64(-7), int32(5), float64(3), float64(-0.0), float64(2.5), float64(1e21), float64(1 << 60),
	json.Number("12"), json.Number("-3"), json.Number("1e3"), json.Number("012"), json.Number("9223372036854775808"),
	json.Number("12345678901234567891"), json.Number("-9223372036854775809"), json.Number("1.5e19"), uint64(1<<63 + 5),
	json.Number("10.0"), json.Number("-0"), json.Number("1E3"), json.Number("1.2345678901234567891e19"), json.Number("123456789012345678901e0"),
	json.Number("2.5e0"), json.Number("1e-3"), json.Number("1e999999"), json.Number("-0.0"),
	true, false, nil, []any{"x", "y"}, map[string]any{"a": 1}, uint8(9),
}

// pageValues is the pool page-state values are drawn from: what a decoded
// response hands back, and some it never does.
var pageValues = []any{
	json.Number("0"), json.Number("40"), json.Number("2.5"), json.Number("-1"), "c-123", "a b", "x\xffy", "",
	nil, true, []any{"x"}, map[string]any{"a": 1}, 7, float64(3), "http://127.0.0.1:1/next?page=2",
}

// pageNames is every key a continuation of capability could carry.
func pageNames(cat *catalog.Catalog, capability string) []string {
	names := []string{"next_url", "cursor", "id", "status", "offset"}
	if p := cat.Mappings[capability].Pagination; p != nil {
		for n := range p.Params {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// varNames is every variable a call of capability could set.
func varNames(cat *catalog.Catalog, capability string) []string {
	names := map[string]bool{"id": true}
	m := cat.Mappings[capability]
	for _, s := range m.Path {
		if s.Name != "" {
			names[s.Name] = true
		}
	}
	if m.IDVar != "" {
		names[m.IDVar] = true
	}
	if m.Query != nil {
		for _, f := range m.Query.Fields {
			names[f.Key] = true
			if f.Value != nil && f.Value.Name != "" {
				names[f.Value.Name] = true
			}
		}
	}
	if cp := cat.Capabilities[capability]; cp != nil {
		for _, p := range cp.Parameters {
			names[p.Name] = true
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// viaGuest is what the host receives from plasm_compile for vars: the
// request crosses the ABI as JSON (numbers as json.Number), is compiled,
// and the answer crosses back as JSON. ok is false when either side fails.
func viaGuest(cat *catalog.Catalog, capability string, vars, page map[string]any) ([]byte, bool) {
	in, err := json.Marshal(&abi.CompileRequest{EntryID: cat.EntryID, Capability: capability, Vars: vars, Page: page})
	if err != nil {
		return nil, false
	}
	var req abi.CompileRequest
	if err := abi.Unmarshal(in, &req); err != nil {
		return nil, false
	}
	out, aerr := cml.Compile(cat, &req)
	if aerr != nil {
		return nil, false
	}
	return canonical(out), true
}

func canonical(r *abi.CompiledRequest) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	var back abi.CompiledRequest
	if err := abi.Unmarshal(b, &back); err != nil {
		panic(err)
	}
	b, _ = json.Marshal(&back)
	return b
}

// template compiles a capability's template and sends it across the ABI
// as JSON, as the engine does.
func template(t testing.TB, cat *catalog.Catalog, capability string) *request.Template {
	tm, reason := cml.Template(cat, capability)
	if (tm == nil) == (reason == "") {
		t.Fatalf("%s/%s: template %v with reason %q", cat.EntryID, capability, tm, reason)
	}
	if tm == nil {
		return nil
	}
	b, err := json.Marshal(tm)
	if err != nil {
		t.Fatal(err)
	}
	var back request.Template
	if err := abi.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// check fails when Fill accepts vars and answers anything but the guest
// compiler's request.
func check(t testing.TB, cat *catalog.Catalog, capability string, tm *request.Template, vars, page map[string]any) bool {
	got, ok := tm.Fill(vars, page)
	if !ok {
		return false
	}
	want, wok := viaGuest(cat, capability, vars, page)
	if !wok {
		t.Fatalf("%s/%s vars %#v page %#v: template filled %+v, the compiler refuses the call", cat.EntryID, capability, vars, page, got)
	}
	if g := canonical(got); !bytes.Equal(g, want) {
		t.Fatalf("%s/%s vars %#v page %#v:\ntemplate %s\ncompiler %s", cat.EntryID, capability, vars, page, g, want)
	}
	return true
}

// TestTemplateMatchesCompiler is the differential test behind request
// templates: for every capability of the catalogs, seeded random calls
// filled by the template must be byte for byte the guest compiler's
// request, and the template must decline every call the compiler refuses.
func TestTemplateMatchesCompiler(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2026))
	templated, filled, paged := 0, 0, 0
	for _, cat := range diffCatalogs(t) {
		caps := make([]string, 0, len(cat.Capabilities))
		for name := range cat.Capabilities {
			caps = append(caps, name)
		}
		sort.Strings(caps)
		for _, name := range caps {
			tm := template(t, cat, name)
			if tm == nil {
				continue
			}
			templated++
			names := varNames(cat, name)
			for range 300 {
				vars := map[string]any{}
				for _, n := range names {
					if rng.IntN(10) < 7 {
						vars[n] = values[rng.IntN(len(values))]
					}
				}
				var page map[string]any
				if rng.IntN(3) > 0 {
					page = map[string]any{}
					for _, n := range pageNames(cat, name) {
						if rng.IntN(10) < 5 {
							page[n] = pageValues[rng.IntN(len(pageValues))]
						}
					}
				}
				if check(t, cat, name, tm, vars, page) {
					filled++
					if r, _ := tm.Fill(vars, page); r.Page != nil {
						paged++
					}
				}
			}
		}
	}
	t.Logf("%d templated capabilities, %d calls filled natively, %d of them paged", templated, filled, paged)
	if templated < 8 || filled < 500 || paged < 200 {
		t.Fatalf("only %d templates and %d native fills: the test no longer exercises templates", templated, filled)
	}
}

// TestTemplateCoverage pins which capabilities get a template, so a change
// in the rules is a visible decision.
func TestTemplateCoverage(t *testing.T) {
	want := map[string][]string{
		"corner":  {"thing_delete", "thing_get", "thing_pages", "thing_query"},
		"tracker": {"comment_query", "issue_delete", "issue_get", "issue_query", "issue_search", "label_query", "project_get", "project_query", "user_get", "user_query"},
	}
	for _, cat := range diffCatalogs(t) {
		w, ok := want[cat.EntryID]
		if !ok {
			continue
		}
		var got []string
		for name := range cat.Capabilities {
			if tm, _ := cml.Template(cat, name); tm != nil {
				got = append(got, name)
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, w) {
			t.Errorf("%s: templates for %v, want %v", cat.EntryID, got, w)
		}
	}
}

// FuzzTemplateFill fuzzes the values a template substitutes: whatever Fill
// accepts must be the compiler's request.
func FuzzTemplateFill(f *testing.F) {
	f.Add("iss-1", "open", int64(3), true)
	f.Add("..", "a&b=c", int64(-1), false)
	f.Add("x\xff", "", int64(1)<<62, true)
	cats := diffCatalogs(f)
	type target struct {
		cat  *catalog.Catalog
		name string
		tm   *request.Template
	}
	var targets []target
	for _, cat := range cats {
		for name := range cat.Capabilities {
			if tm := template(f, cat, name); tm != nil {
				targets = append(targets, target{cat, name, tm})
			}
		}
	}
	sort.Slice(targets, func(i, j int) bool {
		return targets[i].cat.EntryID+targets[i].name < targets[j].cat.EntryID+targets[j].name
	})
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, b bool) {
		for _, tg := range targets {
			for _, vars := range []map[string]any{
				{"id": s1, "status": s2, "q": n, "thing_id": b},
				{"id": n, "q": s1, "status": b, "thing_id": s2},
				{"id": json.Number(s2), "status": json.Number(s1)},
				{"id": float64(n), "q": s2},
			} {
				for _, name := range varNames(tg.cat, tg.name) {
					if _, ok := vars[name]; !ok && name != "id" {
						vars[name] = s1
					}
				}
				check(t, tg.cat, tg.name, tg.tm, vars, nil)
				check(t, tg.cat, tg.name, tg.tm, vars, map[string]any{"offset": json.Number(s2), "limit": s1, "cursor": n, "page": b})
			}
		}
	})
}
