package cml

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestAbsolutePath covers absolute URLs in a mapping path: a literal
// (hackernews's Algolia search) declares its origin and replaces
// http_backend; a variable holding a URL (pokeapi's URL ids) replaces it
// too, but only on a declared origin.
func TestAbsolutePath(t *testing.T) {
	algolia := lit("https://hn.algolia.com/api/v1/search")
	cases := []struct {
		name    string
		kind    string
		method  string
		path    []catalog.Segment
		query   *catalog.Expr
		backend *string
		vars    map[string]any
		url     string
		err     string // substring of the compile error
	}{
		{name: "literal replaces backend", path: []catalog.Segment{algolia}, query: ob("query", vr("q")),
			vars: map[string]any{"q": "rust"}, url: "https://hn.algolia.com/api/v1/search?query=rust"},
		{name: "literal mid path drops what came before (Plasm)", path: []catalog.Segment{lit("v0"), algolia, lit("extra")},
			url: "https://hn.algolia.com/api/v1/search/extra"},
		{name: "literal query leads the mapping's", path: []catalog.Segment{lit("https://search.example.org/s/?tags=story#frag")},
			query: ob("q", vr("q")), vars: map[string]any{"q": "go"}, url: "https://search.example.org/s?tags=story&q=go"},
		{name: "literal needs no http_backend", path: []catalog.Segment{algolia}, backend: new(string),
			url: "https://hn.algolia.com/api/v1/search"},
		{name: "literal with user info", path: []catalog.Segment{lit("https://user:pw@hn.algolia.com/x")},
			err: "not a plain absolute http(s) URL"},
		{name: "url id on the backend origin", kind: catalog.KindGet,
			path: []catalog.Segment{lit("evolution-chain"), pvar("id"), lit("")},
			vars: map[string]any{"id": "https://api.example.com/v1/evolution-chain/5/"},
			url:  "https://api.example.com/v1/evolution-chain/5/"},
		{name: "url id outside the mapping's path", kind: catalog.KindGet,
			path: []catalog.Segment{lit("evolution-chain"), pvar("id"), lit("")},
			vars: map[string]any{"id": "https://api.example.com/v1/admin/users/alice"},
			err:  "which is not under https://api.example.com/v1/evolution-chain/"},
		{name: "url id outside http_backend's path", kind: catalog.KindGet,
			path: []catalog.Segment{pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/admin"},
			err:  "which is not under https://api.example.com/v1/"},
		{name: "url id climbing out with dot segments", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/../../admin"},
			err:  "not under"},
		{name: "url id climbing out with escaped dot segments", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/%2e%2E/%2e%2e/admin"},
			err:  "not under"},
		{name: "url id with an escaped slash", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/a%2F..%2F..%2Fadmin"},
			err:  "not under"},
		{name: "url id with a dot-dot parameter", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/..;/admin"},
			err:  "not under"},
		{name: "url id with a backslash", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/..%5Cadmin"},
			err:  "not under"},
		{name: "url id encoded twice", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/%252e%252e/admin"},
			err:  "not under"},
		{name: "a write's url value stays one segment", kind: catalog.KindDelete, method: "DELETE",
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://api.example.com/v1/items/5"},
			url:  "https://api.example.com/v1/items/https:%2F%2Fapi.example.com%2Fv1%2Fitems%2F5"},
		{name: "url id keeps following segments", kind: catalog.KindGet,
			path: []catalog.Segment{lit("pokemon"), pvar("id"), lit("encounters")},
			vars: map[string]any{"id": "https://api.example.com/v1/pokemon/1/"},
			url:  "https://api.example.com/v1/pokemon/1/encounters"},
		{name: "url id on an origin a literal declares, off the mapping's path", kind: catalog.KindGet,
			path: []catalog.Segment{pvar("id")},
			vars: map[string]any{"id": "https://HN.algolia.com:443/api/v1/items/8"},
			err:  "which is not under https://api.example.com/v1/"},
		{name: "url id under a literal URL", kind: catalog.KindGet,
			path: []catalog.Segment{lit("https://hn.algolia.com/api/v1"), pvar("id")},
			vars: map[string]any{"id": "https://HN.algolia.com:443/api/v1/items/8"},
			url:  "https://HN.algolia.com:443/api/v1/items/8"},
		{name: "url id on an undeclared origin", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "https://evil.example.net/steal"},
			err:  `path variable "id" is a URL on https://evil.example.net:443, an origin catalog "demo" does not declare`},
		{name: "url id on another port", kind: catalog.KindGet,
			path: []catalog.Segment{pvar("id")},
			vars: map[string]any{"id": "https://api.example.com:8443/v1/items/1"},
			err:  "does not declare"},
		{name: "url id on another scheme", kind: catalog.KindGet,
			path: []catalog.Segment{pvar("id")},
			vars: map[string]any{"id": "http://api.example.com/v1/items/1"},
			err:  "does not declare"},
		{name: "url id with user info", kind: catalog.KindGet,
			path: []catalog.Segment{pvar("id")},
			vars: map[string]any{"id": "https://evil.example.net@api.example.com/v1/items/1"},
			err:  "not a plain absolute http(s) URL"},
		{name: "url id without a host", kind: catalog.KindGet,
			path: []catalog.Segment{pvar("id")},
			vars: map[string]any{"id": "https:///v1/items/1"},
			err:  "not a plain absolute http(s) URL"},
		{name: "a URL further in is an ordinary segment", kind: catalog.KindGet,
			path: []catalog.Segment{lit("items"), pvar("id")},
			vars: map[string]any{"id": "see https://evil.example.net"},
			url:  "https://api.example.com/v1/items/see%20https:%2F%2Fevil.example.net"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind := tc.kind
			if kind == "" {
				kind = catalog.KindQuery
			}
			m := &catalog.Mapping{Path: tc.path, Query: tc.query, Method: tc.method}
			cat := testCatalog(kind, m, catalog.Auth{})
			// A second mapping declares hn.algolia.com for every case.
			cat.Capabilities["search"] = &catalog.Capability{Name: "search", Kind: catalog.KindSearch, Entity: "Item"}
			cat.Mappings["search"] = &catalog.Mapping{Path: []catalog.Segment{algolia}}
			if tc.backend != nil {
				cat.HTTPBackend = *tc.backend
			}
			got, aerr := Compile(cat, &abi.CompileRequest{EntryID: "demo", Capability: "cap", Vars: tc.vars})
			if tc.err != "" {
				if aerr == nil {
					t.Fatalf("compiled %s, want an error containing %q", got.URL, tc.err)
				}
				if aerr.Code != abi.CodeCompile || !strings.Contains(aerr.Message, tc.err) || aerr.Hint == "" {
					t.Fatalf("error = %s %q (hint %q), want compile containing %q with a hint", aerr.Code, aerr.Message, aerr.Hint, tc.err)
				}
				if tpl, _ := Template(cat, "cap"); tpl != nil {
					if req, ok := tpl.Fill(tc.vars, nil); ok {
						t.Fatalf("template filled %s for a call the compiler refuses", req.URL)
					}
				}
				return
			}
			if aerr != nil {
				t.Fatalf("compile: %v", aerr)
			}
			if got.URL != tc.url {
				t.Fatalf("URL = %s, want %s", got.URL, tc.url)
			}
			// The host's template filler must never produce another URL:
			// it declines literal URLs at template time and URL values at
			// fill time, so the guest compiles both.
			if tpl, _ := Template(cat, "cap"); tpl != nil {
				if req, ok := tpl.Fill(tc.vars, nil); ok && req.URL != tc.url {
					t.Fatalf("template filled %s, the compiler %s", req.URL, tc.url)
				}
			}
		})
	}
}

