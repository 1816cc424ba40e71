package decode

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/tape"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

type decodeCase struct {
	name     string
	cap      string
	status   int // default 200
	headers  map[string]string
	relation string
	page     map[string]any
	body     string

	rows    [][]any // compared when non-nil
	nrows   int     // compared when rows is nil and nrows >= 0
	next    map[string]any
	errCode string
	errText string
}

var pokeCols = []any{"id", "name", "weight", "is_default", "types", "owner_login", "born"}

var decodeCases = []decodeCase{
	{
		name: "bare_list",
		cap:  "pokemon_list",
		body: `[{"id":1,"name":"bulbasaur","weight":69,"is_default":true,"types":["grass"],"owner":{"login":"ash"},"born":"1996-02-27T00:00:00Z"},{"id":4,"name":"charmander"},null]`,
		rows: [][]any{
			{int64(1), "bulbasaur", float64(69), true, []any{"grass"}, "ash", "1996-02-27T00:00:00Z"},
			{int64(4), "charmander", nil, nil, nil, nil, nil},
		},
	},
	{
		name: "default_shape_array",
		cap:  "pokemon_default",
		body: `[{"id":7}]`,
		rows: [][]any{{int64(7), nil, nil, nil, nil, nil, nil}},
	},
	{
		name: "default_shape_object",
		cap:  "pokemon_default",
		body: `{"id":7,"name":"squirtle"}`,
		rows: [][]any{{int64(7), "squirtle", nil, nil, nil, nil, nil}},
	},
	{
		name: "results_list",
		cap:  "pokemon_results",
		body: `{"count":1302,"next":"x","results":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}`,
		rows: [][]any{{int64(1), "a", nil, nil, nil, nil, nil}, {int64(2), "b", nil, nil, nil, nil, nil}},
	},
	{
		// A page without the key its list is declared under, and no
		// error sign, is an empty page (Gmail's {"resultSizeEstimate":0}).
		name: "results_missing_is_empty",
		cap:  "pokemon_results",
		body: `{"count":0}`,
		rows: [][]any{},
	},
	{
		// Beside an error sign it is an error answered with 200, not an
		// empty page (it would end the list).
		name:    "results_missing_with_error_is_refused",
		cap:     "pokemon_results",
		body:    `{"count":0,"ok":false,"error":"ratelimited"}`,
		errCode: abi.CodeDecode, errText: `has no "results" at the top level (its keys: count, error, ok) beside an error sign (error: "ratelimited")`,
	},
	{
		name: "results_empty_is_empty",
		cap:  "pokemon_results",
		body: `{"count":0,"results":[]}`,
		rows: [][]any{},
	},
	{
		name:    "results_wrong_kind",
		cap:     "pokemon_results",
		body:    `{"results":{"id":1}}`,
		errCode: abi.CodeDecode, errText: "expected an array at results, got an object",
	},
	{
		name: "items_list",
		cap:  "pokemon_items",
		body: `{"items":[{"id":3,"name":"venusaur","types":[{"slot":1,"n":2.5}]}]}`,
		rows: [][]any{{int64(3), "venusaur", nil, nil, []any{map[string]any{"slot": int64(1), "n": 2.5}}, nil, nil}},
	},
	{
		name: "single",
		cap:  "pokemon_get",
		body: `{"id":25,"name":"pikachu","weight":60,"owner":{"login":"ash","id":1},"born":null}`,
		rows: [][]any{{int64(25), "pikachu", float64(60), nil, nil, "ash", nil}},
	},
	{
		name:    "single_got_array",
		cap:     "pokemon_get",
		body:    `[{"id":25}]`,
		errCode: abi.CodeDecode, errText: "expected one object at the top level, got an array",
	},
	{
		// Numbers in text fields are their literal; integers beyond int64
		// keep their digits; a date (not text) keeps its number.
		name: "text_numbers",
		cap:  "pokemon_list",
		body: `[{"id":18446744073709551616,"name":12345678901234567891,"owner":{"login":1e3},"born":1.0},{"id":-9223372036854775809,"name":1.0,"weight":12345678901234567891,"types":[12345678901234567891,1.5]}]`,
		rows: [][]any{
			{json.Number("18446744073709551616"), "12345678901234567891", nil, nil, nil, "1e3", 1.0},
			{json.Number("-9223372036854775809"), "1.0", 1.2345678901234567e19, nil, []any{json.Number("12345678901234567891"), 1.5}, nil, nil},
		},
	},
	{
		name: "integer_coercion",
		cap:  "pokemon_list",
		body: `[{"id":3.0},{"id":2.5},{"id":1e3},{"id":12345678901234567890},{"id":"42"},{"id":-7}]`,
		rows: [][]any{
			{int64(3), nil, nil, nil, nil, nil, nil},
			{2.5, nil, nil, nil, nil, nil, nil},
			{int64(1000), nil, nil, nil, nil, nil, nil},
			{json.Number("12345678901234567890"), nil, nil, nil, nil, nil, nil},
			{int64(42), nil, nil, nil, nil, nil, nil}, // an integer literal in text is that integer
			{int64(-7), nil, nil, nil, nil, nil, nil},
		},
	},
	{
		name: "nested_path_not_object",
		cap:  "pokemon_list",
		body: `[{"id":1,"owner":"ash"},{"id":2,"owner":{"login":{"x":[1,2.5]}}}]`,
		rows: [][]any{
			{int64(1), nil, nil, nil, nil, nil, nil},
			{int64(2), nil, nil, nil, nil, map[string]any{"x": []any{int64(1), 2.5}}, nil},
		},
	},
	{
		name:    "item_not_object",
		cap:     "pokemon_list",
		body:    `[{"id":1},true]`,
		errCode: abi.CodeDecode, errText: "row 1 is a boolean, not an object",
	}, {
		// Plasm reads a bare string or number item as a row holding only
		// the id (feeds of ids such as Hacker News' topstories).
		name: "scalar_id_rows",
		cap:  "pokemon_list",
		body: `[{"id":1},2,"3"]`,
		rows: [][]any{{int64(1), nil, nil, nil, nil, nil, nil}, {int64(2), nil, nil, nil, nil, nil, nil}, {int64(3), nil, nil, nil, nil, nil, nil}},
	},
	{
		name: "graphql_nodes_with_next_cursor",
		cap:  "issue_query",
		body: `{"data":{"issues":{"nodes":[{"id":"a1","title":"Crash","number":12,"team":{"key":"ENG"}},{"id":"a2","title":"Slow","number":13}],"pageInfo":{"endCursor":"c2","hasNextPage":true}}}}`,
		page: map[string]any{"after": "c1"},
		rows: [][]any{{"a1", "Crash", int64(12), "ENG"}, {"a2", "Slow", int64(13), nil}},
		next: map[string]any{"after": "c2"},
	},
	{
		name:  "graphql_last_page",
		cap:   "issue_query",
		body:  `{"data":{"issues":{"nodes":[{"id":"a3"}],"pageInfo":{"endCursor":"c3","hasNextPage":false}}}}`,
		page:  map[string]any{"after": "c2"},
		nrows: 1,
	},
	{
		name:    "graphql_errors",
		cap:     "issue_query",
		body:    `{"data":null,"errors":[{"message":"Argument 'first' must be\npositive","path":["issues"]},{"message":"second"}]}`,
		errCode: abi.CodeDecode, errText: "graphql error: Argument 'first' must be positive (and 1 more)",
	},
	{
		name:  "graphql_empty_errors_ok",
		cap:   "issue_query",
		body:  `{"errors":[],"data":{"issues":{"nodes":[],"pageInfo":{"hasNextPage":false}}}}`,
		nrows: 0,
	},
	{
		name: "item_inner_key_edges",
		cap:  "issue_edges",
		body: `{"data":{"issues":{"edges":[{"cursor":"x","node":{"id":"n1","number":1}},{"cursor":"y","node":{"id":"n2","title":"T"}},{"cursor":"z","node":null}]}}}`,
		rows: [][]any{{"n1", nil, int64(1), nil}, {"n2", "T", nil, nil}},
	},
	{
		name: "graphql_single_at_path",
		cap:  "issue_get",
		body: `{"data":{"issue":{"id":"i9","title":"Nine","number":9}}}`,
		rows: [][]any{{"i9", "Nine", int64(9), nil}},
	},
	{
		name: "graphql_single_null",
		cap:  "issue_get",
		body: `{"data":{"issue":null}}`,
		rows: [][]any{},
	},
	{
		name:     "relation_from_parent_get_wildcard",
		cap:      "pokemon_get",
		relation: "abilities",
		body:     `{"id":1,"abilities":[{"ability":{"name":"overgrow","url":"u1"},"slot":1},{"ability":{"name":"chlorophyll","url":"u2"}},{"slot":3},{"ability":null}]}`,
		rows:     [][]any{{"overgrow", "u1"}, {"chlorophyll", "u2"}},
	},
	{
		name:     "relation_final_array",
		cap:      "pokemon_get",
		relation: "forms",
		body:     `{"id":1,"forms":[{"name":"f1","url":"u"},{"name":"f2"}]}`,
		rows:     [][]any{{"f1", "u"}, {"f2", nil}},
	},
	{
		name:     "relation_missing_is_empty",
		cap:      "pokemon_get",
		relation: "abilities",
		body:     `{"id":1}`,
		rows:     [][]any{},
	},
	{
		name:     "relation_wildcard_on_object",
		cap:      "pokemon_get",
		relation: "abilities",
		body:     `{"id":1,"abilities":{"a":1}}`,
		errCode:  abi.CodeDecode, errText: "step 2 (wildcard) expected an array, got an object",
	},
	{
		name:     "relation_one_object",
		cap:      "pokemon_get",
		relation: "species",
		body:     `{"id":1,"meta":{"species":{"name":"seed","url":"u"}}}`,
		rows:     [][]any{{"seed", "u"}},
	},
	{
		name:     "relation_one_null_is_no_row",
		cap:      "pokemon_get",
		relation: "species",
		body:     `{"id":1,"meta":{"species":null}}`,
		rows:     [][]any{},
	},
	{
		name:     "relation_one_missing_is_no_row",
		cap:      "pokemon_get",
		relation: "trainer",
		body:     `{"id":1}`,
		rows:     [][]any{},
	},
	{
		name:     "relation_one_array",
		cap:      "pokemon_get",
		relation: "species",
		body:     `{"id":1,"meta":{"species":[{"name":"a"},{"name":"b"}]}}`,
		errCode:  abi.CodeDecode, errText: "relation species: species is declared cardinality one, but item 1 of the answer has an array of 2 at meta.species",
	},
	{
		name:     "relation_declared_one_array",
		cap:      "pokemon_list",
		relation: "trainer",
		body:     `[{"id":1,"trainer":{"name":"ash"}},{"id":2,"trainer":[{"name":"misty"}]}]`,
		errCode:  abi.CodeDecode, errText: "trainer is declared cardinality one, but item 2 of the answer has an array of 1 at trainer",
	},
	{
		name:     "relation_not_embedded",
		cap:      "pokemon_get",
		relation: "evolutions",
		body:     `{"id":1}`,
		errCode:  abi.CodeDecode, errText: "not embedded in the parent",
	},
	{
		name:     "relation_unknown",
		cap:      "pokemon_get",
		relation: "nope",
		body:     `{}`,
		errCode:  abi.CodeDecode, errText: `no relation "nope"`,
	},
	{
		name:    "not_found",
		cap:     "pokemon_get",
		status:  404,
		body:    `{"detail":"Not found.","trace":"` + strings.Repeat("x", 300) + `"}`,
		errCode: abi.CodeDecode, errText: `backend answered 404 Not Found: {"detail":"Not found.","trace":"xxx`,
	},
	{
		name:    "server_error_binary_body",
		cap:     "pokemon_list",
		status:  503,
		body:    "oops\x00\x01\n\n  \xff\xfe down\u202e",
		errCode: abi.CodeDecode, errText: "backend answered 503 Service Unavailable: oops?? down?",
	},
	{
		name:    "unusual_status",
		cap:     "pokemon_list",
		status:  599,
		errCode: abi.CodeDecode, errText: "backend answered 599",
	},
	{
		name:    "unauthorized_hint",
		cap:     "pokemon_list",
		status:  401,
		body:    `{"message":"Bad credentials"}`,
		errCode: abi.CodeDecode, errText: "backend answered 401 Unauthorized",
	},
	{
		name:   "delete_no_content",
		cap:    "pokemon_delete",
		status: 204,
		rows:   [][]any{},
	},
	{
		name: "delete_empty_200",
		cap:  "pokemon_delete",
		body: "  \n",
		rows: [][]any{},
	},
	{
		name:   "action_side_effect_text_body",
		cap:    "pokemon_ping",
		status: 202,
		body:   "pong",
		rows:   [][]any{},
	},
	{
		name:    "get_empty_body",
		cap:     "pokemon_get",
		errCode: abi.CodeDecode, errText: "empty body",
	},
	{
		name:    "invalid_json",
		cap:     "pokemon_list",
		body:    `[{"id":1},`,
		errCode: abi.CodeDecode, errText: "not valid JSON",
	},
	{
		name:    "trailing_data",
		cap:     "pokemon_list",
		body:    `[] []`,
		errCode: abi.CodeDecode, errText: "trailing data",
	},
	{
		name:    "too_deep",
		cap:     "pokemon_list",
		body:    strings.Repeat("[", 200) + strings.Repeat("]", 200),
		errCode: abi.CodeDecode, errText: "nests deeper than 128",
	},
	{
		name:    "unknown_capability",
		cap:     "nope",
		body:    `[]`,
		errCode: abi.CodeDecode, errText: `no capability "nope"`,
	},
	{
		name:    "wasm_transport",
		cap:     "pokemon_wasm",
		body:    `[]`,
		errCode: abi.CodeDecode, errText: "vendor module",
	},
	{
		name:  "offset_first_page_full",
		cap:   "pokemon_results",
		body:  `{"results":` + pokemonList(20) + `}`,
		nrows: 20,
		next:  map[string]any{"offset": int64(20), "limit": float64(20)},
	},
	{
		name:  "offset_next_from_json_state",
		cap:   "pokemon_results",
		page:  map[string]any{"offset": float64(20), "limit": float64(20)},
		body:  `{"results":` + pokemonList(20) + `}`,
		nrows: 20,
		next:  map[string]any{"offset": int64(40), "limit": float64(20)},
	},
	{
		name:  "offset_short_page_stops",
		cap:   "pokemon_results",
		page:  map[string]any{"offset": float64(40), "limit": float64(20)},
		body:  `{"results":` + pokemonList(5) + `}`,
		nrows: 5,
	},
	{
		name:  "offset_empty_page_stops",
		cap:   "pokemon_results",
		body:  `{"results":[]}`,
		nrows: 0,
	},
	{
		name:    "offset_bad_state",
		cap:     "pokemon_results",
		page:    map[string]any{"offset": "abc"},
		body:    `{"results":` + pokemonList(20) + `}`,
		errCode: abi.CodeDecode, errText: `page state "offset" is not an integer`,
	},
	{
		name:  "page_counter_step_one",
		cap:   "pokemon_pages",
		body:  pokemonList(3),
		nrows: 3,
		next:  map[string]any{"page": int64(2)},
	},
	{
		// A full page at max may have more after it: the state says so
		// and the executor refuses to read on (page-max).
		name:  "page_counter_max_marks_past_max",
		cap:   "pokemon_pages",
		page:  map[string]any{"page": float64(3)},
		body:  pokemonList(3),
		nrows: 3,
		next:  map[string]any{"#past_max": "page 3"},
	},
	{
		name:  "page_counter_max_empty_page_stops",
		cap:   "pokemon_pages",
		page:  map[string]any{"page": float64(3)},
		body:  pokemonList(0),
		nrows: 0,
	},
	{
		// As in Plasm, a counter without step grows by 1 per page.
		name:  "counter_default_step_is_one",
		cap:   "pokemon_offset_auto",
		page:  map[string]any{"skip": json.Number("7")},
		body:  pokemonList(4),
		nrows: 4,
		next:  map[string]any{"skip": int64(8)},
	},
	{
		// With no page-size parameter a page shorter than an earlier one
		// (one the backend filtered) does not end the list; an empty page
		// does. An older handle's #page_size is ignored.
		name:  "counter_shorter_than_seen_page_continues",
		cap:   "pokemon_offset_auto",
		page:  map[string]any{"skip": json.Number("2"), "#page_size": float64(10)},
		body:  pokemonList(4),
		nrows: 4,
		next:  map[string]any{"skip": int64(3)},
	},
	{
		name:    "counter_link_header_without_next_stops",
		cap:     "pokemon_offset_auto",
		headers: map[string]string{"Link": `<http://x/posts?_page=1>; rel="first", <http://x/posts?_page=1>; rel="last"`},
		body:    pokemonList(4),
		nrows:   4,
	},
	{
		name:  "offset_page_below_fixed_limit_stops",
		cap:   "pokemon_results",
		body:  `{"results":` + pokemonList(19) + `}`,
		nrows: 19,
	},
	{
		name:    "link_header_next",
		cap:     "issue_links",
		headers: map[string]string{"link": `<https://api.example.com/v2/issues?page=1>; rel="prev first", <https://api.example.com/v2/issues?page=3&q=a,b>; rel="next"; title="x;y, z", <https://api.example.com/v2/issues?page=9>; rel=last`},
		body:    `[{"id":"i1"}]`,
		nrows:   1,
		next:    map[string]any{"next_url": "https://api.example.com/v2/issues?page=3&q=a,b", "per_page": float64(50)},
	},
	{
		name:    "link_header_relative",
		cap:     "issue_links",
		headers: map[string]string{"Link": `</v2/issues?page=2>; rel=next`},
		body:    `[{"id":"i1"}]`,
		nrows:   1,
		next:    map[string]any{"next_url": "https://api.example.com/v2/issues?page=2", "per_page": float64(50)},
	},
	{
		name:    "link_header_no_next",
		cap:     "issue_links",
		headers: map[string]string{"Link": `<https://api.example.com/v2/issues?page=1>; rel="prev", garbage, <broken`},
		body:    `[]`,
		nrows:   0,
	},
	{
		name:  "response_next_url",
		cap:   "issue_nexturl",
		body:  `{"next":"https://api.example.com/v2/issues/?offset=20","results":[{"id":"a"}]}`,
		nrows: 1,
		next:  map[string]any{"next_url": "https://api.example.com/v2/issues/?offset=20"},
	},
	{
		name:  "response_next_url_null_stops",
		cap:   "issue_nexturl",
		body:  `{"next":null,"results":[{"id":"a"}]}`,
		nrows: 1,
	},
	{
		name:  "stop_when_absent_continues",
		cap:   "issue_absent",
		body:  `{"meta":{"cursor":"k2","more":true},"results":` + strings.Repeat(`[{"id":"a"}`, 1) + strings.Repeat(`,{"id":"b"}`, 9) + `]}`,
		page:  map[string]any{"cursor": "k1"},
		nrows: 10,
		next:  map[string]any{"cursor": "k2", "size": "10"},
	},
	{
		// The stop field and the cursor decide, not the page's length: a
		// backend may cap pages below the size asked for.
		name:  "stop_when_decides_over_short_page",
		cap:   "issue_absent",
		body:  `{"meta":{"cursor":"k2","more":true},"results":[{"id":"a"}]}`,
		page:  map[string]any{"cursor": "k1"},
		nrows: 1,
		next:  map[string]any{"cursor": "k2", "size": "10"},
	},
	{
		name:  "stop_when_absent_stops",
		cap:   "issue_absent",
		body:  `{"meta":{"cursor":"k3"},"results":[{"id":"a"}]}`,
		nrows: 1,
	},
	{
		name:  "cursor_not_moving_stops",
		cap:   "issue_absent",
		page:  map[string]any{"cursor": "k1"},
		body:  `{"meta":{"cursor":"k1","more":true},"results":[{"id":"a"}]}`,
		nrows: 1,
	},
}

