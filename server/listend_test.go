package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// listEndDomain and listEndMappings page one row entity in the ways where
// a list's end used to be guessed wrong: a list under a declared key
// (response_next_url), a counter with a fixed page size, a counter with a
// max, and a counter with no page-size parameter.
const listEndDomain = `version: 1
http_backend: http://listend.invalid
values:
  id: {type: integer}
  text: {type: string}
entities:
  Nx: {id_field: id, fields: {id: {value_ref: id}}}
  Ip: {id_field: id, fields: {id: {value_ref: id}}}
  Pc: {id_field: id, fields: {id: {value_ref: id}}}
  Pm: {id_field: id, fields: {id: {value_ref: id}}}
  Pn: {id_field: id, fields: {id: {value_ref: id}}}
  Par:
    id_field: id
    fields: {id: {value_ref: id}}
    relations:
      kids: {target: Kid, cardinality: many, materialize: {kind: query_scoped, capability: kid_query, param: parent}}
  Kid: {id_field: id, fields: {id: {value_ref: id}}}
capabilities:
  nx_query: {kind: query, entity: Nx, parameters: [{name: set, value_ref: text}]}
  ip_query: {kind: query, entity: Ip, parameters: [{name: set, value_ref: text}]}
  pc_query: {kind: query, entity: Pc, parameters: [{name: set, value_ref: text}]}
  pm_query: {kind: query, entity: Pm, parameters: [{name: set, value_ref: text}]}
  pn_query: {kind: query, entity: Pn, parameters: [{name: set, value_ref: text}]}
  par_query: {kind: query, entity: Par}
  kid_query: {kind: query, entity: Kid, parameters: [{name: parent, value_ref: id}]}
`

const listEndMappings = `nx_query:
  method: GET
  path: [{type: literal, value: nx}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
  response: {items: data}
  pagination: {location: response_next_url, response_next_url_field: next}
ip_query:
  method: GET
  path: [{type: literal, value: ip}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
  response: {items_path: [data, list]}
  pagination: {location: response_next_url, response_next_url_field: next}
pc_query:
  method: GET
  path: [{type: literal, value: pc}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
  response: {items: data}
  pagination:
    params: {page: {counter: 1}, per_page: {fixed: 3}}
pm_query:
  method: GET
  path: [{type: literal, value: pm}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
  response: {items: data}
  pagination:
    params: {page: {counter: 1, max: 2}, per_page: {fixed: 3}}
pn_query:
  method: GET
  path: [{type: literal, value: pn}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
  response: {items: data}
  pagination:
    params: {page: {counter: 1}}
par_query:
  method: GET
  path: [{type: literal, value: par}]
  response: {items: data}
kid_query:
  method: GET
  path: [{type: literal, value: kids}]
  query: {type: object, fields: [[set, {type: var, name: parent}]]}
  response: {items: data}
  pagination:
    params: {page: {counter: 1}, per_page: {fixed: 2}}
`

// listEndPage is one page a listEndBackend answers: its rows, or a whole
// body in their place, and a Link header.
type listEndPage struct {
	ids  []int
	body string
	link string
}

// listEndBackend serves pages[path+"?"+set][page-1], the page number from
// ?page= (1 when absent); next-URL lists carry a next field while a page
// follows. {self} in a Link header is the backend's origin.
func listEndBackend(t *testing.T, pages map[string][]listEndPage) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path + "?" + r.URL.Query().Get("set")
		n := 1
		if p := r.URL.Query().Get("page"); p != "" {
			n, _ = strconv.Atoi(p)
		}
		list, ok := pages[key]
		if !ok || n < 1 || n > len(list) {
			http.NotFound(w, r)
			return
		}
		pg := list[n-1]
		if pg.link != "" {
			w.Header().Set("Link", strings.ReplaceAll(pg.link, "{self}", srv.URL))
		}
		w.Header().Set("Content-Type", "application/json")
		if pg.body != "" {
			fmt.Fprint(w, pg.body)
			return
		}
		rows := []map[string]any{}
		for _, id := range pg.ids {
			rows = append(rows, map[string]any{"id": id})
		}
		var data any = rows
		if r.URL.Path == "/ip" {
			data = map[string]any{"list": rows}
		}
		doc := map[string]any{"data": data}
		if n < len(list) && (r.URL.Path == "/nx" || r.URL.Path == "/ip") {
			doc["next"] = fmt.Sprintf("%s%s?set=%s&page=%d", srv.URL, r.URL.Path, r.URL.Query().Get("set"), n+1)
		}
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// listEndRun runs program and returns its first column joined by spaces,
// or the problem's status and body.
func listEndRun(t *testing.T, f *fixture, path, program string, header ...string) (string, int, string) {
	t.Helper()
	r := f.do(t, "POST", path, "text/plain", program, append([]string{"Accept", "application/json"}, header...)...)
	if r.status != http.StatusOK {
		return "", r.status, r.body
	}
	var out struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("%s: %v", program, err)
	}
	var got []string
	cols, _ := out.Results[0]["columns"].([]any)
	for _, row := range rows(t, out.Results[0]) {
		got = append(got, fmt.Sprint(row[cols[0].(string)]))
	}
	return strings.Join(got, " "), r.status, r.body
}

