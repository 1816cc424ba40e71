package cml

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/request"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

type compileCase struct {
	name string
	kind string // default query
	m    *catalog.Mapping
	auth catalog.Auth
	base string // overrides http_backend
	vars map[string]any
	page map[string]any

	method   string
	url      string
	body     string
	headers  [][2]string
	wantAuth *abi.AuthDirective
	wantPage map[string]any
	errCode  string
	errText  string
	hint     bool // the error must carry a hint
}

var gqlQuery = "query($team:String,$after:String){issues(filter:$team,after:$after){nodes{id} pageInfo{endCursor hasNextPage}}}"

func gqlMapping() *catalog.Mapping {
	return &catalog.Mapping{
		Transport: TransportGraphQL,
		Path:      []catalog.Segment{lit("graphql")},
		Body:      ob("query", cn(gqlQuery), "variables", ob("team", vr("team"))),
		Response:  &catalog.Response{ItemsPath: []string{"data", "issues", "nodes"}},
		Pagination: &catalog.Pagination{
			Params:         map[string]catalog.PageParam{"after": {FromResponse: "endCursor"}},
			ResponsePrefix: []string{"data", "issues", "pageInfo"},
			StopWhen:       &catalog.StopWhen{Field: "hasNextPage", Eq: false, HasEq: true},
		},
	}
}

func offsetPaging(loc string) *catalog.Pagination {
	return &catalog.Pagination{
		Params: map[string]catalog.PageParam{
			"offset": {Counter: i64(0), Step: 20},
			"limit":  {Fixed: float64(20)},
		},
		ParamOrder: []string{"offset", "limit"},
		Location:   loc,
	}
}

func linkPaging(loc string) *catalog.Pagination {
	p := &catalog.Pagination{
		Params:   map[string]catalog.PageParam{"per_page": {Fixed: float64(50)}},
		Location: loc,
	}
	if loc == LocResponseNextURL {
		p.Params["next"] = catalog.PageParam{FromResponse: "next"}
	}
	return p
}

