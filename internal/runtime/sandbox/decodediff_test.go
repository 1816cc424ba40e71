package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// diffCatalogs are the catalogs the host decoder is checked against the
// guest's on: the demo catalogs, the shared fixtures under
// testdata/catalogs (tracker, kanban, Plasm's response forms) and the
// benchmark page's. Fixtures get their own entry ids beside the demo's.
func diffCatalogs(tb testing.TB) []*catalog.Catalog {
	tb.Helper()
	var cats []*catalog.Catalog
	for _, dir := range []string{"../../../demo/catalogs/tracker", "../../../demo/catalogs/kanban", "../../../demo/catalogs/ledger"} {
		cat, err := catalogdir.LoadPath(dir)
		if err != nil {
			tb.Fatalf("load %s: %v", dir, err)
		}
		cats = append(cats, cat)
	}
	for _, name := range []string{"tracker", "kanban", "plasmforms", "embedded"} {
		cat := fixture.Catalog(tb, name)
		cat.EntryID = "fixture-" + name
		cats = append(cats, cat)
	}
	return append(cats, pageCatalog(tb))
}

// diffCall is one decode to compare: a capability, optionally one of its
// entity's embedded relations.
type diffCall struct {
	cat      *catalog.Catalog
	cap, rel string
}

func diffCalls(cats []*catalog.Catalog) []diffCall {
	var calls []diffCall
	for _, cat := range cats {
		names := make([]string, 0, len(cat.Capabilities))
		for n := range cat.Capabilities {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			calls = append(calls, diffCall{cat: cat, cap: n})
			if ent := cat.Entities[cat.Capabilities[n].Entity]; ent != nil {
				for _, r := range embeddedRels(cat, ent) {
					calls = append(calls, diffCall{cat: cat, cap: n, rel: r})
				}
			}
		}
	}
	return calls
}

// diffEngine is an engine client with every diff catalog loaded.
func diffEngine(tb testing.TB, cats []*catalog.Catalog) *Engine {
	tb.Helper()
	if !testEngine.HasExport(abi.ExportDecodeSpec) {
		tb.Skip("engine.wasm predates plasm_decode_spec; run make engine")
	}
	eng := NewEngine(testHost.Tenant("decode-diff", TenantSpec{Module: testEngine, Loads: CatalogLoads(cats), Limits: patientPageLimits()}))
	tb.Cleanup(eng.Close)
	return eng
}

// compareSides decodes body both ways and fails on any difference in rows,
// columns, next-page state or error.
func compareSides(t *testing.T, eng *Engine, req *abi.DecodeRequest, body []byte) (errorText string) {
	t.Helper()
	ctx := context.Background()
	want, werr := eng.DecodeInGuest(ctx, req, body)
	got, gerr := eng.Decode(ctx, req, body)
	if !reflect.DeepEqual(errText(werr), errText(gerr)) || !reflect.DeepEqual(want, got) {
		t.Fatalf("%s/%s status %d body %.300q\n guest: %#v %v\n host:  %#v %v", req.Capability, req.Relation, req.Status, body, want, errText(werr), got, errText(gerr))
	}
	return errText(gerr)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	if ae, ok := err.(*abi.Error); ok {
		b, _ := json.Marshal(ae)
		return string(b)
	}
	return err.Error()
}

// TestHostDecodeMatchesGuest is the differential proof that the host's
// spec-applied decoder answers exactly as the guest's decoder: generated
// pages for every capability (and embedded relation) of the demo
// catalogs, the shared fixtures and the benchmark catalog, in every
// response shape they declare, with nulls, missing and wrong-kind values,
// pagination fields, Link headers, error statuses and malformed bodies.
func TestHostDecodeMatchesGuest(t *testing.T) {
	cats := diffCatalogs(t)
	eng := diffEngine(t, cats)
	r := rand.New(rand.NewPCG(15, 2))
	n, notOne := 0, 0
	for _, c := range diffCalls(cats) {
		for range 12 {
			req, body := genDecode(r, c)
			if strings.Contains(compareSides(t, eng, req, body), "declared cardinality one") {
				notOne++
			}
			n++
		}
	}
	// The generator puts arrays where one object is declared; both sides
	// must have refused some, or the comparison never reached that rule.
	if notOne == 0 {
		t.Fatal("no decode met an array under a cardinality-one relation")
	}
	compareSides(t, eng, pageReq, pageBody(pageRows, pageRowBytes))
	t.Logf("%d decodes compared", n+1)
}