func TestDecode(t *testing.T) {
	cat := testCatalog()
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = 200
			}
			req := &abi.DecodeRequest{EntryID: "demo", Capability: tc.cap, Status: status, Headers: tc.headers, Relation: tc.relation, Page: tc.page}
			got, aerr := decodeBoth(t, cat, req, []byte(tc.body))
			checkGolden(t, tc.name, got, aerr)
			if tc.errCode != "" {
				if aerr == nil {
					t.Fatalf("want %s error containing %q, got %+v", tc.errCode, tc.errText, got)
				}
				if aerr.Code != tc.errCode || !strings.Contains(aerr.Message, tc.errText) {
					t.Fatalf("error = %s %q\nwant %s containing %q", aerr.Code, aerr.Message, tc.errCode, tc.errText)
				}
				return
			}
			if aerr != nil {
				t.Fatalf("unexpected error: %+v", aerr)
			}
			if got.Table.Rows == nil {
				t.Fatal("rows is nil; want an empty slice so JSON says []")
			}
			if tc.rows != nil && !reflect.DeepEqual(got.Table.Rows, tc.rows) {
				t.Errorf("rows =\n %#v\nwant\n %#v", got.Table.Rows, tc.rows)
			}
			if tc.rows == nil && len(got.Table.Rows) != tc.nrows {
				t.Errorf("%d rows, want %d", len(got.Table.Rows), tc.nrows)
			}
			if !reflect.DeepEqual(got.Next, tc.next) {
				t.Errorf("next = %#v, want %#v", got.Next, tc.next)
			}
			for _, r := range got.Table.Rows {
				if len(r) != len(got.Table.Columns) {
					t.Fatalf("row width %d != %d columns", len(r), len(got.Table.Columns))
				}
			}
		})
	}
}

