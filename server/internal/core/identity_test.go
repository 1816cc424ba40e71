package core

import (
	"fmt"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestRegistryIdentity: pages are compared by every key field of a
// compound key, else the catalog's id field, and not at all for an entity
// without identity, one the registry does not know, or an alias two
// entities share (the reviewer's "picks one at random").
func TestRegistryIdentity(t *testing.T) {
	reg, err := NewRegistry([]*catalog.Catalog{{EntryID: "tracker", Auth: catalog.Auth{Scheme: "none"}, Entities: map[string]*catalog.Entity{
		"Issue":    {Name: "Issue", IDField: "number"},
		"Label":    {Name: "Label", IDField: "repo", KeyVars: []string{"repo", "name"}},
		"AuditLog": {Name: "AuditLog"},
		"Pokemon":  {Name: "Pokemon", IDField: "name", Aliases: []string{"Mon", "Thing"}},
		"Move":     {Name: "Move", IDField: "id", Aliases: []string{"Thing"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ entry, entity, want string }{
		{"tracker", "Issue", "[[number]]"},
		{"tracker", "Label", "[[repo name] [repo]]"},
		{"tracker", "AuditLog", "[]"},
		{"tracker", "Mon", "[[name]]"},
		{"tracker", "Thing", "[]"},
		{"tracker", "Nope", "[]"},
		{"other", "Issue", "[]"},
	} {
		for range 20 { // map order differs between walks
			if got := fmt.Sprint(reg.Identity(tc.entry, tc.entity)); got != tc.want {
				t.Fatalf("Identity(%s, %s) = %s, want %s", tc.entry, tc.entity, got, tc.want)
			}
		}
	}
}
