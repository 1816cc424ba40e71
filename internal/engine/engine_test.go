package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// shopCatalog has one entity, Item, with a get capability whose path names
// {id} and a list query over a bare JSON array.
func shopCatalog() *catalog.Catalog {
	return &catalog.Catalog{
		EntryID:     "shop",
		Version:     1,
		HTTPBackend: "https://api.example.com/v1/",
		Auth:        catalog.Auth{Scheme: "none"},
		Digest:      "d1",
		Values: map[string]*catalog.Value{
			"id":  {Type: "string"},
			"str": {Type: "string"},
		},
		Entities: map[string]*catalog.Entity{
			"Item": {
				Name: "Item", IDField: "id",
				Fields: map[string]*catalog.Field{
					"id":   {Name: "id", ValueRef: "id"},
					"name": {Name: "name", ValueRef: "str"},
				},
				FieldOrder: []string{"id", "name"},
			},
		},
		Capabilities: map[string]*catalog.Capability{
			"item_get": {Name: "item_get", Kind: catalog.KindGet, Entity: "Item",
				Parameters: []catalog.Parameter{{Name: "id", ValueRef: "id", Required: true}}},
			"item_query": {Name: "item_query", Kind: catalog.KindQuery, Entity: "Item"},
		},
		Mappings: map[string]*catalog.Mapping{
			"item_get": {Method: "GET", Path: []catalog.Segment{{Type: "literal", Value: "items"}, {Type: "var", Name: "id"}},
				Response: &catalog.Response{Single: true}},
			"item_query": {Method: "GET", Path: []catalog.Segment{{Type: "literal", Value: "items"}},
				Response: &catalog.Response{Items: true}},
		},
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustFrame(t testing.TB, header any, payload []byte) []byte {
	t.Helper()
	b, err := abi.AppendFrame(nil, header, payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call runs one op and returns a copy of the output (Handle reuses its buffer).
func call(e *Engine, export string, in []byte) (ok bool, body []byte) {
	out := e.Handle(export, in)
	if len(out) == 0 {
		panic("empty output envelope")
	}
	return out[0] == abi.StatusOK, bytes.Clone(out[1:])
}

func wantOK(t *testing.T, e *Engine, export string, in []byte, v any) {
	t.Helper()
	ok, body := call(e, export, in)
	if !ok {
		t.Fatalf("%s failed: %s", export, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s response %s: %v", export, body, err)
		}
	}
}

func wantErr(t *testing.T, e *Engine, export string, in []byte, code string) *abi.Error {
	t.Helper()
	ok, body := call(e, export, in)
	if ok {
		t.Fatalf("%s succeeded, want %s error: %s", export, code, body)
	}
	var ae abi.Error
	if err := json.Unmarshal(body, &ae); err != nil {
		t.Fatalf("error envelope is not JSON: %q", body)
	}
	if ae.Code != code {
		t.Fatalf("%s error code = %q (%s), want %q", export, ae.Code, ae.Message, code)
	}
	return &ae
}

func loaded(t *testing.T) *Engine {
	t.Helper()
	e := New()
	var resp abi.LoadCatalogResponse
	wantOK(t, e, abi.ExportLoadCatalog, mustJSON(t, abi.LoadCatalogRequest{Catalog: shopCatalog()}), &resp)
	if resp.EntryID != "shop" || resp.Digest != "d1" {
		t.Fatalf("load response = %+v", resp)
	}
	if e.Catalog("shop") == nil {
		t.Fatal("Catalog(shop) = nil after load")
	}
	return e
}

func TestPing(t *testing.T) {
	e := New()
	for _, in := range [][]byte{nil, []byte("hello"), {0, 1, 0xff}, bytes.Repeat([]byte{'x'}, 1<<16)} {
		out := e.Handle(abi.ExportPing, in)
		if out[0] != abi.StatusOK || !bytes.Equal(out[1:], in) {
			t.Fatalf("ping(%d bytes) = %d bytes, status %d", len(in), len(out)-1, out[0])
		}
	}
}

func TestLoadPlanCompileDecode(t *testing.T) {
	e := loaded(t)

	var p plan.Plan
	wantOK(t, e, abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: `Item("a1")`, Entries: []string{"shop"}}, nil), &p)
	if len(p.Nodes) != 1 || p.Nodes[0].Capability != "item_get" || p.Nodes[0].Args["id"] != "a1" {
		t.Fatalf("get plan = %+v", p)
	}

	var cr abi.CompiledRequest
	wantOK(t, e, abi.ExportCompile, mustJSON(t, abi.CompileRequest{EntryID: "shop", Capability: "item_get", Vars: map[string]any{"id": "a1"}}), &cr)
	if cr.Method != "GET" || cr.URL != "https://api.example.com/v1/items/a1" {
		t.Fatalf("compiled = %+v", cr)
	}

	var one abi.DecodeResponse
	wantOK(t, e, abi.ExportDecode, mustFrame(t, abi.DecodeRequest{EntryID: "shop", Capability: "item_get", Status: 200},
		[]byte(`{"id":"a1","name":"Lamp","extra":true}`)), &one)
	if len(one.Table.Rows) != 1 || one.Table.Rows[0][one.Table.Col("name")] != "Lamp" {
		t.Fatalf("decoded get = %+v", one)
	}

	var list abi.DecodeResponse
	wantOK(t, e, abi.ExportDecode, mustFrame(t, abi.DecodeRequest{EntryID: "shop", Capability: "item_query", Status: 200},
		[]byte(`[{"id":"a1","name":"Lamp"},{"id":"a2","name":"Desk"}]`)), &list)
	if len(list.Table.Rows) != 2 || list.Table.Col("id") < 0 {
		t.Fatalf("decoded list = %+v", list)
	}

	wantOK(t, e, abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: `Item.limit(2)[name]`, Entries: []string{"shop"}}, nil), &p)
	if p.Nodes[0].Capability != "item_query" {
		t.Fatalf("query plan = %+v", p)
	}
}

