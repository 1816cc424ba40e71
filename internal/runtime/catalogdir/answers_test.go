package catalogdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const answersDomain = `version: 1
http_backend: https://films.example/api
values:
  id: {type: integer}
  text: {type: string}
  year: {type: integer}
entities:
  Film:
    id_field: id
    fields:
      id: {value_ref: id, required: true}
      title: {value_ref: text}
      release_year: {value_ref: year, path: [release, YEARKEY]}
capabilities:
  film_query:
    kind: query
    entity: Film
    parameters:
      - {name: release_year, value_ref: year}
    provides: PROVIDES
  film_get: {kind: get, entity: Film}
`

const answersMappings = `film_query:
  method: GET
  path: [{type: literal, value: films}]
  query:
    type: object
    fields:
      - [year, {type: var, name: QUERYVAR}]
      - [t, {type: if, condition: {exists: EXISTSVAR}, then_expr: {type: const, value: 1}}]
  response:
    items_path: [ITEMSPATH]
    example: {data: [{id: 1, title: Alien, release: {year: 1979}}, {id: 2, title: Heat, release: {year: null}}]}
film_get:
  method: GET
  path: [{type: literal, value: films}, {type: var, name: id}]
  response: single
`

// TestAnswersChecks: catalogs that would load but answer wrongly are
// refused with file:line:col and a hint.
func TestAnswersChecks(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		queryVar, existsVar, provide string
		itemsPath, yearKey           string
		want                         []string // substrings of the error; none: loads
		warn                         bool     // want is a warning: the catalog loads
	}{
		{"clean", "release_year", "title", "[id, title, release_year]", "data", "year", nil, false},
		{"items_path matches nothing", "release_year", "title", "[id, title, release_year]", "films", "year",
			[]string{`mappings.yaml:11:14: film_query.response.example: items_path [films] reaches nothing in the example`}, false},
		{"field path matches nothing", "release_year", "title", "[id, title, release_year]", "data", "yr",
			[]string{`mappings.yaml:11:14: film_query.response.example: field release_year (path release.yr) is in none of the example's rows`}, false},
		{"variable typo", "releaseyear", "title", "[id, title, release_year]",
			"data", "year", []string{`mappings.yaml:7:34: film_query.query: variable "releaseyear" names no parameter`, `did you mean "release_year"`}, false},
		{"exists names nothing", "release_year", "nope", "[id, title, release_year]",
			"data", "year", []string{`mappings.yaml:8:44: film_query.query: variable "nope"`, "a query mapping may use id, input, release_year, title"}, true},
		{"provides without id", "release_year", "title", "[title, release_year]",
			"data", "year", []string{`domain.yaml:20:15: capabilities.film_query.provides: does not include Film's id field "id"`, "add id to provides"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "films")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			d := strings.NewReplacer("PROVIDES", tc.provide, "YEARKEY", tc.yearKey).Replace(answersDomain)
			m := strings.NewReplacer("QUERYVAR", tc.queryVar, "EXISTSVAR", tc.existsVar, "ITEMSPATH", tc.itemsPath).Replace(answersMappings)
			for name, body := range map[string]string{DomainFile: d, MappingsFile: m} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := LoadPathReport(dir)
			switch {
			case tc.want == nil || tc.warn:
				if err != nil {
					t.Fatalf("catalog refused: %v", err)
				}
				if tc.want == nil && len(l.Warnings) > 0 {
					t.Fatalf("clean catalog warned: %v", l.Warnings)
				}
				if tc.want == nil {
					return
				}
				err = l.Warnings
			case err == nil:
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("problem lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
