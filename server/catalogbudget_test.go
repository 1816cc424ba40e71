package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// hugeCatalog generates a catalog of n entities (deterministic, no
// backend: it is never called).
func hugeCatalog(n int) *catalog.Catalog {
	c := &catalog.Catalog{EntryID: "huge", Version: 1, Entities: map[string]*catalog.Entity{},
		Capabilities: map[string]*catalog.Capability{}, Mappings: map[string]*catalog.Mapping{}, Digest: "huge-digest"}
	for i := range n {
		name := fmt.Sprintf("Thing%05d", i)
		c.Entities[name] = &catalog.Entity{Name: name, IDField: "id", FieldOrder: []string{"id", "title"},
			Description: "a generated entity that only makes the catalog large",
			Fields: map[string]*catalog.Field{
				"id":    {Name: "id", ValueRef: "string"},
				"title": {Name: "title", ValueRef: "string"},
			}}
	}
	return c
}

// TestHugeCatalogCostsOnlyItsUsers: a tenant that can see a 10,000-entity
// catalog runs programs on the demo's catalogs; the huge catalog is never
// installed in any of its instances, so it cannot slow those calls (the
// proof is the install count, not a timing).
func TestHugeCatalogCostsOnlyItsUsers(t *testing.T) {
	f := newFixtureFor(t, func(*demo.Server) server.Config { return server.Config{} }, hugeCatalog(10_000))
	for range 3 {
		if got := rows(t, f.runJSON(t, f.open(t, "tracker", "Issue"), `Issue`)[0]); len(got) == 0 {
			t.Fatal("tracker: no rows")
		}
		if got := rows(t, f.runJSON(t, f.open(t, "kanban", "Team"), `Team("team-1")`)[0]); len(got) != 1 {
			t.Fatalf("kanban: %v", got)
		}
	}
	loads := f.app.CatalogLoads(tenant.Anonymous)
	if loads["tracker"] == 0 || loads["kanban"] == 0 {
		t.Fatalf("the used catalogs were not installed: %v", loads)
	}
	if n := loads["huge"]; n != 0 {
		t.Fatalf("the huge catalog was installed %d times by calls that never named it", n)
	}
	if _, ok := loads["ledger"]; ok {
		t.Fatalf("the unused ledger was installed: %v", loads)
	}
}

// TestCatalogLimits: a catalog over the limits of a tenant that may use it
// is refused when the server loads, with the catalog, tenant, figure and
// limit named; a tenant that may not use it does not hold it back.
func TestCatalogLimits(t *testing.T) {
	backend, err := demo.Start(context.Background(), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	tests := []struct {
		name, limits, catalogs, want string
	}{
		{"entities", "max_catalog_entities: 500", "", `catalog "huge" has 1000 (max_catalog_entities 500) for tenant a`},
		{"bytes", "max_catalog_bytes: 65536", "", `(max_catalog_bytes 65536) for tenant a`},
		{"capabilities", "max_catalog_capabilities: 1", "", `(max_catalog_capabilities 1) for tenant a`}, // the demo's catalogs have several
		{"within limits", "max_catalog_entities: 5000", "", ""},
		{"not the tenant's catalog", "max_catalog_entities: 10", "catalogs: [huge2]", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cats, err := demo.LoadCatalogs(backend.URL())
			if err != nil {
				t.Fatal(err)
			}
			cats = append(cats, hugeCatalog(1000))
			small := hugeCatalog(1)
			small.EntryID = "huge2"
			cats = append(cats, small)
			set, err := tenant.Parse([]byte(`
tenants:
  - id: a
    token_sha256: [` + tenant.Digest(tokenA) + `]
    ` + tc.catalogs + `
    limits: {` + tc.limits + `}
`))
			if err != nil {
				t.Fatal(err)
			}
			app, err := server.New(context.Background(), server.Config{CacheDir: testCacheDir(), Tenants: set}, cats)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				app.Close(context.Background())
				return
			}
			if err == nil {
				app.Close(context.Background())
			}
			if !errors.Is(err, server.ErrCatalogLimit) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