type listEndCase struct {
	program string
	want    string // the first column's values, or "refused:<fragment>"
}

func checkListEnd(t *testing.T, f *fixture, path string, tests []listEndCase, header ...string) {
	t.Helper()
	for _, tt := range tests {
		got, status, body := listEndRun(t, f, path, tt.program, header...)
		if frag, ok := strings.CutPrefix(tt.want, "refused:"); ok {
			if status == http.StatusOK || !strings.Contains(body, frag) {
				t.Errorf("%s: status %d, answer %q %s; want a refusal mentioning %q", tt.program, status, got, body, frag)
			}
			continue
		}
		if status != http.StatusOK || got != tt.want {
			t.Errorf("%s: status %d, got %q, want %q (%s)", tt.program, status, got, tt.want, body)
		}
	}
}

// TestListPageWithoutItsKey: a page answering 200 without the key its list
// is declared under, or with null or an empty list there, beside an error
// sign (a rate-limit notice, Slack's {"ok":false,…}, GraphQL's errors,
// success: false, JSend's status, WeChat's errcode, AWS's Error) is
// refused, on the first page and on a later one, naming the expected path,
// the keys present and the backend's error text. Before, the first page
// was read as no rows and a later one ended the list: a prefix answered as
// the whole list. A later page without its key whose keys are all
// messages is refused even without a sign ({"message":"Too many
// requests"}); otherwise a missing key is an empty page on any page
// (proto3 omits an empty list: Gmail answers {"resultSizeEstimate":0}),
// and so is a null list.
func TestListPageWithoutItsKey(t *testing.T) {
	limited := listEndPage{body: `{"error":"rate limited"}`}
	backend := listEndBackend(t, map[string][]listEndPage{
		"/nx?ok":    {{ids: []int{1, 2, 3}}, {ids: []int{4}}},
		"/nx?miss1": {limited},
		"/nx?miss2": {{ids: []int{1, 2, 3}}, {body: `{"ok":false,"error":"invalid_cursor"}`}},
		"/nx?nul":   {{ids: []int{1, 2}}, {body: `{"data":null}`}},
		"/nx?emp":   {{body: `{"data":[]}`}},
		"/nx?gm1":   {{body: `{"resultSizeEstimate":0}`}},
		"/nx?gm2":   {{ids: []int{1, 2}}, {body: `{"resultSizeEstimate":0}`}},
		"/nx?msg2":  {{ids: []int{1, 2}}, {body: `{"message":"Too many requests"}`}},
		"/nx?suc":   {{ids: []int{1, 2}}, {body: `{"success":false,"message":"Too many requests"}`}},
		"/nx?jsd":   {{ids: []int{1, 2}}, {body: `{"status":"error","message":"quota exceeded"}`}},
		"/nx?wcq":   {{ids: []int{1, 2}}, {body: `{"errcode":45009,"errmsg":"reach max api daily quota limit"}`}},
		"/nx?aws":   {{ids: []int{1, 2}}, {body: `{"Error":{"Code":"Throttling"}}`}},
		"/nx?slke":  {{ids: []int{1, 2}}, {body: `{"ok":false,"error":"ratelimited","data":[]}`}},
		"/nx?err0":  {{ids: []int{1, 2}}, {body: `{"error":0,"data":null}`}},
		"/nx?slk":   {{ids: []int{1, 2}}, {body: `{"ok":false,"error":"ratelimited","data":null}`}},
		"/nx?gql":   {{ids: []int{1}}, {body: `{"data":null,"errors":[{"status":"429","detail":"slow down"}]}`}},
		"/ip?ok":    {{ids: []int{1, 2}}, {ids: []int{3}}},
		"/ip?miss2": {{ids: []int{1, 2}}, {body: `{"data":{"error":"rate limited"}}`}},
		"/ip?miss1": {limited},
	})
	f := catalogFixture(t, "listend", map[string]string{"domain.yaml": listEndDomain, "mappings.yaml": listEndMappings}, backend.URL)
	path := f.open(t, "listend", "Nx", "Ip")
	checkListEnd(t, f, path, []listEndCase{
		{`Nx{set="ok"}.sort(id)[id]`, "1 2 3 4"},
		{`Nx{set="nul"}.sort(id)[id]`, "1 2"},
		{`Nx{set="emp"}.aggregate(n=count)`, "0"},
		{`Nx{set="gm1"}.aggregate(n=count)`, "0"},
		{`Nx{set="gm2"}.sort(id)[id]`, "1 2"},
		{`Nx{set="msg2"}.sort(id)[id]`, `refused:a later page of the list, has no \"data\" at the top level (its keys: message)`},
		{`Nx{set="suc"}.sort(id)[id]`, `refused:success: false, message: \"Too many requests\"`},
		{`Nx{set="jsd"}.sort(id)[id]`, `refused:status: \"error\"`},
		{`Nx{set="wcq"}.sort(id)[id]`, `refused:reach max api daily quota limit`},
		{`Nx{set="aws"}.sort(id)[id]`, `refused:Throttling`},
		{`Nx{set="slke"}.sort(id)[id]`, `refused:the list at data is empty beside an error sign`},
		{`Nx{set="err0"}.sort(id)[id]`, "1 2"},
		{`Nx{set="slk"}.sort(id)[id]`, `refused:has null at data (its keys: data, error, ok) beside an error sign (error: \"ratelimited\")`},
		{`Nx{set="gql"}.aggregate(n=count)`, `refused:slow down`},
		{`Nx{set="miss1"}.sort(id)[id]`, `refused:has no \"data\" at the top level (its keys: error)`},
		{`Nx{set="miss2"}.sort(id)[id]`, `refused:(its keys: error, ok)`},
		{`Nx{set="miss2"}.aggregate(n=count)`, "refused:the list is expected at data"},
		{`Ip{set="ok"}.sort(id)[id]`, "1 2 3"},
		{`Ip{set="miss1"}.sort(id)[id]`, `refused:the list is expected at data.list`},
		{`Ip{set="miss2"}.aggregate(n=count)`, `refused:has no \"list\" at data (its keys: error)`},
	})
}

