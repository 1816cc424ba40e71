package lang

import (
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// testCatalogs are the shared tracker and kanban fixtures
// (testdata/catalogs/{tracker,kanban} at the repository root), loaded
// through the real catalog loader; every call returns fresh copies, so a test
// may change them.
// Both define Issue and User, so bare names collide on purpose.
func testCatalogs() map[string]*catalog.Catalog {
	out := map[string]*catalog.Catalog{}
	for _, name := range []string{fixture.Tracker, fixture.Kanban} {
		c, err := fixture.Load(name)
		if err != nil {
			// Every test needs them; there is no sensible way to go on.
			panic(err)
		}
		out[c.EntryID] = c
	}
	return out
}

// testSymbols is a teaching table as the host would build it: entities
// e1… sorted by (entry, name) in one wave, then methods, slots, relations.
func testSymbols() *symbol.Map {
	m := &symbol.Map{}
	m.Add(symbol.Wave{
		Entities: []symbol.Entity{
			{EntryID: "kanban", Name: "Issue"}, {EntryID: "kanban", Name: "Team"},
			{EntryID: "tracker", Name: "Comment"}, {EntryID: "tracker", Name: "Issue"}, {EntryID: "tracker", Name: "Project"}, {EntryID: "tracker", Name: "User"},
		},
		Methods: []symbol.Method{
			{EntryID: "kanban", Entity: "Issue", Label: "close", Capability: "issue_close"},
			{EntryID: "tracker", Entity: "Issue", Label: "close", Capability: "issue_close"},
			{EntryID: "tracker", Entity: "Issue", Label: "add-label", Capability: "issue_add_label"},
			{EntryID: "tracker", Entity: "Issue", Label: "create", Capability: "issue_create"},
			{EntryID: "tracker", Entity: "Issue", Label: "update", Capability: "issue_update"},
		},
		Slots: []symbol.Slot{
			{EntryID: "tracker", Name: "id", ValueRef: "issue_id"}, {EntryID: "tracker", Name: "project_id", ValueRef: "project_id"},
			{EntryID: "tracker", Name: "status", ValueRef: "issue_status"}, {EntryID: "tracker", Name: "title", ValueRef: "issue_title"},
			{EntryID: "tracker", Name: "label", ValueRef: "label_name"},
		},
		Relations: []symbol.Relation{
			{EntryID: "tracker", Entity: "Issue", Name: "comments"}, {EntryID: "tracker", Entity: "Issue", Name: "labels"},
			{EntryID: "tracker", Entity: "Project", Name: "issues"},
		},
		Values: []symbol.Value{{EntryID: "tracker", Key: "issue_status"}},
	})
	return m
}