// TestAbsoluteNextPage: a list whose first page goes to a literal URL
// pages on that URL's origin, not http_backend's.
func TestAbsoluteNextPage(t *testing.T) {
	m := &catalog.Mapping{Path: []catalog.Segment{lit("https://hn.algolia.com/api/v1/search")}, Pagination: linkPaging(LocLinkHeader)}
	cat := testCatalog(catalog.KindQuery, m, catalog.Auth{})
	next := "https://hn.algolia.com/api/v1/search?page=2"
	got, aerr := Compile(cat, &abi.CompileRequest{EntryID: "demo", Capability: "cap", Page: map[string]any{"next_url": next}})
	if aerr != nil || got.URL != next {
		t.Fatalf("got %+v, %v; want %s", got, aerr, next)
	}
	_, aerr = Compile(cat, &abi.CompileRequest{EntryID: "demo", Capability: "cap", Page: map[string]any{"next_url": "https://api.example.com/v1/items?page=2"}})
	if aerr == nil || !strings.Contains(aerr.Message, "leaves the catalog origin") {
		t.Fatalf("a next URL on http_backend's origin from an Algolia list: %v, want refused", aerr)
	}
}

func TestDeclaredOrigins(t *testing.T) {
	cat := testCatalog(catalog.KindQuery, &catalog.Mapping{Path: []catalog.Segment{lit("https://Search.Example.org:443/x")}}, catalog.Auth{TokenURL: "https://auth.example.com/token"})
	got := strings.Join(cat.DeclaredOrigins(), " ")
	want := "https://api.example.com:443 https://auth.example.com:443 https://search.example.org:443"
	if got != want {
		t.Fatalf("DeclaredOrigins = %s, want %s", got, want)
	}
}