// FuzzHostDecodeMatchesGuest compares both sides on arbitrary bodies for
// every diff capability.
func FuzzHostDecodeMatchesGuest(f *testing.F) {
	for _, s := range []string{`[]`, `{"items":[{"id":1}]}`, `{"data":{"x":[1,"a",null]}}`, `"x"`, `{"errors":[{"message":"m"}]}`, `[[[[1]]]]`, `{"id":1e999}`, `{"id":12345678901234567891,"n":-9223372036854775809}`, `[18446744073709551616,1.0,1e3]`, `"\ud800"`, `{`, ``} {
		f.Add(uint16(0), 200, []byte(s), "")
		f.Add(uint16(7), 200, []byte(s), `<?page=2>; rel="next"`)
	}
	cats := diffCatalogs(f)
	calls := diffCalls(cats)
	eng := diffEngine(f, cats)
	f.Fuzz(func(t *testing.T, pick uint16, status int, body []byte, link string) {
		c := calls[int(pick)%len(calls)]
		req := &abi.DecodeRequest{EntryID: c.cat.EntryID, Capability: c.cap, Relation: c.rel, Status: status,
			Headers: map[string]string{"Link": link}, Page: map[string]any{"page": json.Number("2"), "cursor": "c1"},
			RequestURL: "https://api.example.com/v1/items?page=1"}
		compareSides(t, eng, req, body)
	})
}