// counterPages is seven rows in pages of three, each page with the given
// Link header.
func counterPages(link string) []listEndPage {
	return []listEndPage{{ids: []int{1, 2, 3}, link: link}, {ids: []int{4, 5, 6}, link: link}, {ids: []int{7}, link: link}}
}

// TestCounterLinkHeaderRels: a Link header ends a counter-paged list only
// when its rel values name other pages (first, prev, last) and none is
// next. Before, the text "last", "prev" or "first" anywhere in it (a URL,
// another parameter) ended the list after page 1.
func TestCounterLinkHeaderRels(t *testing.T) {
	backend := listEndBackend(t, map[string][]listEndPage{
		"/pc?ok":       counterPages(""),
		"/pc?linkself": counterPages(`<{self}/pc?sort=last_modified>; rel="self"`),
		"/pc?linkhelp": counterPages(`<{self}/docs/first-steps>; rel="help"`),
		"/pc?linkdep":  counterPages(`<{self}/deprecation>; rel="deprecation"; title="prev API, last release"`),
		// The backend's own word: page 2 is the last (page 3 is not served).
		"/pc?lastrel": {{ids: []int{1, 2, 3}, link: `<{self}/pc?page=2>; rel="next"`}, {ids: []int{4, 5, 6}, link: `<{self}/pc?page=1>; rel="First", <{self}/pc?page=1>; rel=prev`}},
	})
	f := catalogFixture(t, "listend", map[string]string{"domain.yaml": listEndDomain, "mappings.yaml": listEndMappings}, backend.URL)
	path := f.open(t, "listend", "Pc")
	checkListEnd(t, f, path, []listEndCase{
		{`Pc{set="ok"}.aggregate(n=count)`, "7"},
		{`Pc{set="linkself"}.aggregate(n=count)`, "7"},
		{`Pc{set="linkhelp"}.aggregate(n=count)`, "7"},
		{`Pc{set="linkdep"}.aggregate(n=count)`, "7"},
		{`Pc{set="lastrel"}.sort(id, desc)[id]`, "6 5 4 3 2 1"},
	})
}

