package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	shared "github.com/plasmd/plasmd/internal/fixture"
)

// TestEmbeddedCardinality runs programs over the shared embedded fixture
// against a loopback backend whose answers put null, nothing, an object
// or an array where a relation's rows are: a cardinality-one relation
// that is null or missing has no related row (an empty result, as a hop
// from a parent without its key), an array where one object is declared
// is a backend-response problem naming the relation and the path, and
// cardinality many still reads arrays as rows.
func TestEmbeddedCardinality(t *testing.T) {
	items := map[string]any{
		"i1": map[string]any{"id": "i1", "title": "one",
			"summary": map[string]any{"id": "s1", "headline": "H", "detail": map[string]any{"id": "d1", "body": "nested"}},
			"author":  map[string]any{"login": "ann", "name": "Ann"},
			"lines": []any{
				map[string]any{"id": "l1", "meta": map[string]any{"owner": map[string]any{"id": "o1", "body": "b"}},
					"notes": []any{map[string]any{"id": "n1"}, map[string]any{"id": "n2"}}},
				map[string]any{"id": "l2", "meta": map[string]any{"owner": nil}},
				map[string]any{"id": "l3"},
			}},
		"i2": map[string]any{"id": "i2", "title": "nulls", "summary": nil, "lines": []any{map[string]any{"id": "l4", "meta": nil}}},
		"i3": map[string]any{"id": "i3", "title": "missing"},
		"i4": map[string]any{"id": "i4", "title": "arrays",
			"summary": []any{map[string]any{"id": "s4"}, map[string]any{"id": "s5"}},
			"author":  []any{map[string]any{"login": "bob"}},
			"lines":   []any{map[string]any{"id": "l5", "meta": map[string]any{"owner": []any{map[string]any{"id": "o5"}}}}}},
		"i5": map[string]any{"id": "i5", "title": "deep array", "summary": map[string]any{"id": "s6", "detail": []any{}}},
	}
	api := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/items/")
		if it, found := items[id]; ok && found {
			json.NewEncoder(w).Encode(it)
			return
		}
		if login, ok := strings.CutPrefix(r.URL.Path, "/users/"); ok {
			json.NewEncoder(w).Encode(map[string]any{"login": login, "name": strings.ToUpper(login)})
			return
		}
		http.NotFound(w, r)
	})
	files := map[string]string{}
	for _, name := range []string{"domain.yaml", "mappings.yaml"} {
		b, err := os.ReadFile(shared.Path(t, "catalogs", "embedded", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	f := catalogFixture(t, "embedded", files, api.URL)
	path := f.open(t, "embedded", "Item")

	ok := []struct {
		program, col, want string // want: the col values of the one root's rows
	}{
		{`Item("i1").summary.detail`, "body", "nested"},
		{`Item("i1").author[login]`, "login", "ann"},
		{`Item("i1").lines.notes`, "id", "n1 n2"},
		{`Item("i1").lines.owner`, "id", "o1"},
		// Null or missing: no related row, and no error.
		{`Item("i2").summary`, "id", ""},
		{`Item("i2").summary.detail`, "id", ""},
		{`Item("i3").summary`, "id", ""},
		{`Item("i3").author[login]`, "login", ""},
		{`Item("i2").lines.owner`, "id", ""},
		{`Item("i3").lines`, "id", ""},
	}
	for _, tt := range ok {
		res := f.runJSON(t, path, tt.program)
		if len(res) != 1 {
			t.Fatalf("%s: %d roots", tt.program, len(res))
		}
		var got []string
		for _, r := range rows(t, res[0]) {
			got = append(got, fmt.Sprint(r[tt.col]))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%s: %s = %q, want %q", tt.program, tt.col, g, tt.want)
		}
	}

	refused := []struct{ program, want string }{
		{`Item("i4").summary`, "relation summary: summary is declared cardinality one, but item 1 of the answer has an array of 2 at summary"},
		{`Item("i4").author[login]`, "relation author: author is declared cardinality one, but item 1 of the answer has an array of 1 at author"},
		{`Item("i4").lines.owner`, "relation lines.owner: owner is declared cardinality one, but item 1 of the answer has an array of 1 at lines.*.meta.owner"},
		{`Item("i5").summary.detail`, "relation summary.detail: detail is declared cardinality one, but item 1 of the answer has an array of 0 at summary.detail"},
	}
	for _, tt := range refused {
		r := f.do(t, "POST", path, "text/plain", tt.program, "Accept", "application/json")
		var p struct {
			Type, Detail, Hint string
		}
		json.Unmarshal([]byte(r.body), &p)
		if r.status != http.StatusBadGateway || !strings.HasSuffix(p.Type, "backend-response") || !strings.Contains(r.body, tt.want) || !strings.Contains(r.body, "declare the relation cardinality many") {
			t.Errorf("%s: %d %s\nwant 502 backend-response containing %q", tt.program, r.status, r.body, tt.want)
		}
	}
}