var compileCases = []compileCase{
	{
		name: "path_trailing_slash",
		kind: catalog.KindGet,
		m:    &catalog.Mapping{Path: []catalog.Segment{lit("pokemon"), pvar("id"), lit("")}},
		vars: map[string]any{"id": float64(25)},
		url:  "https://api.example.com/v1/pokemon/25/", method: "GET",
	},
	{
		name: "path_escaping",
		kind: catalog.KindGet,
		m:    &catalog.Mapping{Path: []catalog.Segment{lit("repos"), pvar("owner"), pvar("id")}},
		vars: map[string]any{"owner": "ann é", "id": "a/b?c#d"},
		url:  "https://api.example.com/v1/repos/ann%20%C3%A9/a%2Fb%3Fc%23d",
	},
	{
		// A big id decoded exactly is written with its own digits, never
		// through a float64 (which would name 12345678901234567168).
		name: "path_big_integer",
		kind: catalog.KindGet,
		m:    &catalog.Mapping{Path: []catalog.Segment{lit("repos"), pvar("owner"), pvar("id")}},
		vars: map[string]any{"owner": uint64(18446744073709551615), "id": json.Number("12345678901234567891")},
		url:  "https://api.example.com/v1/repos/18446744073709551615/12345678901234567891",
	},
	{
		name:    "path_missing_var",
		kind:    catalog.KindUpdate,
		m:       &catalog.Mapping{Method: "PATCH", Path: []catalog.Segment{lit("repos"), pvar("owner"), pvar("id")}},
		vars:    map[string]any{"id": "1"},
		errCode: abi.CodeCompile, errText: `path variable "owner" has no value`, hint: true,
	},
	{
		name:    "path_object_var",
		kind:    catalog.KindGet,
		m:       &catalog.Mapping{Path: []catalog.Segment{lit("x"), pvar("id")}},
		vars:    map[string]any{"id": map[string]any{"a": 1.0}},
		errCode: abi.CodeCompile, errText: `path variable "id" is an object`,
	},
	{
		name: "no_path_segments",
		m:    &catalog.Mapping{},
		url:  "https://api.example.com/v1",
	},
	{
		name: "backend_with_query",
		base: "https://api.example.com/v2?api-version=7",
		m:    &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Query: ob("q", vr("q"))},
		vars: map[string]any{"q": "z"},
		url:  "https://api.example.com/v2/items?api-version=7&q=z",
	},
	{
		name: "query_arrays_and_scalars",
		m: &catalog.Mapping{Path: []catalog.Segment{lit("items")},
			Query: ob("labels", vr("labels"), "q", vr("q"), "n", vr("n"), "f", vr("f"), "big", vr("big"), "b", vr("b"), "none", vr("none"))},
		vars: map[string]any{"labels": []any{"bug", nil, "ui x"}, "q": "a&b=c", "n": float64(3), "f": 2.5, "big": float64(1e21), "b": true},
		url:  "https://api.example.com/v1/items?b=true&big=1000000000000000000000&f=2.5&labels=bug&labels=ui+x&n=3&q=a%26b%3Dc",
	},
	{
		name:    "query_nested_object",
		m:       &catalog.Mapping{Query: ob("filter", vr("filter"))},
		vars:    map[string]any{"filter": map[string]any{"a": "b"}},
		errCode: abi.CodeCompile, errText: `query key "filter" holds an object`,
	},
	{
		name:    "query_not_object",
		m:       &catalog.Mapping{Query: cn("x")},
		errCode: abi.CodeCompile, errText: "query must evaluate to an object",
	},
	{
		name: "if_exists_equals_bool",
		m: &catalog.Mapping{Query: ob(
			"state", ifx(&catalog.Cond{Exists: "state"}, vr("state"), cn("open")),
			"nullstate", ifx(&catalog.Cond{Exists: "nullvar"}, cn("yes"), cn("no")),
			"eq", ifx(&catalog.Cond{Equals: &catalog.EqualsCond{Left: vr("n"), Right: cn(json.Number("1.0"))}}, cn("num-equal"), cn("different")),
			"deep", ifx(&catalog.Cond{Equals: &catalog.EqualsCond{Left: vr("obj"), Right: cn(map[string]any{"k": []any{1.0, "x"}})}}, cn("deep-equal"), cn("different")),
			"truthy", ifx(&catalog.Cond{Bool: vr("flag")}, cn("t"), cn("f")),
			"falsy", ifx(&catalog.Cond{Bool: vr("zero")}, cn("t"), cn("f")),
			"noelse", ifx(&catalog.Cond{Bool: vr("zero")}, cn("t"), nil),
		)},
		vars: map[string]any{"n": int64(1), "nullvar": nil, "obj": map[string]any{"k": []any{int64(1), "x"}}, "flag": "yes", "zero": 0.0},
		url:  "https://api.example.com/v1?deep=deep-equal&eq=num-equal&falsy=f&nullstate=no&state=open&truthy=t",
	},
	{
		name:    "if_without_condition",
		m:       &catalog.Mapping{Query: ob("x", ifx(nil, cn(1.0), nil))},
		errCode: abi.CodeCompile, errText: "no condition",
	},
	{
		name: "json_body_null_keys_omitted",
		kind: catalog.KindCreate,
		m: &catalog.Mapping{Method: "post", Path: []catalog.Segment{lit("items")},
			Body: ob("title", vr("title"), "missing", vr("missing"), "nil", cn(nil), "nested", ob("a", vr("missing")), "list", ar(vr("title"), vr("missing")), "score", vr("score"))},
		vars:    map[string]any{"title": "Hi \"you\"\n<ok>", "score": 1.5},
		method:  "POST",
		url:     "https://api.example.com/v1/items",
		body:    `{"title":"Hi \"you\"\n<ok>","nested":{},"list":["Hi \"you\"\n<ok>",null],"score":1.5}`,
		headers: [][2]string{{"Content-Type", "application/json"}},
	},
	{
		name: "json_body_from_var_map_sorted",
		kind: catalog.KindCreate,
		m:    &catalog.Mapping{Method: "POST", Body: vr("payload")},
		vars: map[string]any{"payload": map[string]any{"z": 1.0, "a": []any{true, nil}, "m": map[string]any{"y": "2", "b": 3.0}}},
		body: `{"a":[true,null],"m":{"b":3,"y":"2"},"z":1}`,
	},
	{
		name: "join_and_format",
		m: &catalog.Mapping{Query: ob(
			"labels", join(",", vr("labels")),
			"single", join(",", vr("one")),
			"q", format("repo:{owner}/{repo} {{literal}} {q}", map[string]*catalog.Expr{"repo": vr("name")}),
			"gone", format("x:{missing}", nil),
		)},
		vars: map[string]any{"labels": []any{"a", 2.0, nil, true}, "one": 7.0, "owner": "ann", "name": "tools", "q": "bug"},
		url:  "https://api.example.com/v1?labels=a%2C2%2Ctrue&q=repo%3Aann%2Ftools+%7Bliteral%7D+bug&single=7",
	},
	{
		name:    "format_unterminated",
		m:       &catalog.Mapping{Query: ob("q", format("x{y", nil))},
		errCode: abi.CodeCompile, errText: "unterminated placeholder",
	},
	{
		name:    "join_of_objects",
		m:       &catalog.Mapping{Query: ob("q", join(",", vr("l")))},
		vars:    map[string]any{"l": []any{map[string]any{}}},
		errCode: abi.CodeCompile, errText: "join item 0 is an object",
	},
	{
		name: "form_body",
		kind: catalog.KindUpdate,
		m: &catalog.Mapping{Method: "PATCH", Path: []catalog.Segment{lit("items"), pvar("id")},
			Body: ob("title", vr("title"), "tags", vr("tags"), "n", vr("n")), BodyFormat: FormatFormURLEncoded},
		vars:    map[string]any{"id": "7", "title": "hello world", "tags": []any{"x", "y&z"}, "n": 10.0},
		method:  "PATCH",
		url:     "https://api.example.com/v1/items/7",
		body:    "n=10&tags=x&tags=y%26z&title=hello+world",
		headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}},
	},
	{
		name:    "form_body_nested",
		kind:    catalog.KindCreate,
		m:       &catalog.Mapping{Method: "POST", Body: ob("x", ob("y", cn("z"))), BodyFormat: FormatFormURLEncoded},
		errCode: abi.CodeCompile, errText: `form body key "x" holds an object`,
	},
	{
		name: "multipart_body",
		kind: catalog.KindCreate,
		m: &catalog.Mapping{Method: "POST", Path: []catalog.Segment{lit("upload")},
			Body: ob("name", vr("name"), "count", vr("count"), "ok", cn(true), "q\"k", cn("v")), BodyFormat: FormatMultipart},
		vars: map[string]any{"name": "file.txt", "count": 2.0},
	},
	{
		name:    "multipart_nested",
		kind:    catalog.KindCreate,
		m:       &catalog.Mapping{Method: "POST", Body: ob("x", cn(map[string]any{"y": 1.0})), BodyFormat: FormatMultipart},
		errCode: abi.CodeCompile, errText: `multipart body key "x" holds an object`,
	},
	{
		name:    "unknown_body_format",
		kind:    catalog.KindCreate,
		m:       &catalog.Mapping{Method: "POST", Body: ob("x", cn("y")), BodyFormat: "xml"},
		errCode: abi.CodeCompile, errText: `unknown body_format "xml"`,
	},
	{
		name: "headers_sorted_after_content_type",
		kind: catalog.KindCreate,
		m: &catalog.Mapping{Method: "POST", Body: ob("a", cn(1.0)),
			Headers: ob("X-Zed", cn("z"), "Accept", cn("application/vnd.demo+json"), "X-Num", vr("n"), "X-None", vr("none"))},
		vars:    map[string]any{"n": 42.0},
		headers: [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/vnd.demo+json"}, {"X-Num", "42"}, {"X-Zed", "z"}},
	},
	{
		name:    "header_override_content_type",
		kind:    catalog.KindCreate,
		m:       &catalog.Mapping{Method: "POST", Body: ob("a", cn(1.0)), Headers: ob("content-type", cn("application/merge-patch+json"))},
		headers: [][2]string{{"content-type", "application/merge-patch+json"}},
	},
	{
		name:    "header_injection",
		m:       &catalog.Mapping{Headers: ob("X-A", vr("v"))},
		vars:    map[string]any{"v": "a\r\nEvil: 1"},
		errCode: abi.CodeCompile, errText: "line break",
	},
	{
		name:   "graphql_first_page",
		m:      gqlMapping(),
		vars:   map[string]any{"team": "ENG"},
		method: "POST",
		url:    "https://api.example.com/v1/graphql",
		body:   `{"query":"` + gqlQuery + `","variables":{"team":"ENG"}}`,
		headers: [][2]string{
			{"Content-Type", "application/json"},
		},
		wantPage: map[string]any{},
	},
	{
		name:     "graphql_continuation",
		m:        gqlMapping(),
		vars:     map[string]any{"team": "ENG"},
		page:     map[string]any{"after": "Y3Vyc29yOjU="},
		method:   "POST",
		body:     `{"query":"` + gqlQuery + `","variables":{"team":"ENG","after":"Y3Vyc29yOjU="}}`,
		wantPage: map[string]any{"after": "Y3Vyc29yOjU="},
	},
	{
		name:    "graphql_without_query",
		m:       &catalog.Mapping{Transport: TransportGraphQL, Body: ob("variables", ob())},
		errCode: abi.CodeCompile, errText: "graphql body has no query",
	},
	{
		name:     "offset_first_page",
		m:        &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Query: ob("q", vr("q"), "limit", cn(5.0)), Pagination: offsetPaging("")},
		vars:     map[string]any{"q": "x"},
		url:      "https://api.example.com/v1/items?limit=20&offset=0&q=x",
		wantPage: map[string]any{"offset": int64(0), "limit": float64(20)},
	},
	{
		// A state past a counter's max holds no counter: compiled, it
		// would fetch the first page again, so it is refused.
		name:    "page_state_past_max_refused",
		m:       &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: offsetPaging(LocQuery)},
		page:    map[string]any{PastMaxKey: "offset 100"},
		errCode: abi.CodeCompile, errText: "past the max of page counter offset 100", hint: true,
	},
	{
		name:     "offset_continuation_reapplies_fixed",
		m:        &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: offsetPaging(LocQuery)},
		page:     map[string]any{"offset": float64(40), "limit": float64(999)},
		url:      "https://api.example.com/v1/items?limit=20&offset=40",
		wantPage: map[string]any{"offset": float64(40), "limit": float64(20)},
	},
	{
		name:     "body_location_counter",
		kind:     catalog.KindSearch,
		m:        &catalog.Mapping{Method: "POST", Path: []catalog.Segment{lit("search")}, Body: ob("q", vr("q")), Pagination: offsetPaging(LocBody)},
		vars:     map[string]any{"q": "x"},
		page:     map[string]any{"offset": float64(20)},
		url:      "https://api.example.com/v1/search",
		body:     `{"q":"x","offset":20,"limit":20}`,
		wantPage: map[string]any{"offset": float64(20), "limit": float64(20)},
	},
	{
		name: "body_location_cursor_first_page_no_body",
		m: &catalog.Mapping{Method: "POST", Path: []catalog.Segment{lit("search")},
			Pagination: &catalog.Pagination{Location: LocBody, Params: map[string]catalog.PageParam{"cursor": {FromResponse: "next"}}}},
		url: "https://api.example.com/v1/search",
	},
	{
		name: "body_location_cursor_continuation",
		m: &catalog.Mapping{Method: "POST", Path: []catalog.Segment{lit("search")},
			Pagination: &catalog.Pagination{Location: LocBody, Params: map[string]catalog.PageParam{"cursor": {FromResponse: "next"}}}},
		page: map[string]any{"cursor": "abc"},
		body: `{"cursor":"abc"}`,
	},
	{
		name:     "link_header_first_page",
		m:        &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: linkPaging(LocLinkHeader)},
		url:      "https://api.example.com/v1/items?per_page=50",
		wantPage: map[string]any{"per_page": float64(50)},
	},
	{
		name: "link_header_next_url",
		m:    &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: linkPaging(LocLinkHeader)},
		page: map[string]any{"next_url": "https://API.example.com:443/v1/items?page=2&per_page=50"},
		url:  "https://API.example.com:443/v1/items?page=2&per_page=50",
	},
	{
		name:    "next_url_other_host",
		m:       &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: linkPaging(LocLinkHeader)},
		page:    map[string]any{"next_url": "https://evil.example.net/v1/items?page=2"},
		errCode: abi.CodeCompile, errText: "next page URL leaves the catalog origin",
	},
	{
		name:    "next_url_other_port",
		m:       &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: linkPaging(LocResponseNextURL)},
		page:    map[string]any{"next_url": "https://api.example.com:8443/v1/items?page=2"},
		errCode: abi.CodeCompile, errText: "next page URL leaves the catalog origin",
	},
	{
		name:    "next_url_other_scheme",
		m:       &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: linkPaging(LocResponseNextURL)},
		page:    map[string]any{"next_url": "http://api.example.com/v1/items?page=2"},
		errCode: abi.CodeCompile, errText: "next page URL leaves the catalog origin",
	},
	{
		name:    "next_url_userinfo",
		m:       &catalog.Mapping{Path: []catalog.Segment{lit("items")}, Pagination: linkPaging(LocResponseNextURL)},
		page:    map[string]any{"next_url": "https://x:y@api.example.com/v1/items"},
		errCode: abi.CodeCompile, errText: "leaves the catalog origin",
	},
	{
		name:    "unknown_pagination_location",
		m:       &catalog.Mapping{Pagination: &catalog.Pagination{Location: "cookie"}},
		errCode: abi.CodeCompile, errText: `unknown pagination location "cookie"`,
	},
	{
		name:     "auth_bearer",
		m:        &catalog.Mapping{},
		auth:     catalog.Auth{Scheme: "bearer_token", Env: "GH_TOKEN"},
		wantAuth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "GH_TOKEN"},
	},
	{
		name:     "auth_api_key_header",
		m:        &catalog.Mapping{},
		auth:     catalog.Auth{Scheme: "api_key_header", Header: "X-Api-Key", Env: "KEY"},
		wantAuth: &abi.AuthDirective{Scheme: "api_key_header", Header: "X-Api-Key", Secret: "KEY"},
	},
	{
		name:     "auth_api_key_query",
		m:        &catalog.Mapping{},
		auth:     catalog.Auth{Scheme: "api_key_query", Param: "appid", Env: "OWM_KEY"},
		wantAuth: &abi.AuthDirective{Scheme: "api_key_query", Param: "appid", Secret: "OWM_KEY"},
	},
	{
		name: "auth_none",
		m:    &catalog.Mapping{},
		auth: catalog.Auth{Scheme: "none"},
	},
	{
		name:    "auth_oauth2_incomplete",
		m:       &catalog.Mapping{},
		auth:    catalog.Auth{Scheme: "oauth2_client_credentials", TokenURL: "https://auth.example.com/token"},
		errCode: abi.CodeCompile, errText: "needs client_id_env",
	},
	{
		name:     "auth_oauth2",
		m:        &catalog.Mapping{},
		auth:     catalog.Auth{Scheme: "oauth2_client_credentials", TokenURL: "https://auth.example.com/token", ClientIDEnv: "CID", ClientSecretEnv: "CSECRET", Scopes: []string{"read"}},
		wantAuth: &abi.AuthDirective{Scheme: "oauth2_client_credentials", TokenURL: "https://auth.example.com/token", ClientID: "CID", Secret: "CSECRET", Scopes: []string{"read"}},
	},
	{
		name:    "auth_header_without_env",
		m:       &catalog.Mapping{},
		auth:    catalog.Auth{Scheme: "api_key_header", Header: "X-Key"},
		errCode: abi.CodeCompile, errText: "needs env",
	},
	{
		name:    "transport_wasm",
		m:       &catalog.Mapping{Transport: TransportWasm},
		errCode: abi.CodeCompile, errText: "vendor module",
	},
	{
		name:    "bad_backend",
		base:    "ftp://files.example.com",
		m:       &catalog.Mapping{},
		errCode: abi.CodeCompile, errText: "not an absolute http(s) URL",
	},
	{
		name:    "unknown_expr_type",
		m:       &catalog.Mapping{Query: &catalog.Expr{Type: "lambda"}},
		errCode: abi.CodeCompile, errText: `unknown expression type "lambda"`,
	},
}

