package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

const datesDomain = `version: 1
http_backend: http://dates.invalid
values:
  id: {type: integer}
  name: {type: string}
  created: {type: date, value_format: rfc3339}
  day: {type: date, value_format: iso8601_date}
  ms: {type: date, value_format: unix_ms}
entities:
  Character:
    id_field: id
    fields:
      id: {value_ref: id}
      name: {value_ref: name}
      created: {value_ref: created}
  Issue:
    id_field: id
    fields:
      id: {value_ref: id}
      created_at: {value_ref: created}
      due: {value_ref: day}
      seen: {value_ref: ms}
  Broken:
    id_field: id
    fields:
      id: {value_ref: id}
      created: {value_ref: created}
capabilities:
  character_query: {kind: query, entity: Character}
  issue_query: {kind: query, entity: Issue}
  broken_query: {kind: query, entity: Broken}
`

const datesMappings = `character_query:
  method: GET
  path: [{type: literal, value: characters}]
  response: {items: data}
issue_query:
  method: GET
  path: [{type: literal, value: issues}]
  response: {items: data}
broken_query:
  method: GET
  path: [{type: literal, value: broken}]
  response: {items: data}
`

// TestDateComparisons: the tester's repros end to end, over a loopback
// backend. Every character was created at 2017-11-04T18:48:46.250Z (as
// Rick and Morty's API sends it); as text, created>"…46Z", >="…46.25Z"
// (the same instant) and >"…T20:00:00+02:00" (18:00Z) each kept none of
// the 65. The issue at 11:00Z sorts before "…T12:00:00+02:00" (10:00Z) as
// text and was not counted. A cell that is not a date is refused naming
// the row and field; a literal that is not one is refused at plan time.
func TestDateComparisons(t *testing.T) {
	var chars []map[string]any
	for i := 1; i <= 65; i++ {
		chars = append(chars, map[string]any{"id": i, "name": fmt.Sprint("c", i), "created": "2017-11-04T18:48:46.250Z"})
	}
	bodies := map[string]any{
		"/characters": chars,
		"/issues": []map[string]any{
			{"id": 1, "created_at": "2025-03-20T09:00:00Z", "due": "2025-04-02", "seen": 1742461200000},
			{"id": 2, "created_at": "2025-03-20T10:00:00.000Z", "due": "2025-04-01", "seen": "1742400000000"},
			{"id": 3, "created_at": "2025-03-20T11:00:00Z", "due": "2025-04-03", "seen": 1742468400000},
			{"id": 4, "created_at": "2025-03-20T12:00:00+02:00", "due": nil, "seen": nil},
			{"id": 5, "created_at": "2025-03-21T08:00:00Z", "due": "2025-03-30", "seen": 1742544000000},
		},
		"/broken": []map[string]any{
			{"id": 1, "created": "2017-11-04T18:48:46Z"},
			{"id": 2, "created": "seven"},
		},
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": body})
	}))
	defer backend.Close()
	f := catalogFixture(t, "dates", map[string]string{"domain.yaml": datesDomain, "mappings.yaml": datesMappings}, backend.URL)
	path := f.open(t, "dates", "Character", "Issue", "Broken")
	checkListEnd(t, f, path, []listEndCase{
		{`Character.limit(100).filter{created>"2017-11-04T18:48:46Z"}.aggregate(n=count)`, "65"},
		{`Character.limit(100).filter{created>="2017-11-04T18:48:46.25Z"}.aggregate(n=count)`, "65"},
		{`Character.limit(100).filter{created>"2017-11-04T20:00:00+02:00"}.aggregate(n=count)`, "65"},
		{`Character{created="2017-11-04T20:48:46.25+02:00"}.aggregate(n=count)`, "65"},
		{`Character{created<"2017-11-04"}.aggregate(n=count)`, "0"},
		{`Issue{created_at>"2025-03-20T12:00:00+02:00"}.aggregate(n=count)`, "2"},
		{`Issue{created_at>"2025-03-20T12:00:00+02:00"}.limit(1)[id]`, "3"},
		{`Issue{created_at="2025-03-20T10:00:00Z"}.sort(id)[id]`, "2 4"},
		{`Issue.sort(created_at)[id]`, "1 2 4 3 5"},
		{`Issue.sort(created_at, desc)[id]`, "5 3 2 4 1"},
		{`Issue.sort(due)[id]`, "5 2 1 3 4"},
		{`Issue{due<"2025-04-02"}.sort(id)[id]`, "2 5"},
		{`Issue{seen>=1742461200000}.sort(id)[id]`, "1 3 5"},
		{`Issue{seen<"1742461200000"}.sort(id)[id]`, "2"},
		{`Issue{seen>"2025-03-20T10:00:00Z"}.sort(id)[id]`, "refused:expects a Unix time"},
		{`Issue.aggregate(last=max(created_at))`, "2025-03-21T08:00:00Z"},
		{`Issue.aggregate(first=min(seen))`, "1742400000000"},
		{`Issue.group_by(created_at, n=count).sort(n, desc)[n]`, "2 1 1 1"},
		{`Issue.dedupe(created_at)[id]`, "1 2 3 5"},
		{`Broken{created>"2001-01-01"}.aggregate(n=count)`, `refused:row 2 holds \"seven\" in created`},
		{`Broken.sort(created)[id]`, `refused:row 2 holds \"seven\" in created`},
		{`Character{created>"yesterday"}.aggregate(n=count)`, "refused:expects a date"},
		{`Character.limit(100).filter{created>"yesterday"}.aggregate(n=count)`, "refused:expects a date"},
		// Computed rows keep their date columns: group_by's key, a min.
		{`Issue.group_by(created_at, n=count).filter{created_at>"2025-03-20T12:00:00+02:00"}[n]`, "1 1"},
		{`Issue.group_by(due, first=min(created_at)).sort(first)[due]`, "2025-04-02 2025-04-01 <nil> 2025-04-03 2025-03-30"},
		{`Issue.group_by(created_at, n=count).filter{created_at>"soon"}[n]`, `refused:\"soon\" is not a date`},
	})
}