// TestCounterMaxRefusesFullPage: a counter's max (2 pages of 3 here) ends
// a list only on a page that is the last anyway (short or empty); when the
// page at max is full the run is refused (page-max), never answered from
// the six rows read (before: 7 rows answered as 6). A .limit the pages up
// to max fill is still answered.
func TestCounterMaxRefusesFullPage(t *testing.T) {
	backend := listEndBackend(t, map[string][]listEndPage{
		"/pm?seven": counterPages(""),
		"/pm?five":  {{ids: []int{1, 2, 3}}, {ids: []int{4, 5}}},
		"/pm?three": {{ids: []int{1, 2, 3}}, {ids: nil}},
	})
	f := catalogFixture(t, "listend", map[string]string{"domain.yaml": listEndDomain, "mappings.yaml": listEndMappings}, backend.URL)
	path := f.open(t, "listend", "Pm")
	checkListEnd(t, f, path, []listEndCase{
		{`Pm{set="seven"}.sort(id, desc)[id]`, `refused:problems/page-max"`},
		{`Pm{set="seven"}.aggregate(n=count)`, "refused:stopped at the catalog's page counter max (page 2) after 2 pages and 6 rows"},
		{`Pm{set="seven"}.limit(5)[id]`, "1 2 3 4 5"},
		{`Pm{set="five"}.sort(id, desc)[id]`, "5 4 3 2 1"},
		{`Pm{set="three"}.aggregate(n=count)`, "3"},
	})
	// A bare list answers its pages with a handle; the handle past max is refused.
	h1 := f.runJSON(t, path, `Pm{set="seven"}[id]`)[0]
	h2 := f.runJSON(t, path, "page("+fmt.Sprint(h1["page_handle"])+")")[0]
	if len(rows(t, h1)) != 3 || len(rows(t, h2)) != 3 || h2["page_handle"] == nil {
		t.Fatalf("pages: %v, %v", h1, h2)
	}
	if r := f.do(t, "POST", path, "text/plain", "page("+fmt.Sprint(h2["page_handle"])+")"); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "its next page is past the catalog's page counter max (page 2)") {
		t.Errorf("page past max: %d %s", r.status, r.body)
	}
}

// TestCounterShortMiddlePage: a counter with no page-size parameter and no
// stop_when reads on past a page shorter than an earlier one (a backend
// that filters rows per page returns such pages mid-list) until an empty
// page. Before, pages [1,2,3] [4,5] [6,7,8] [] answered 5 rows for 8.
func TestCounterShortMiddlePage(t *testing.T) {
	backend := listEndBackend(t, map[string][]listEndPage{
		"/pn?var":  {{ids: []int{1, 2, 3}}, {ids: []int{4, 5}}, {ids: []int{6, 7, 8}}, {ids: nil}},
		"/pn?even": {{ids: []int{1, 2, 3}}, {ids: []int{4, 5, 6}}, {body: `{"data":[]}`}},
	})
	f := catalogFixture(t, "listend", map[string]string{"domain.yaml": listEndDomain, "mappings.yaml": listEndMappings}, backend.URL)
	path := f.open(t, "listend", "Pn")
	checkListEnd(t, f, path, []listEndCase{
		{`Pn{set="var"}.aggregate(n=count)`, "8"},
		{`Pn{set="var"}.sort(id, desc).limit(3)[id]`, "8 7 6"},
		{`Pn{set="even"}.aggregate(n=count)`, "6"},
	})
}

// TestBudgetLimitWithoutSortServed: with read_pages 3 and read_rows 5, a
// .limit(n) with no sort before it is answered when its rows fit the
// budget, though the page that fills it brings more (before: refused once
// page 2 brought the rows read to 6), and Par.kids.limit(2) reads only the
// first parent's first page of kids (before: every parent's kids, refused
// on pages). A limit past the budget is refused without suggesting "a
// smaller .limit(n) without .sort".
func TestBudgetLimitWithoutSortServed(t *testing.T) {
	backend := listEndBackend(t, map[string][]listEndPage{
		"/pc?ok":  counterPages(""),
		"/par?":   {{ids: []int{1, 2}}},
		"/kids?1": {{ids: []int{11, 12}}, {ids: []int{13, 14}}, {ids: []int{15}}},
		"/kids?2": {{ids: []int{21, 22}}, {ids: nil}},
	})
	f := catalogFixture(t, "listend", map[string]string{"domain.yaml": listEndDomain, "mappings.yaml": listEndMappings}, backend.URL, func(c *server.Config) {
		set, err := tenant.Parse([]byte(fmt.Sprintf("tenants:\n  - id: tiny\n    token_sha256: [%s]\n    limits: {read_pages: 3, read_rows: 5}\n", tenant.Digest(tokenA))))
		if err != nil {
			t.Fatal(err)
		}
		c.Tenants = set
	})
	body, _ := json.Marshal(map[string]any{"entry_id": "listend", "entities": []string{"Pc", "Par", "Kid"}})
	r := f.do(t, "POST", "/execute", "application/json", string(body), "Authorization", "Bearer "+tokenA)
	if r.status != http.StatusSeeOther {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	path := r.header.Get("Location")
	checkListEnd(t, f, path, []listEndCase{
		{`Pc{set="ok"}.limit(4)[id]`, "1 2 3 4"},
		{`Par.kids.limit(2)[id]`, "11 12"},
		{`Par.kids.limit(3)[id]`, "11 12 13"},
		{`Pc{set="ok"}.limit(6)[id]`, "refused:a smaller n in its .limit(n)"},
		{`Pc{set="ok"}.sort(id).limit(2)[id]`, "refused:problems/run-budget"},
	}, "Authorization", "Bearer "+tokenA)
}
