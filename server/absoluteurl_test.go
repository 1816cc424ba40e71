package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/server"
)

// absDomain is a catalog in the style of Plasm's hackernews and pokeapi:
// its http_backend is one origin (%[1]s), a search mapping names a second
// origin (%[2]s) by an absolute URL in its path, and Chain rows are
// identified by their resource URL, which a get sends to as is.
const absDomain = `version: 1
http_backend: %[1]s
values:
  url: {type: string}
  num: {type: integer}
  text: {type: string}
entities:
  Chain:
    id_field: url
    fields:
      url: {value_ref: url, required: true}
      id: {value_ref: num}
  Species:
    id_field: name
    fields:
      name: {value_ref: text, required: true}
    relations:
      chain: {target: Chain, cardinality: one, description: declared only, as in pokeapi}
  Hit:
    id_field: id
    fields:
      id: {value_ref: num, required: true}
      title: {value_ref: text}
capabilities:
  chain_query:
    kind: query
    entity: Chain
    parameters: [{name: set, value_ref: text}]
    provides: [url]
  chain_get: {kind: get, entity: Chain}
  species_get: {kind: get, entity: Species}
  hit_search:
    kind: search
    entity: Hit
    parameters: [{name: query, value_ref: text, role: search, required: true}]
`

const absMappings = `chain_query:
  method: GET
  path: [{type: literal, value: chain}, {type: literal, value: ""}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
chain_get:
  method: GET
  path: [{type: literal, value: chain}, {type: var, name: id}, {type: literal, value: ""}]
species_get:
  method: GET
  path: [{type: literal, value: species}, {type: var, name: id}, {type: literal, value: ""}]
hit_search:
  method: GET
  path: [{type: literal, value: "%[2]s/api/v1/search"}]
  query: {type: object, fields: [[query, {type: var, name: query}]]}
  response: {items: hits}
`

// origin is a loopback backend that records what reached it.
type origin struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
}

func newOrigin(t *testing.T, serve func(o *origin, w http.ResponseWriter, r *http.Request)) *origin {
	o := &origin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits = append(o.hits, r.URL.RequestURI())
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		serve(o, w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) got() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.hits...)
}

func (o *origin) reset() {
	o.mu.Lock()
	o.hits = nil
	o.mu.Unlock()
}