func TestCompile(t *testing.T) {
	for _, tc := range compileCases {
		t.Run(tc.name, func(t *testing.T) {
			kind := tc.kind
			if kind == "" {
				kind = catalog.KindQuery
			}
			cat := testCatalog(kind, tc.m, tc.auth)
			if tc.base != "" {
				cat.HTTPBackend = tc.base
			}
			got, aerr := Compile(cat, &abi.CompileRequest{EntryID: "demo", Capability: "cap", Vars: tc.vars, Page: tc.page})
			checkGolden(t, tc.name, got, aerr)
			if tc.errCode != "" {
				if aerr == nil {
					t.Fatalf("want %s error containing %q, got %+v", tc.errCode, tc.errText, got)
				}
				if aerr.Code != tc.errCode || !strings.Contains(aerr.Message, tc.errText) {
					t.Fatalf("error = %s %q, want %s containing %q", aerr.Code, aerr.Message, tc.errCode, tc.errText)
				}
				if tc.hint && aerr.Hint == "" {
					t.Errorf("error %q has no hint", aerr.Message)
				}
				return
			}
			if aerr != nil {
				t.Fatalf("unexpected error: %+v", aerr)
			}
			if tc.method != "" && got.Method != tc.method {
				t.Errorf("method = %q, want %q", got.Method, tc.method)
			}
			if tc.url != "" && got.URL != tc.url {
				t.Errorf("url = %q\n        want %q", got.URL, tc.url)
			}
			if tc.body != "" && got.Body != tc.body {
				t.Errorf("body = %s\n         want %s", got.Body, tc.body)
			}
			if tc.headers != nil && !reflect.DeepEqual(got.Headers, tc.headers) {
				t.Errorf("headers = %q, want %q", got.Headers, tc.headers)
			}
			if !reflect.DeepEqual(got.Auth, tc.wantAuth) {
				t.Errorf("auth = %+v, want %+v", got.Auth, tc.wantAuth)
			}
			if tc.wantPage != nil && !reflect.DeepEqual(got.Page, tc.wantPage) {
				t.Errorf("page = %#v, want %#v", got.Page, tc.wantPage)
			}
			if tc.body != "" && strings.HasPrefix(tc.body, "{") && !json.Valid([]byte(got.Body)) {
				t.Errorf("body is not valid JSON: %s", got.Body)
			}
		})
	}
}