func TestBadRequests(t *testing.T) {
	e := loaded(t)
	tests := []struct {
		name, export string
		in           []byte
		code         string
	}{
		{"unknown export", "plasm_nope", []byte("{}"), abi.CodeBadRequest},
		{"empty export", "", nil, abi.CodeBadRequest},
		{"hook export not served", abi.HookExport(abi.HookInvoke), nil, abi.CodeBadRequest},
		{"load malformed JSON", abi.ExportLoadCatalog, []byte("{"), abi.CodeBadRequest},
		{"load no catalog", abi.ExportLoadCatalog, []byte("{}"), abi.CodeBadRequest},
		{"load no entry id", abi.ExportLoadCatalog, []byte(`{"catalog":{"version":1}}`), abi.CodeBadRequest},
		{"compile malformed JSON", abi.ExportCompile, []byte("not json"), abi.CodeBadRequest},
		{"plan short frame", abi.ExportPlan, []byte{1, 0}, abi.CodeBadRequest},
		{"plan frame overruns", abi.ExportPlan, []byte{0xff, 0xff, 0xff, 0xff, '{', '}'}, abi.CodeBadRequest},
		{"plan header not JSON", abi.ExportPlan, append([]byte{3, 0, 0, 0}, "abc"...), abi.CodeBadRequest},
		{"plan bad symbol map", abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: "Item", Entries: []string{"shop"}, SymbolsDigest: "x"}, []byte("{")), abi.CodeBadRequest},
		{"decode short frame", abi.ExportDecode, nil, abi.CodeBadRequest},
		{"decode header not JSON", abi.ExportDecode, append([]byte{1, 0, 0, 0}, "]"...), abi.CodeBadRequest},
		{"compile unloaded catalog", abi.ExportCompile, mustJSON(t, abi.CompileRequest{EntryID: "other", Capability: "item_get"}), abi.CodeCatalog},
		{"decode unloaded catalog", abi.ExportDecode, mustFrame(t, abi.DecodeRequest{EntryID: "other", Capability: "item_get", Status: 200}, []byte("{}")), abi.CodeCatalog},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae := wantErr(t, e, tc.export, tc.in, tc.code)
			if ae.Message == "" {
				t.Fatal("error without a message")
			}
		})
	}
	// The failed loads must not have replaced or removed the good catalog.
	wantOK(t, e, abi.ExportCompile, mustJSON(t, abi.CompileRequest{EntryID: "shop", Capability: "item_query"}), nil)
}