func TestColumnsFollowFieldOrder(t *testing.T) {
	got, aerr := Decode(testCatalog(), &abi.DecodeRequest{Capability: "pokemon_list", Status: 200}, []byte(`[]`))
	if aerr != nil {
		t.Fatal(aerr)
	}
	want := make([]string, len(pokeCols))
	for i, c := range pokeCols {
		want[i] = c.(string)
	}
	if !reflect.DeepEqual(got.Table.Columns, want) {
		t.Fatalf("columns = %v, want %v", got.Table.Columns, want)
	}
}

func TestStatusErrorHint(t *testing.T) {
	_, aerr := Decode(testCatalog(), &abi.DecodeRequest{Capability: "pokemon_list", Status: 401}, []byte(`{}`))
	if aerr == nil || !strings.Contains(aerr.Hint, "DEMO_TOKEN") {
		t.Fatalf("401 hint should name the secret: %+v", aerr)
	}
	if _, aerr := Decode(nil, nil, nil); aerr == nil || aerr.Code != abi.CodeBadRequest {
		t.Fatalf("nil inputs: %+v", aerr)
	}
}

// checkGolden compares the full decode outcome with testdata/<name>.golden.
func checkGolden(t *testing.T, name string, got *abi.DecodeResponse, aerr *abi.Error) {
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
		t.Fatalf("encode result: %v", err)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("output differs from %s:\n got: %s\nwant: %s", path, buf.Bytes(), want)
	}
}

