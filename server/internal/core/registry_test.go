package core

import (
	"fmt"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestRegistryOrigins: a catalog's egress allowlist is what it declares —
// http_backend, auth.token_url and absolute URLs written in its mappings'
// paths — each origin once; a URL variable in a path declares nothing.
func TestRegistryOrigins(t *testing.T) {
	lit := func(v string) catalog.Segment { return catalog.Segment{Type: "literal", Value: v} }
	reg, err := NewRegistry([]*catalog.Catalog{{
		EntryID:     "hn",
		HTTPBackend: "https://hacker-news.firebaseio.com",
		Auth:        catalog.Auth{Scheme: "oauth2_client_credentials", TokenURL: "https://auth.example.com/token"},
		Mappings: map[string]*catalog.Mapping{
			"item_search":         {Path: []catalog.Segment{lit("https://hn.algolia.com/api/v1/search")}},
			"item_search_by_date": {Path: []catalog.Segment{lit("https://HN.algolia.com:443/api/v1/search_by_date")}},
			"item_get":            {Path: []catalog.Segment{lit("v0"), {Type: "var", Name: "id"}}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(reg.Origins([]string{"hn"})["hn"])
	want := "[https://hacker-news.firebaseio.com:443 https://auth.example.com:443 https://hn.algolia.com:443]"
	if got != want {
		t.Fatalf("origins %s, want %s", got, want)
	}
}
