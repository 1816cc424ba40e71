package core

import (
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestSessionReuseKey pins every field of the SessionReuseKey (seed 000 §3):
// a difference in any of them must open a new execute row, and nothing
// else (seed order, duplicate seeds, secondary-catalog entities' order) may.
func TestSessionReuseKey(t *testing.T) {
	cat := func(id, digest, module string) *catalog.Catalog {
		c := &catalog.Catalog{EntryID: id, Digest: digest}
		if module != "" {
			c.Module = &catalog.Module{SHA256: module}
		}
		return c
	}
	kanban, tracker := cat("kanban", "dk", ""), cat("tracker", "dt", "")
	seeds := func(pairs ...any) []resolvedSeed {
		var out []resolvedSeed
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, resolvedSeed{cat: pairs[i].(*catalog.Catalog), entity: pairs[i+1].(string)})
		}
		return out
	}
	base := reuseKey("a", "", seeds(tracker, "Issue", tracker, "Project", kanban, "Issue"), "L1")
	tests := []struct {
		name      string
		tenant    string
		principal string
		seeds     []resolvedSeed
		lid       string
		same      bool
	}{
		{"identical", "a", "", seeds(tracker, "Issue", tracker, "Project", kanban, "Issue"), "L1", true},
		{"seeds reordered", "a", "", seeds(kanban, "Issue", tracker, "Project", tracker, "Issue"), "L1", true},
		{"duplicate seeds", "a", "", seeds(tracker, "Project", kanban, "Issue", tracker, "Issue", tracker, "Project"), "L1", true},
		// The primary is kanban (lexicographically first); tracker entities
		// are secondary and federate after the open.
		{"secondary entities differ", "a", "", seeds(tracker, "Issue", kanban, "Issue"), "L1", true},
		{"other tenant", "b", "", seeds(tracker, "Issue", tracker, "Project", kanban, "Issue"), "L1", false},
		{"other principal (delegated)", "a", "alice", seeds(tracker, "Issue", tracker, "Project", kanban, "Issue"), "L1", false},
		{"other logical session", "a", "", seeds(tracker, "Issue", tracker, "Project", kanban, "Issue"), "L2", false},
		{"no logical session (HTTP)", "a", "", seeds(tracker, "Issue", tracker, "Project", kanban, "Issue"), "", false},
		{"other primary entities", "a", "", seeds(tracker, "Issue", kanban, "Issue", kanban, "Team"), "L1", false},
		{"other primary catalog", "a", "", seeds(tracker, "Issue", tracker, "Project"), "L1", false},
		{"other catalog digest", "a", "", seeds(tracker, "Issue", cat("kanban", "dk2", ""), "Issue"), "L1", false},
		{"vendor module pinned", "a", "", seeds(tracker, "Issue", cat("kanban", "dk", "m1"), "Issue"), "L1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := reuseKey(tc.tenant, tc.principal, tc.seeds, tc.lid)
			if (got == base) != tc.same {
				t.Fatalf("key equal to base = %v, want %v", got == base, tc.same)
			}
		})
	}
	if p := primaryEntry(seeds(tracker, "Issue", kanban, "Issue")); p != "kanban" {
		t.Fatalf("primary = %s, want the lexicographically first catalog", p)
	}
	if a, b := reuseKey("a", "", seeds(tracker, "Issue"), ""), reuseKey("a", "", seeds(cat("tracker", "dt", "m2"), "Issue"), ""); a == b {
		t.Fatal("vendor module digest is not part of the key")
	}
}

// TestOpenScope: an HTTP open (no logical session) is scoped by its
// intent and its set of ranked capabilities, which decide the mutators a
// session teaches; an MCP open by its logical session alone.
func TestOpenScope(t *testing.T) {
	base := openScope("", "read issues", []string{"issue_create", "issue_update"})
	tests := []struct {
		name, logical, intent string
		ranked                []string
		same                  bool
	}{
		{"identical", "", "read issues", []string{"issue_create", "issue_update"}, true},
		{"ranked reordered and repeated", "", "read issues", []string{"issue_update", "issue_create", "issue_update"}, true},
		{"other intent", "", "create an issue", []string{"issue_create", "issue_update"}, false},
		{"no intent", "", "", []string{"issue_create", "issue_update"}, false},
		{"fewer ranked", "", "read issues", []string{"issue_create"}, false},
		{"ranked joined differently", "", "read issues", []string{"issue_create\x00issue_update"}, false},
		{"intent holding a separator", "", "read issues\x00issue_create", []string{"issue_update"}, false},
		{"a logical session", "L1", "read issues", []string{"issue_create", "issue_update"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := openScope(tc.logical, tc.intent, tc.ranked); (got == base) != tc.same {
				t.Fatalf("scope equal to base = %v, want %v", got == base, tc.same)
			}
		})
	}
	if openScope("L1", "a", nil) != openScope("L1", "b", []string{"x"}) {
		t.Error("an MCP open's scope depends on more than its logical session")
	}
}