// TestAbsoluteURLs: requests go to an absolute URL written in a mapping
// (a second origin the catalog thereby declares) and to URL ids taken from
// rows or arguments, but a URL on an origin the catalog does not declare
// is refused with an error saying so, and nothing reaches that origin.
func TestAbsoluteURLs(t *testing.T) {
	var evil, api *origin
	evil = newOrigin(t, func(_ *origin, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"url":"stolen","id":666}`) })
	search := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/search" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"hits": []any{
			// Algolia names a hit's id objectID (a string); Plasm's
			// identity falls back to it.
			map[string]any{"objectID": "8863", "title": "about " + r.URL.Query().Get("query")},
		}})
	})
	api = newOrigin(t, func(o *origin, w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/chain/" && r.URL.Query().Get("set") == "bad":
			// A row whose URL id points at an origin the catalog does
			// not declare, as a compromised or hostile backend might send.
			json.NewEncoder(w).Encode(map[string]any{"results": []any{
				map[string]any{"url": o.URL + "/chain/1/"},
				map[string]any{"url": evil.URL + "/chain/9/"},
			}})
		case r.URL.Path == "/chain/":
			json.NewEncoder(w).Encode(map[string]any{"results": []any{
				map[string]any{"url": o.URL + "/chain/1/"},
				map[string]any{"url": o.URL + "/chain/2/"},
			}})
		case r.URL.Path == "/species/pikachu/":
			json.NewEncoder(w).Encode(map[string]any{"name": "pikachu", "chain": map[string]any{"url": o.URL + "/chain/10/"}})
		case r.URL.Path == "/species/mew/":
			json.NewEncoder(w).Encode(map[string]any{"name": "mew", "chain": map[string]any{"url": evil.URL + "/chain/151/"}})
		case r.URL.Path == "/species/ditto/":
			json.NewEncoder(w).Encode(map[string]any{"name": "ditto", "chain": nil})
		case strings.HasPrefix(r.URL.Path, "/chain/"):
			var n int
			fmt.Sscanf(r.URL.Path, "/chain/%d/", &n)
			json.NewEncoder(w).Encode(map[string]any{"url": fmt.Sprintf("%s/chain/%d/", o.URL, n), "id": n})
		default:
			http.NotFound(w, r)
		}
	})

	l, err := writeCatalog(t, "twoorigins", map[string]string{
		"domain.yaml":   fmt.Sprintf(absDomain, api.URL, search.URL),
		"mappings.yaml": fmt.Sprintf(absMappings, api.URL, search.URL),
	})
	if err != nil {
		t.Fatal(err)
	}
	// The search origin is a loopback literal in a mapping's path, which
	// egress dials only inside an allowed range (TestIPLiteralOrigins).
	f, err := serveCatalogs(t, server.Config{EgressAllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, l.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	path := f.open(t, "twoorigins", "Chain", "Hit", "Species")

	column := func(res []map[string]any, col string) string {
		var got []string
		for _, r := range rows(t, res[0]) {
			got = append(got, fmt.Sprint(r[col]))
		}
		return strings.Join(got, " ")
	}
	t.Run("literal URL: the second origin", func(t *testing.T) {
		api.reset()
		res := f.runJSON(t, path, `Hit~"rust"[id,title]`)
		if got := column(res, "title"); got != "about rust" {
			t.Fatalf("titles %q", got)
		}
		if got := rows(t, res[0])[0]["id"]; fmt.Sprint(got) != "8863" {
			t.Fatalf("id %v (%T), want the objectID as a number", got, got)
		}
		if got := search.got(); len(got) != 1 || got[0] != "/api/v1/search?query=rust" {
			t.Fatalf("search origin got %v", got)
		}
		if got := api.got(); len(got) != 0 {
			t.Fatalf("http_backend got %v for a search mapped to another origin", got)
		}
	})
	t.Run("URL ids from rows", func(t *testing.T) {
		api.reset()
		res := f.runJSON(t, path, `Chain[url,id]`)
		if got := column(res, "id"); got != "1 2" {
			t.Fatalf("ids %q (rows %v)", got, res)
		}
		want := "/chain/ /chain/1/ /chain/2/"
		got := api.got()
		if len(got) != 3 || got[0] != "/chain/" || strings.Join(sorted(got), " ") != want {
			t.Fatalf("http_backend got %v, want %s", got, want)
		}
	})
	t.Run("URL id as an argument", func(t *testing.T) {
		res := f.runJSON(t, path, fmt.Sprintf(`Chain(%q)[url,id]`, api.URL+"/chain/7/"))
		if got := column(res, "id"); got != "7" {
			t.Fatalf("ids %q", got)
		}
	})
	t.Run("a reference embedded in a row, then its URL id", func(t *testing.T) {
		// Plasm's declared-only cardinality-one relation: the target's id
		// is read from the object under the relation's name.
		api.reset()
		res := f.runJSON(t, path, `Species("pikachu").chain[url,id]`)
		if got := column(res, "id"); got != "10" {
			t.Fatalf("ids %q", got)
		}
		if got := api.got(); len(got) != 3 || got[2] != "/chain/10/" {
			t.Fatalf("http_backend got %v, want the species twice, then /chain/10/", got)
		}
		if got := column(f.runJSON(t, path, `Species("ditto").chain`), "url"); got != "" {
			t.Fatalf("a null reference gave rows %q", got)
		}
	})
	hostile := map[string]string{
		"a reference's URL on an undeclared origin": `Species("mew").chain[url,id]`,
		"a row's URL on an undeclared origin":       `Chain{set="bad"}[url,id]`,
		"an argument's URL on an undeclared origin": fmt.Sprintf(`Chain(%q)[url,id]`, evil.URL+"/chain/9/"),
		"a URL with user info":                      fmt.Sprintf(`Chain(%q)[url,id]`, strings.Replace(api.URL, "://", "://"+strings.TrimPrefix(evil.URL, "http://")+"@", 1)+"/chain/1/"),
	}
	for name, program := range hostile {
		t.Run(name, func(t *testing.T) {
			r := f.do(t, "POST", path, "text/plain", program)
			if r.status == http.StatusOK {
				t.Fatalf("served: %s", r.body)
			}
			if !strings.Contains(r.body, "not declare") && !strings.Contains(r.body, "no user info") {
				t.Fatalf("status %d, body does not say why: %s", r.status, r.body)
			}
			if got := evil.got(); len(got) != 0 {
				t.Fatalf("the undeclared origin received %v", got)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
