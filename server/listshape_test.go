package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// listShapeDomain and listShapeMappings are a catalog in the style of many
// public Plasm catalogs (PokeAPI, D&D 5e, Rick and Morty, Discord): query
// mappings with no `response`, whose backends answer either
// {count, next, results: […]} or a bare list.
const listShapeDomain = `version: 1
http_backend: http://shapes.invalid
values:
  id: {type: integer}
  name: {type: string}
entities:
  Planet:
    id_field: id
    fields:
      id: {value_ref: id, required: true}
      name: {value_ref: name}
  Moon:
    id_field: id
    fields:
      id: {value_ref: id, required: true}
      name: {value_ref: name}
  Comet:
    id_field: id
    fields:
      id: {value_ref: id, required: true}
capabilities:
  planet_query: {kind: query, entity: Planet}
  planet_search:
    kind: search
    entity: Planet
    parameters:
      - {name: q, value_ref: name, role: search, required: true}
  planet_get: {kind: get, entity: Planet}
  moon_query: {kind: query, entity: Moon}
  comet_query: {kind: query, entity: Comet}
`

const listShapeMappings = `planet_query:
  method: GET
  path: [{type: literal, value: planet}]
  pagination:
    params:
      page: {counter: 1}
      page_size: {fixed: 20}
planet_search:
  method: GET
  path: [{type: literal, value: planet}, {type: literal, value: search}]
  query: {type: object, fields: [[q, {type: var, name: q}]]}
planet_get:
  method: GET
  path: [{type: literal, value: planet}, {type: var, name: id}]
moon_query:
  method: GET
  path: [{type: literal, value: moon}]
comet_query:
  method: GET
  path: [{type: literal, value: comet}]
`

// TestListWithoutResponseShape: a query or search mapping without
// `response` reads its rows from "results" (Plasm's default), and a bare
// list body is still the rows. Before, an object page was read as one row
// of empty fields: Planet.aggregate(n=count) answered 1 for 47 planets; an
// object answer without "results" is refused rather than read as no rows.
func TestListWithoutResponseShape(t *testing.T) {
	const planets, moons = 47, 5
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		row := func(i int) map[string]any { return map[string]any{"id": i, "name": fmt.Sprintf("p%d", i)} }
		switch r.URL.Path {
		case "/planet":
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			var rs []map[string]any
			for i := (page-1)*20 + 1; i <= min(page*20, planets); i++ {
				rs = append(rs, row(i))
			}
			json.NewEncoder(w).Encode(map[string]any{"count": planets, "next": nil, "results": rs})
		case "/planet/search":
			json.NewEncoder(w).Encode(map[string]any{"count": 2, "results": []any{row(3), row(13)}})
		case "/planet/7":
			json.NewEncoder(w).Encode(row(7))
		case "/comet":
			io.WriteString(w, `{"comets":[{"id":1},{"id":2}]}`) // rows under a key the mapping does not name
		case "/moon":
			var rs []map[string]any
			for i := 1; i <= moons; i++ {
				rs = append(rs, row(i))
			}
			json.NewEncoder(w).Encode(rs) // a bare list
		default:
			http.NotFound(w, r)
		}
	}))
	defer backend.Close()

	f := catalogFixture(t, "shapes", map[string]string{"domain.yaml": listShapeDomain, "mappings.yaml": listShapeMappings}, backend.URL)
	path := f.open(t, "shapes", "Planet", "Moon", "Comet")

	tests := []struct {
		program string
		want    []string // the first column of each row, in order
	}{
		{`Planet.aggregate(n=count)`, []string{strconv.Itoa(planets)}},
		{`Planet.sort(id, desc).limit(2)[id,name]`, []string{"47", "46"}},
		{`Planet[id]`, ids(1, 20)},
		{`Planet~"p1"[id,name]`, []string{"3", "13"}},
		{`Planet(7)[id,name]`, []string{"7"}},
		{`Moon[id,name]`, ids(1, moons)},
		{`Moon.aggregate(n=count)`, []string{strconv.Itoa(moons)}},
	}
	for _, tt := range tests {
		res := f.runJSON(t, path, tt.program)
		var got []string
		cols, _ := res[0]["columns"].([]any)
		for _, r := range rows(t, res[0]) {
			got = append(got, fmt.Sprint(r[cols[0].(string)]))
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.program, got, tt.want)
		}
	}
	// Rows under a key the mapping does not name: refused, never an empty list.
	r := f.do(t, "POST", path, "text/plain", `Comet.aggregate(n=count)`)
	if r.status != http.StatusBadGateway || !strings.Contains(r.body, `has no \"results\" (its keys: comets)`) {
		t.Errorf("Comet: status %d %s, want 502 naming the keys", r.status, r.body)
	}
}

func ids(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}
