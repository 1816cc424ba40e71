package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bigIDDomain has a text id that a backend sends as a JSON number, and an
// integer field; item_query provides only ids, so every row is hydrated
// with item_get, whose path is built from the decoded id.
const bigIDDomain = `version: 1
http_backend: http://bigid.invalid
values:
  text: {type: string}
  count: {type: integer}
entities:
  Item:
    id_field: id
    fields:
      id: {value_ref: text}
      title: {value_ref: text}
      n: {value_ref: count}
capabilities:
  item_query: {kind: query, entity: Item, provides: [id]}
  item_get: {kind: get, entity: Item}
`

const bigIDMappings = `item_query:
  method: GET
  path: [{type: literal, value: bigitems}]
  response: {items: data}
item_get:
  method: GET
  path: [{type: literal, value: bigitems}, {type: var, name: id}]
`

// TestBigNumericIDs: a text id above int64 sent as a JSON number keeps its
// digits, so the hydrating get fetches its own row (before, the id became
// 12345678901234567000 and the get fetched another row); an id written
// 1e3 is fetched as 1e3. Text ids are JSON strings in the JSON and MCP
// results (JavaScript clients cannot hold 1234567890123456789 as a
// number), and an integer above int64 keeps its exact digits.
func TestBigNumericIDs(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/bigitems":
			io.WriteString(w, `{"data":[{"id":12345678901234567891},{"id":1234567890123456789},{"id":1e3}]}`)
		case "/bigitems/12345678901234567891":
			io.WriteString(w, `{"id":12345678901234567891,"title":"right row","n":18446744073709551616}`)
		case "/bigitems/12345678901234567000":
			io.WriteString(w, `{"id":12345678901234567000,"title":"WRONG ROW","n":1}`)
		case "/bigitems/1234567890123456789":
			io.WriteString(w, `{"id":"1234567890123456789","title":"int64 row","n":-9223372036854775809}`)
		case "/bigitems/1e3":
			io.WriteString(w, `{"id":1e3,"title":"exponent row","n":1e3}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer backend.Close()

	f := catalogFixture(t, "bigid", map[string]string{"domain.yaml": bigIDDomain, "mappings.yaml": bigIDMappings}, backend.URL)
	path := f.open(t, "bigid", "Item")
	const program = `Item[id,title,n]`

	// JSON: text ids are strings with every digit; integers exact numbers.
	r := f.do(t, "POST", path, "text/plain", program, "Accept", "application/json")
	if r.status != http.StatusOK {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	for _, want := range []string{
		`{"id":"12345678901234567891","n":18446744073709551616,"title":"right row"}`,
		`{"id":"1234567890123456789","n":-9223372036854775809,"title":"int64 row"}`,
		`{"id":"1e3","n":1000,"title":"exponent row"}`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("JSON result lacks %s:\n%s", want, r.body)
		}
	}
	if strings.Contains(r.body, "WRONG") {
		t.Errorf("the wrong row was fetched:\n%s", r.body)
	}
	mu.Lock()
	got := slices.Clone(asked)
	mu.Unlock()
	for _, p := range []string{"/bigitems/12345678901234567891", "/bigitems/1234567890123456789", "/bigitems/1e3"} {
		if !slices.Contains(got, p) {
			t.Errorf("backend was not asked for %s (asked %v)", p, got)
		}
	}
	if slices.Contains(got, "/bigitems/12345678901234567000") {
		t.Errorf("a rounded id was requested: %v", got)
	}

	// Markdown keeps the digits too.
	md := f.do(t, "POST", path, "text/plain", program, "Accept", "text/markdown")
	if !strings.Contains(md.body, "12345678901234567891\tright row\t18446744073709551616") {
		t.Errorf("markdown:\n%s", md.body)
	}

	// MCP: the tool result's text and structured content say the same.
	cs := f.mcpClient(t)
	opened := mustOK(t, call(t, cs, "plasm_context", map[string]any{"intent": "read big ids", "seeds": seedList("bigid:Item")}))
	item := symbolFor(t, opened.text, "bigid:Item")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plasm_run",
		Arguments: map[string]any{"logical_session_ref": "s0", "program": item + "[id,title,n]", "force": true}})
	if err != nil || res.IsError {
		t.Fatalf("plasm_run: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), "12345678901234567891") || strings.Contains(string(raw), "WRONG") {
		t.Errorf("MCP result:\n%s", raw)
	}
	if strings.Contains(string(raw), `"id":12345678901234567891`) || strings.Contains(string(raw), `"id":1234567890123456789`) {
		t.Errorf("MCP result writes a text id as a JSON number:\n%s", raw)
	}
}
