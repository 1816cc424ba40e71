package core

import (
	"fmt"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestRegistryIdentity: pages are compared by the catalog's id field, by
// every key field of a compound key, and not at all for an entity without
// identity or one the registry does not know.
func TestRegistryIdentity(t *testing.T) {
	reg, err := NewRegistry([]*catalog.Catalog{{EntryID: "tracker", Auth: catalog.Auth{Scheme: "none"}, Entities: map[string]*catalog.Entity{
		"Issue":    {Name: "Issue", IDField: "number"},
		"Label":    {Name: "Label", IDField: "repo", KeyVars: []string{"repo", "name"}},
		"AuditLog": {Name: "AuditLog"},
		"Pokemon":  {Name: "Pokemon", IDField: "name", Aliases: []string{"Mon"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ entry, entity, want string }{
		{"tracker", "Issue", "[number]"},
		{"tracker", "Label", "[repo name]"},
		{"tracker", "AuditLog", "[]"},
		{"tracker", "Mon", "[name]"},
		{"tracker", "Nope", "[]"},
		{"other", "Issue", "[]"},
	} {
		if got := fmt.Sprint(reg.Identity(tc.entry, tc.entity)); got != tc.want {
			t.Errorf("Identity(%s, %s) = %s, want %s", tc.entry, tc.entity, got, tc.want)
		}
	}
}
