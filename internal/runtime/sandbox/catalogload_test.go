package sandbox

import (
	"context"
	"maps"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestCatalogsLoadOnFirstUse: an instance installs only the catalogs a
// call names (Compile and Decode their entry, Plan its entries), each once
// per digest; a generic Call still gets every catalog.
func TestCatalogsLoadOnFirstUse(t *testing.T) {
	ctx := context.Background()
	tn := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine,
		Loads: CatalogLoads([]*catalog.Catalog{testCatalog("gh"), testCatalog("linear"), testCatalog("jira")})}))
	defer tn.Close()
	steps := []struct {
		name string
		call func() error
		want map[string]uint64
	}{
		{"compile gh", func() error {
			_, err := tn.Compile(ctx, &abi.CompileRequest{EntryID: "gh", Capability: "missing"})
			return err
		}, map[string]uint64{"gh": 1}},
		{"compile gh again", func() error {
			_, err := tn.Compile(ctx, &abi.CompileRequest{EntryID: "gh", Capability: "missing"})
			return err
		}, map[string]uint64{"gh": 1}},
		{"plan linear", func() error {
			_, err := tn.Plan(ctx, &abi.PlanRequest{Program: "Issue", Entries: []string{"linear"}})
			return err
		}, map[string]uint64{"gh": 1, "linear": 1}},
		{"decode linear", func() error {
			_, err := tn.Decode(ctx, &abi.DecodeRequest{EntryID: "linear", Capability: "missing", Status: 200}, []byte(`{}`))
			return err
		}, map[string]uint64{"gh": 1, "linear": 1}},
		{"generic call", func() error {
			_, err := tn.Ping(ctx, []byte("x"))
			return err
		}, map[string]uint64{"gh": 1, "linear": 1, "jira": 1}},
	}
	for _, s := range steps {
		_ = s.call() // guest errors (unknown capability) are fine: the load happened first
		if got := tn.AppliedLoads(); !maps.Equal(got, s.want) {
			t.Fatalf("after %s: loads %v, want %v", s.name, got, s.want)
		}
	}
	if s := tn.Stats(); s.Created != 1 {
		t.Fatalf("one instance expected: %+v", s)
	}
	// A changed catalog is reinstalled on its next use only.
	changed := testCatalog("linear")
	changed.Version = 2
	tn.SetCatalogs([]*catalog.Catalog{testCatalog("gh"), changed, testCatalog("jira")})
	_, _ = tn.Compile(ctx, &abi.CompileRequest{EntryID: "gh", Capability: "missing"})
	if got := tn.AppliedLoads(); got["linear"] != 1 || got["gh"] != 1 {
		t.Fatalf("a call on gh reinstalled something: %v", got)
	}
	_, _ = tn.Compile(ctx, &abi.CompileRequest{EntryID: "linear", Capability: "missing"})
	if got := tn.AppliedLoads(); got["linear"] != 2 {
		t.Fatalf("the changed catalog was not reinstalled on use: %v", got)
	}
}