// checkGolden compares the full compile outcome with testdata/<name>.golden.
func checkGolden(t *testing.T, name string, got *abi.CompiledRequest, aerr *abi.Error) {
	t.Helper()
	var v any = got
	if aerr != nil {
		v = aerr
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if string(want) != string(b) {
		t.Errorf("output differs from %s:\n got: %s\nwant: %s", path, b, want)
	}
}

func TestMultipartDeterministic(t *testing.T) {
	m := &catalog.Mapping{Method: "POST", Body: ob("name", vr("name"), "n", vr("n")), BodyFormat: FormatMultipart}
	compile := func(name string) *abi.CompiledRequest {
		r, aerr := Compile(testCatalog(catalog.KindCreate, m, catalog.Auth{}), &abi.CompileRequest{Capability: "cap", Vars: map[string]any{"name": name, "n": 3.0}})
		if aerr != nil {
			t.Fatal(aerr)
		}
		return r
	}
	a, b, c := compile("x"), compile("x"), compile("y")
	if a.Body != b.Body || !reflect.DeepEqual(a.Headers, b.Headers) {
		t.Fatal("same input gave different multipart bodies")
	}
	if a.Headers[0][1] == c.Headers[0][1] {
		t.Fatal("different content gave the same boundary")
	}
	ct := a.Headers[0][1]
	boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
	if boundary == ct || !strings.HasPrefix(boundary, "plasmd-") {
		t.Fatalf("content type %q", ct)
	}
	want := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n" +
		"--" + boundary + "\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n3\r\n" +
		"--" + boundary + "--\r\n"
	if a.Body != want {
		t.Fatalf("body = %q\nwant %q", a.Body, want)
	}
}

func TestCompileUnknownCapability(t *testing.T) {
	_, aerr := Compile(zoo(), &abi.CompileRequest{Capability: "nope"})
	if aerr == nil || aerr.Code != abi.CodeCompile || !strings.Contains(aerr.Message, `no capability "nope"`) {
		t.Fatalf("got %+v", aerr)
	}
	if _, aerr := Compile(nil, nil); aerr == nil || aerr.Code != abi.CodeBadRequest {
		t.Fatalf("nil inputs: got %+v", aerr)
	}
}

func TestCompileDoesNotMutateInputs(t *testing.T) {
	payload := map[string]any{"q": "x"}
	vars := map[string]any{"payload": payload}
	page := map[string]any{"offset": float64(20)}
	m := &catalog.Mapping{Method: "POST", Body: vr("payload"), Pagination: offsetPaging(LocBody)}
	r, aerr := Compile(testCatalog(catalog.KindSearch, m, catalog.Auth{}), &abi.CompileRequest{Capability: "cap", Vars: vars, Page: page})
	if aerr != nil {
		t.Fatal(aerr)
	}
	if r.Body != `{"q":"x","offset":20,"limit":20}` {
		t.Fatalf("body %s", r.Body)
	}
	if len(payload) != 1 || len(page) != 1 || len(vars) != 1 {
		t.Fatalf("inputs mutated: payload=%v page=%v vars=%v", payload, page, vars)
	}
}

func TestRunawayGuards(t *testing.T) {
	deep := cn("x")
	for i := 0; i < maxDepth+5; i++ {
		deep = ob("k", deep)
	}
	big := strings.Repeat("a", 400<<10)
	nestedVar := any("leaf")
	for i := 0; i < maxDepth+5; i++ {
		nestedVar = []any{nestedVar}
	}
	cases := []struct {
		name string
		m    *catalog.Mapping
		vars map[string]any
		text string
	}{
		{"deep_expression", &catalog.Mapping{Method: "POST", Body: deep}, nil, "nested deeper"},
		{"size_budget", &catalog.Mapping{Method: "POST", Body: ar(vr("big"), vr("big"), vr("big"))}, map[string]any{"big": big}, "exceeds"},
		{"format_budget", &catalog.Mapping{Method: "POST", Body: ob("a", format("{big}{big}{big}", nil))}, map[string]any{"big": big}, "exceeds"},
		{"deep_var", &catalog.Mapping{Method: "POST", Body: vr("v")}, map[string]any{"v": nestedVar}, "nested deeper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, aerr := Compile(testCatalog(catalog.KindCreate, tc.m, catalog.Auth{}), &abi.CompileRequest{Capability: "cap", Vars: tc.vars})
			if aerr == nil || aerr.Code != abi.CodeCompile || !strings.Contains(aerr.Message, tc.text) {
				t.Fatalf("got %+v, want compile error containing %q", aerr, tc.text)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{1.0, int64(1), true},
		{json.Number("2"), 2, true},
		{json.Number("2.50"), 2.5, true},
		{"1", 1.0, false},
		{nil, nil, true},
		{nil, false, false},
		{[]any{1.0, "a"}, []string{"1", "a"}, false},
		{[]any{"x"}, []string{"x"}, true},
		{map[string]any{"a": 1.0}, object{{"a", int64(1)}}, true},
		{map[string]any{"a": 1.0}, map[string]any{"b": 1.0}, false},
		{true, true, true},
	}
	for _, c := range cases {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestParamNames(t *testing.T) {
	p := &catalog.Pagination{
		Params:     map[string]catalog.PageParam{"z": {}, "b": {}, "a": {}, "m": {}},
		ParamOrder: []string{"m", "gone", "a", "m"},
	}
	if got := ParamNames(p); !reflect.DeepEqual(got, []string{"m", "a", "b", "z"}) {
		t.Fatalf("ParamNames = %v", got)
	}
}

func FuzzCompile(f *testing.F) {
	seeds := []string{
		`{}`,
		`{"id": 25, "q": "x y", "labels": ["a", "b"], "state": "closed"}`,
		`{"id": {"a": 1}, "labels": {"x": [1, [2]]}}`,
		`{"title": "t", "owner": null, "n": 1, "flag": true}`,
		`{"labels": [null, 1e308, -0.0, "\u2028"], "q": "{}{{"}`,
		`{"id": "", "title": ["x"], "flag": {"y": 1}}`,
	}
	pages := []string{``, `{}`, `{"offset": 40}`, `{"after": "c1"}`, `{"next_url": "https://api.example.com/v1/items?page=3"}`, `{"next_url": 7, "offset": "x"}`}
	for i, s := range seeds {
		f.Add([]byte(s), []byte(pages[i%len(pages)]))
	}
	cat := zoo()
	names := make([]string, 0, len(cat.Capabilities))
	for n := range cat.Capabilities {
		names = append(names, n)
	}
	f.Fuzz(func(t *testing.T, varsJSON, pageJSON []byte) {
		var vars map[string]any
		if json.Unmarshal(varsJSON, &vars) != nil {
			return
		}
		var page map[string]any
		if len(pageJSON) > 0 && json.Unmarshal(pageJSON, &page) != nil {
			return
		}
		for _, name := range names {
			r, aerr := Compile(cat, &abi.CompileRequest{EntryID: "demo", Capability: name, Vars: vars, Page: page})
			if aerr != nil {
				if aerr.Code == "" || aerr.Message == "" {
					t.Fatalf("%s: empty error %+v", name, aerr)
				}
				continue
			}
			u, err := url.Parse(r.URL)
			if err != nil || u.Scheme != "https" || !strings.EqualFold(u.Hostname(), "api.example.com") || (u.Port() != "" && u.Port() != "443") {
				t.Fatalf("%s: url %q left the backend", name, r.URL)
			}
			if strings.Contains(r.Body, "{") && !json.Valid([]byte(r.Body)) && !strings.Contains(r.Body, "plasmd-") {
				t.Fatalf("%s: invalid JSON body %q", name, r.Body)
			}
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	cat := zoo()
	reqs := []*abi.CompileRequest{
		{Capability: "cap", Vars: map[string]any{"q": "pikachu", "labels": []any{"a", "b", "c"}}, Page: map[string]any{"offset": float64(40)}},
		{Capability: "item_create", Vars: map[string]any{"title": "New item", "labels": []any{"x", "y"}, "owner": "ann", "n": 1.0}},
		{Capability: "item_gql", Vars: map[string]any{"q": "ENG"}, Page: map[string]any{"after": "Y3Vyc29yOjU="}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, aerr := Compile(cat, reqs[i%len(reqs)]); aerr != nil {
			b.Fatal(aerr)
		}
	}
}

// A path variable can never change which path is addressed: separators,
// query and fragment characters are escaped, and dot segments too.
func TestPathVariableCannotEscapeItsSegment(t *testing.T) {
	for in, want := range map[string]string{
		".":      "%2E",
		"..":     "%2E%2E",
		"...":    "...",
		"a/../b": "a%2F..%2Fb",
		"x?y#z":  "x%3Fy%23z",
		"ok-1":   "ok-1",
	} {
		if got := request.PathSegment(in); got != want {
			t.Errorf("PathSegment(%q) = %q, want %q", in, got, want)
		}
	}
}
