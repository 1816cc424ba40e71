package session

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// TestValuesSerialise is the contract a networked Store (e.g. Redis) relies
// on: every value crossing the Store boundary survives a JSON round trip
// unchanged, so it can be stored as bytes and handed back to any replica.
func TestValuesSerialise(t *testing.T) {
	when := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name string
		v    any
		into any
	}{
		{"logical", Logical{ID: "L", Tenant: "A", Intent: "i", Binding: &Binding{PromptHash: "h", SessionID: "s"}}, &Logical{}},
		{"execute", func() Execute { e := execute("A", "h", "s", "k"); e.LastUsed = when; e.DomainRevision = 3; return e }(), &Execute{}},
		{"run", Run{Tenant: "A", LogicalID: "L", PromptHash: "h", SessionID: "s", RunID: "r", N: 2, Program: "e1", Created: when,
			Roots: []RunRoot{{Label: "e1", EntryID: "github", Entity: "Repo", PageHandle: "s0_pg1",
				Table: abi.Table{Columns: []string{"id"}, Rows: [][]any{{"a"}, {2.5}, {nil}, {true}}}}}}, &Run{}},
		{"page", Page{Tenant: "A", Scope: "L", N: 4}, &Page{}},
		{"plan commit", PlanCommit{Tenant: "A", Scope: "L", N: 2, PlanHash: "h", Summary: "plan review · 1n 1r → single", Expires: when}, &PlanCommit{}},
		{"operation", Operation{Tenant: "A", Scope: "L", N: 3, Handle: "s0_o3", Program: "e1", Summary: "s", Verdict: "ok",
			State: OpCancelled, CancelRequested: true, Calls: 4, RunN: 0, Error: "", Created: when, Updated: when}, &Operation{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, tc.into); err != nil {
				t.Fatal(err)
			}
			if got := reflect.ValueOf(tc.into).Elem().Interface(); !reflect.DeepEqual(got, tc.v) {
				t.Fatalf("round trip changed the value:\n got %+v\nwant %+v", got, tc.v)
			}
		})
	}
}