// BenchmarkCompileURLID: a get whose id is a URL (pokeapi) beside the same
// get with a plain id, the baseline; the URL costs a parse and the check
// of its origin against the catalog's declared origins.
func BenchmarkCompileURLID(b *testing.B) {
	m := &catalog.Mapping{Path: []catalog.Segment{lit("evolution-chain"), pvar("id"), lit("")}}
	cat := testCatalog(catalog.KindGet, m, catalog.Auth{})
	for _, bc := range []struct{ name, id string }{
		{"plain id", "5"},
		{"URL id", "https://api.example.com/v1/evolution-chain/5/"},
	} {
		req := &abi.CompileRequest{Capability: "cap", Vars: map[string]any{"id": bc.id}}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, aerr := Compile(cat, req); aerr != nil {
					b.Fatal(aerr)
				}
			}
		})
	}
}

// TestCredentialsStayHome: a catalog's credentials go only to its
// http_backend's origin. A third-party origin it declares with an
// absolute URL in a path is called without them, by the compiler and by
// the host's template filler alike.
func TestCredentialsStayHome(t *testing.T) {
	auth := catalog.Auth{Scheme: "api_key_query", Param: "key", Env: "DEMO_KEY"}
	cases := []struct {
		name     string
		path     []catalog.Segment
		withAuth bool
	}{
		{"home origin", []catalog.Segment{lit("items")}, true},
		{"home origin written in full", []catalog.Segment{lit("https://API.example.com:443/v1/items")}, true},
		{"third-party origin", []catalog.Segment{lit("https://search.thirdparty.example/q")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat := testCatalog(catalog.KindQuery, &catalog.Mapping{Path: tc.path}, auth)
			got, aerr := Compile(cat, &abi.CompileRequest{EntryID: "demo", Capability: "cap"})
			if aerr != nil {
				t.Fatalf("compile: %v", aerr)
			}
			if (got.Auth != nil) != tc.withAuth {
				t.Fatalf("%s: auth = %+v, want credentials %v", got.URL, got.Auth, tc.withAuth)
			}
			if tpl, _ := Template(cat, "cap"); tpl != nil {
				if req, ok := tpl.Fill(nil, nil); ok && (req.Auth != nil) != tc.withAuth {
					t.Fatalf("template %s: auth = %+v, want credentials %v", req.URL, req.Auth, tc.withAuth)
				}
			}
		})
	}
}
