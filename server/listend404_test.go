package server_test

import "testing"

// TestCounter404PastTheEnd: a counter list with no stop_when or cursor
// reads until an empty page (or, with a page size, a short one), and some
// backends (Django REST's "Invalid page", the Rick and Morty API) answer
// the page past the end 404: after a page with rows that 404 ends the
// list. With a fixed per_page the list asks for the next page only after a
// full one, so a list whose rows are a multiple of the page size ends so
// too (before, it was refused). A 404 on the first page is still refused.
func TestCounter404PastTheEnd(t *testing.T) {
	backend := listEndBackend(t, map[string][]listEndPage{
		// listEndBackend answers 404 for pages past the listed ones.
		"/pn?dj":   {{ids: []int{1, 2, 3}}, {ids: []int{4, 5}}},
		"/pn?one":  {{ids: []int{7}}},
		"/pc?full": {{ids: []int{1, 2, 3}}},
		"/pc?two":  {{ids: []int{1, 2, 3}}, {ids: []int{4, 5, 6}}},
	})
	f := catalogFixture(t, "listend", map[string]string{"domain.yaml": listEndDomain, "mappings.yaml": listEndMappings}, backend.URL)
	path := f.open(t, "listend", "Pn", "Pc")
	checkListEnd(t, f, path, []listEndCase{
		{`Pn{set="dj"}.aggregate(n=count)`, "5"},
		{`Pn{set="dj"}.sort(id, desc)[id]`, "5 4 3 2 1"},
		{`Pn{set="one"}[id]`, "7"},
		{`Pn{set="missing"}.aggregate(n=count)`, "refused:404"},
		{`Pc{set="full"}.aggregate(n=count)`, "3"},
		{`Pc{set="two"}.sort(id)[id]`, "1 2 3 4 5 6"},
		{`Pc{set="missing"}.aggregate(n=count)`, "refused:404"},
	})
}