// decodeBoth decodes body as raw JSON and, when the host would have sent
// it as a tape, as a tape too; the two paths must agree exactly.
func decodeBoth(t *testing.T, cat *catalog.Catalog, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, *abi.Error) {
	t.Helper()
	got, aerr := Decode(cat, req, body)
	if req.Status < 200 || req.Status > 299 || len(bytes.TrimSpace(body)) == 0 {
		return got, aerr
	}
	tp, err := tape.AppendJSON(nil, body)
	if err != nil {
		return got, aerr
	}
	treq := *req
	treq.Tape = true
	tgot, taerr := Decode(cat, &treq, tp)
	if !reflect.DeepEqual(got, tgot) || !reflect.DeepEqual(aerr, taerr) {
		t.Fatalf("tape path differs for %q:\n json: %#v %+v\n tape: %#v %+v", body, got, aerr, tgot, taerr)
	}
	return got, aerr
}

func FuzzDecode(f *testing.F) {
	seeds := []struct {
		status int
		body   string
	}{
		{200, `[]`},
		{200, pokemonList(2)},
		{200, `{"results":[{"id":1}],"next":"/x"}`},
		{200, `{"data":{"issues":{"nodes":[{"id":"a"}],"pageInfo":{"endCursor":"c","hasNextPage":true}}}}`},
		{200, `{"errors":[{"message":"boom"}]}`},
		{200, `{"id":1,"abilities":[{"ability":{"name":"x"}}]}`},
		{404, "not found\xff"},
		{204, ``},
		{200, `[[[[[[[[[[1]]]]]]]]]]`},
		{200, `{"id":1e999}`},
		{200, `[{"id":12345678901234567891,"name":1e3,"height":-9223372036854775809},{"id":9007199254740993.0,"name":1.0}]`},
		{200, `"\ud800"`},
	}
	for i, s := range seeds {
		f.Add(s.status, []byte(s.body), uint8(i))
	}
	cat := testCatalog()
	type call struct{ cap, rel string }
	var calls []call
	for name := range cat.Capabilities {
		calls = append(calls, call{cap: name})
	}
	calls = append(calls, call{"pokemon_get", "abilities"}, call{"pokemon_get", "forms"})
	f.Fuzz(func(t *testing.T, status int, body []byte, pick uint8) {
		c := calls[int(pick)%len(calls)]
		req := &abi.DecodeRequest{
			Capability: c.cap, Status: status, Relation: c.rel,
			Headers: map[string]string{"Link": string(body[:min(len(body), 64)])},
			Page:    map[string]any{"offset": float64(pick), "after": "c"},
		}
		got, aerr := decodeBoth(t, cat, req, body)
		if aerr != nil {
			if aerr.Code == "" || aerr.Message == "" {
				t.Fatalf("empty error %+v", aerr)
			}
			return
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	cat := testCatalog()
	body := []byte(`{"results":` + pokemonList(20) + `}`)
	req := &abi.DecodeRequest{Capability: "pokemon_results", Status: 200, Page: map[string]any{"offset": float64(20)}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, aerr := Decode(cat, req, body); aerr != nil {
			b.Fatal(aerr)
		}
	}
}
