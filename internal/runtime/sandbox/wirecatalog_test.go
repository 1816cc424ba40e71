package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestMalformedWireCatalogRefused: a catalog the loader would never
// build, sent across the boundary to the real engine (a field order
// naming a field the entity lacks made the planner panic), is refused at
// load with a catalog error naming the place, and a program over it is
// refused the same way, never answered with an internal error.
func TestMalformedWireCatalogRefused(t *testing.T) {
	cat := fixture.Catalog(t, "tracker")
	cat.Entities["Issue"].FieldOrder = append(cat.Entities["Issue"].FieldOrder, "ghost")
	eng := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Loads: CatalogLoads([]*catalog.Catalog{cat})}))
	defer eng.Close()
	_, err := eng.PlanWith(context.Background(), &abi.PlanRequest{Program: `Project("p1").^Issue`, Entries: []string{cat.EntryID}}, nil)
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Code != abi.CodeCatalog || !strings.Contains(ae.Message, `entity Issue, field_order: names "ghost"`) {
		t.Fatalf("err = %v, want a catalog error naming Issue's field_order", err)
	}
}