// genDecode generates one request and body for c from its catalog.
func genDecode(r *rand.Rand, c diffCall) (*abi.DecodeRequest, []byte) {
	cp := c.cat.Capabilities[c.cap]
	m := c.cat.Mappings[c.cap]
	if m == nil {
		m = &catalog.Mapping{}
	}
	req := &abi.DecodeRequest{EntryID: c.cat.EntryID, Capability: c.cap, Relation: c.rel, Status: 200,
		RequestURL: "https://api.example.com/v1/items?page=1", Vars: map[string]any{}}
	switch r.IntN(14) {
	case 0:
		req.Status = []int{204, 401, 404, 429, 500}[r.IntN(5)]
	case 1:
		return req, []byte([]string{``, `{`, `[1,]`, `{"a":1} x`, `null`, `"bare"`, `12`, `true`}[r.IntN(8)])
	}
	if r.IntN(3) == 0 {
		req.Headers = map[string]string{"Link": []string{`<?page=3>; rel="next"`, `<https://api.example.com/v1/items?page=1>; rel="next"`,
			`<a>; rel="prev", <b>; rel="last"`, `junk`}[r.IntN(4)]}
	}
	if r.IntN(2) == 0 {
		req.Page = map[string]any{"page": json.Number(fmt.Sprint(r.IntN(4))), "offset": float64(r.IntN(40)), "cursor": "c1", "#page_size": json.Number("3")}
	}
	ent := c.cat.Entities[cp.Entity]
	var hops []embedHop
	if c.rel != "" && ent != nil {
		hops = embedHops(c.cat, ent, c.rel)
	}
	var items []any
	for range r.IntN(5) {
		switch r.IntN(12) {
		case 0:
			items = append(items, nil)
		case 1:
			items = append(items, pick(r, "x", json.Number("7"), true, json.Number("12345678901234567891")))
		default:
			it := genItem(r, c.cat, ent)
			if len(hops) > 0 {
				embedRows(r, c.cat, it, hops)
			}
			items = append(items, it)
		}
	}
	doc := shapeBody(r, m.Response, items, req)
	if p := m.Pagination; p != nil {
		pageFields(r, doc, p)
	}
	if m.Transport == "graphql" && r.IntN(4) == 0 {
		if obj, ok := doc.(map[string]any); ok {
			obj["errors"] = []any{map[string]any{"message": "boom"}}
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return req, body
}

// genItem builds one item of ent with a value of its declared type at
// each field's wire path, sometimes null, missing or of the wrong kind.
func genItem(r *rand.Rand, cat *catalog.Catalog, ent *catalog.Entity) map[string]any {
	obj := map[string]any{}
	if ent == nil {
		return obj
	}
	for _, name := range ent.FieldOrder {
		f := ent.Fields[name]
		if f == nil {
			continue
		}
		typ := ""
		if v := cat.Values[f.ValueRef]; v != nil {
			typ = v.Type
		}
		var v any
		switch k := r.IntN(20); {
		case k == 0:
			continue
		case k == 1:
			v = nil
		case k == 2:
			v = map[string]any{"odd": []any{1, "two"}}
		case f.Derive != nil:
			v = deriveInput(r, f.Derive)
		default:
			v = valueOf(r, typ)
		}
		put(obj, f.WirePath(), v)
	}
	return obj
}

func valueOf(r *rand.Rand, typ string) any {
	switch typ {
	case "integer":
		return pick(r, json.Number(fmt.Sprint(r.IntN(1000))), json.Number("3.0"), json.Number("1e3"), json.Number("9007199254740993"), json.Number("2.5"),
			json.Number("12345678901234567891"), json.Number("-9223372036854775809"), json.Number("9007199254740993.0"), json.Number("1.5e19"), json.Number("1e400"),
			json.Number("1e30"), json.Number("1e4095"), "42", "9007199254740993", "12345678901234567891")
	case "number":
		return pick(r, json.Number("1.25"), json.Number("7"), json.Number("1e400"), json.Number("12345678901234567891"))
	case "boolean":
		return r.IntN(2) == 0
	case "array":
		return []any{"a", json.Number("1"), map[string]any{"k": "v", "big": json.Number("1e4095"), "e": json.Number("1.5e19")}}
	}
	// Numbers in text fields, big ones and exponent forms among them: the
	// text must be the literal on both sides.
	return pick(r, "plain", "é\u2028", "", json.Number("12"), json.Number("12345678901234567891"), json.Number("1e3"), json.Number("1.0"), json.Number("-0"))
}

func pick(r *rand.Rand, vs ...any) any { return vs[r.IntN(len(vs))] }

// deriveInput makes a value a derive rule can read, or nearly can.
func deriveInput(r *rand.Rand, d *catalog.Derive) any {
	switch d.Type {
	case catalog.DeriveSegmentsAfterPrefix:
		return d.Prefix + []string{"a/b/c", "a", "", "//x"}[r.IntN(4)]
	case catalog.DeriveNameValueLookup:
		return []any{map[string]any{d.MatchKey: "other", d.ValueField: "no"}, map[string]any{d.MatchKey: d.Equals, d.ValueField: "yes"}}
	case catalog.DeriveObjectKeyLookup:
		return map[string]any{d.Key: "v", "K": "w"}
	case catalog.DeriveColonPair:
		obj := map[string]any{d.BlocksKey: []any{map[string]any{d.RefField: "x:" + d.Segment + ":b"}}}
		if len(d.PreferKeys) > 0 && r.IntN(2) == 0 {
			obj[d.PreferKeys[0]] = d.Segment + ":a"
		}
		return obj
	}
	return "x"
}

// put sets v at path in obj, creating objects on the way.
func put(obj map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}

// shapeBody wraps items as the mapping's response shape says.
func shapeBody(r *rand.Rand, resp *catalog.Response, items []any, req *abi.DecodeRequest) any {
	if resp == nil {
		if len(items) == 1 && r.IntN(2) == 0 {
			return items[0]
		}
		return items
	}
	if resp.WrapRootScalar && r.IntN(3) == 0 {
		return "scalar"
	}
	if resp.ItemInnerKey != "" {
		for i, it := range items {
			if it != nil {
				items[i] = map[string]any{resp.ItemInnerKey: it}
			}
		}
	}
	var coll any = items
	if resp.Single {
		coll = nil
		if len(items) > 0 {
			coll = items[0]
		}
	}
	if pp := resp.Preprocess; pp != nil {
		switch pp.Kind {
		case catalog.PreArrayFindPluck:
			req.Vars[pp.IDVar] = json.Number("2")
			coll = []any{map[string]any{pp.IDField: "1", pp.NestedArray: []any{}}, map[string]any{pp.IDField: json.Number("2"), pp.NestedArray: items}}
		case catalog.PreConcatFieldArrays:
			coll = []any{map[string]any{pp.FromEach: items}, map[string]any{pp.FromEach: items}}
		case catalog.PreStringIDsToObjects:
			coll = []any{"a", "b", json.Number("3")}
		}
		return wrap(pp.Path, coll)
	}
	return wrap(resp.ItemsPath, coll)
}

func wrap(path []string, v any) any {
	for i := len(path) - 1; i >= 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return v
}

// pageFields adds the response fields a pagination rule reads.
func pageFields(r *rand.Rand, doc any, p *catalog.Pagination) {
	top, ok := doc.(map[string]any)
	if !ok {
		return
	}
	set := func(field string, v any) {
		if r.IntN(6) == 0 {
			return
		}
		put(top, append(slices.Clone(p.ResponsePrefix), field), v)
	}
	for _, pp := range p.Params {
		if pp.FromResponse != "" {
			set(pp.FromResponse, []any{"c1", "c2", "", json.Number("5"), "https://api.example.com/v1/items?page=2", "/v1/items?page=9#f"}[r.IntN(6)])
		}
	}
	if p.NextURLField != "" {
		set(p.NextURLField, []any{"?page=2", "https://api.example.com/v1/items?page=1", ""}[r.IntN(3)])
	}
	if sw := p.StopWhen; sw != nil && sw.Field != "" {
		set(sw.Field, []any{true, false, nil, json.Number("0")}[r.IntN(4)])
	}
}