func TestCompileBeforeLoad(t *testing.T) {
	e := New()
	ae := wantErr(t, e, abi.ExportCompile, mustJSON(t, abi.CompileRequest{EntryID: "shop", Capability: "item_get"}), abi.CodeCatalog)
	if !strings.Contains(ae.Message, `"shop"`) {
		t.Fatalf("message does not name the catalog: %q", ae.Message)
	}
}

func itemMap(name string) *symbol.Map {
	m := &symbol.Map{}
	m.Add(symbol.Wave{Entities: []symbol.Entity{{EntryID: "shop", Name: name}}})
	return m
}

func planWith(t *testing.T, e *Engine, digest string, payload []byte, program string) (bool, []byte) {
	t.Helper()
	return call(e, abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: program, SymbolsDigest: digest, Entries: []string{"shop"}}, payload))
}

func TestPlanSymbolMapCache(t *testing.T) {
	e := loaded(t)
	good := mustJSON(t, itemMap("Item"))
	bad := mustJSON(t, itemMap("Nope")) // e1 would name an entity that does not exist

	if ok, body := planWith(t, e, "d-good", good, `e1("a1")`); !ok {
		t.Fatalf("plan with symbols: %s", body)
	}
	// Same digest, different payload: the cached map wins, proving the
	// payload was not decoded again.
	if ok, body := planWith(t, e, "d-good", bad, `e1("a1")`); !ok {
		t.Fatalf("cached map not used: %s", body)
	}
	// Same digest with a payload that is not even JSON: still the cache.
	if ok, body := planWith(t, e, "d-good", []byte("{garbage"), `e1("a1")`); !ok {
		t.Fatalf("cached map not used for garbage payload: %s", body)
	}
	// A new digest decodes its own payload.
	if ok, body := planWith(t, e, "d-bad", bad, `e1("a1")`); ok {
		t.Fatalf("new digest reused the old map: %s", body)
	}
	// No digest: decoded every time, never cached.
	if ok, body := planWith(t, e, "", good, `e1("a1")`); !ok {
		t.Fatalf("undigested map: %s", body)
	}
	if _, cached := e.symbols[""]; cached {
		t.Fatal("map without a digest was cached")
	}
	// A digest without a payload names a held map: resolved from the cache
	// (the host sends only digests once an instance holds the map).
	if ok, body := planWith(t, e, "d-good", nil, `e1("a1")`); !ok {
		t.Fatalf("digest-only request did not use the held map: %s", body)
	}
	// An unknown digest without a payload asks the host for the map.
	ok, body := planWith(t, e, "d-unknown", nil, `e1("a1")`)
	if ok {
		t.Fatalf("unknown digest without a map planned: %s", body)
	}
	var ae abi.Error
	if err := json.Unmarshal(body, &ae); err != nil || ae.Code != abi.CodeSymbolsUnknown {
		t.Fatalf("unknown digest error = %s", body)
	}
	// No digest and no payload means no symbols.
	if ok, body := planWith(t, e, "", nil, `e1("a1")`); ok {
		t.Fatalf("no symbols still resolved e1: %s", body)
	} else if err := json.Unmarshal(body, &ae); err != nil || ae.Code != abi.CodeUnknownEntity {
		t.Fatalf("no-symbols error = %s", body)
	}
	// Wire names work with no symbols at all.
	if ok, body := planWith(t, e, "", nil, `Item("a1")`); !ok {
		t.Fatalf("wire names without symbols: %s", body)
	}
	// A payload that failed to decode is not cached under its digest.
	if ok, _ := planWith(t, e, "d-broken", []byte("{"), `Item`); ok {
		t.Fatal("broken map accepted")
	}
	if _, cached := e.symbols["d-broken"]; cached {
		t.Fatal("undecodable map was cached")
	}
}

func TestSymbolMapCacheBounded(t *testing.T) {
	e := loaded(t)
	payload := mustJSON(t, itemMap("Item"))
	for i := range 5 * maxSymbolMaps {
		if ok, body := planWith(t, e, fmt.Sprintf("d%03d", i), payload, `e1("a1")`); !ok {
			t.Fatalf("plan %d: %s", i, body)
		}
		if len(e.symbols) > maxSymbolMaps {
			t.Fatalf("cache holds %d maps, bound is %d", len(e.symbols), maxSymbolMaps)
		}
	}
	// The most recent digest is always cached.
	last := fmt.Sprintf("d%03d", 5*maxSymbolMaps-1)
	if _, ok := e.symbols[last]; !ok {
		t.Fatalf("latest digest %s not cached", last)
	}
}

// Output buffers are reused: a caller that keeps one past the next call sees
// it change, which is why the host copies out. The second result must be
// complete regardless of the first's size.
func TestOutputBufferReuse(t *testing.T) {
	e := New()
	long := e.Handle(abi.ExportPing, bytes.Repeat([]byte("y"), 1000))
	if len(long) != 1001 {
		t.Fatalf("len = %d", len(long))
	}
	short := e.Handle(abi.ExportPing, []byte("z"))
	if string(short) != "\x00z" {
		t.Fatalf("short = %q", short)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	e := New()
	// A catalog with nil maps loads (only entry_id is validated) and must not
	// take the engine down when later ops touch it.
	wantOK(t, e, abi.ExportLoadCatalog, []byte(`{"catalog":{"entry_id":"empty"}}`), nil)
	for _, in := range []struct {
		export string
		in     []byte
	}{
		{abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: "X", Entries: []string{"empty"}}, nil)},
		{abi.ExportCompile, mustJSON(t, abi.CompileRequest{EntryID: "empty", Capability: "c"})},
		{abi.ExportDecode, mustFrame(t, abi.DecodeRequest{EntryID: "empty", Capability: "c", Status: 200}, []byte("{}"))},
	} {
		out := e.Handle(in.export, in.in)
		if out[0] != abi.StatusError {
			t.Errorf("%s on an empty catalog succeeded: %s", in.export, out[1:])
		}
	}
}

func FuzzHandle(f *testing.F) {
	cat := mustJSON(f, abi.LoadCatalogRequest{Catalog: shopCatalog()})
	syms := mustJSON(f, itemMap("Item"))
	exports := []string{abi.ExportPing, abi.ExportLoadCatalog, abi.ExportPlan, abi.ExportCompile, abi.ExportDecode}
	f.Add(uint8(0), []byte("hi"))
	f.Add(uint8(1), cat)
	f.Add(uint8(2), mustFrame(f, abi.PlanRequest{Program: `e1("a1")[name]`, SymbolsDigest: "s", Entries: []string{"shop"}}, syms))
	f.Add(uint8(2), mustFrame(f, abi.PlanRequest{Program: "Item.limit(3)", Entries: []string{"shop"}}, nil))
	f.Add(uint8(3), mustJSON(f, abi.CompileRequest{EntryID: "shop", Capability: "item_get", Vars: map[string]any{"id": 1}}))
	f.Add(uint8(4), mustFrame(f, abi.DecodeRequest{EntryID: "shop", Capability: "item_query", Status: 200}, []byte(`[{"id":1}]`)))
	f.Add(uint8(4), []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(uint8(9), []byte(nil))
	f.Fuzz(func(t *testing.T, op uint8, in []byte) {
		e := New()
		if out := e.Handle(abi.ExportLoadCatalog, cat); out[0] != abi.StatusOK {
			t.Fatalf("load: %s", out[1:])
		}
		export := "plasm_fuzz_unknown"
		if int(op) < len(exports) {
			export = exports[op]
		}
		out := e.Handle(export, in)
		if len(out) == 0 || (out[0] != abi.StatusOK && out[0] != abi.StatusError) {
			t.Fatalf("bad status byte in %q", out)
		}
		if out[0] == abi.StatusError {
			var ae abi.Error
			if err := json.Unmarshal(out[1:], &ae); err != nil || ae.Code == "" {
				t.Fatalf("error envelope %q: %v", out[1:], err)
			}
		}
	})
}

// An integer id above 2^53 must reach the URL exactly: rounded through
// float64 it would name another row (and a delete would hit it).
func TestCompileKeepsLargeIntegers(t *testing.T) {
	e := loaded(t)
	in := []byte(`{"entry_id":"shop","capability":"item_get","vars":{"id":1152921504606846977}}`)
	var cr abi.CompiledRequest
	wantOK(t, e, abi.ExportCompile, in, &cr)
	if !strings.HasSuffix(cr.URL, "/items/1152921504606846977") {
		t.Fatalf("URL %s", cr.URL)
	}
}
