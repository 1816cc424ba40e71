package lang

import (
	"slices"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Test catalogs: tracker and kanban both define Issue and User, so bare
// names collide on purpose.

func fields(names ...string) (map[string]*catalog.Field, []string) {
	m := map[string]*catalog.Field{}
	var order []string
	for i := 0; i < len(names); i += 2 {
		m[names[i]] = &catalog.Field{Name: names[i], ValueRef: names[i+1]}
		order = append(order, names[i])
	}
	return m, order
}

func entity(name, id string, fs ...string) *catalog.Entity {
	m, order := fields(fs...)
	return &catalog.Entity{Name: name, IDField: id, Fields: m, FieldOrder: order}
}

func param(name, ref string, required bool, role string) catalog.Parameter {
	return catalog.Parameter{Name: name, ValueRef: ref, Required: required, Role: role}
}

func capability(name, kind, ent string, ps ...catalog.Parameter) *catalog.Capability {
	return &catalog.Capability{Name: name, Kind: kind, Entity: ent, Parameters: ps}
}

func rel(name, target, card string, m catalog.Materialize) *catalog.Relation {
	return &catalog.Relation{Name: name, Target: target, Cardinality: card, Materialize: m}
}

func trackerCatalog() *catalog.Catalog {
	c := &catalog.Catalog{
		EntryID: "tracker", Version: 1,
		RegistryAliases: []string{"trk"},
		Values: map[string]*catalog.Value{
			"str":    {Type: "string"},
			"id":     {Type: "string"},
			"status": {Type: "select", AllowedValues: []string{"open", "closed"}},
			"score":  {Type: "number"},
			"count":  {Type: "integer"},
			"flag":   {Type: "boolean"},
			// References, for .^Entity and Foreign.field predicates.
			"project_ref": {Type: "entity_ref", Target: "Project"},
			"issue_ref":   {Type: "entity_ref", Target: "Issue"},
		},
		Entities:     map[string]*catalog.Entity{},
		Capabilities: map[string]*catalog.Capability{},
	}
	project := entity("Project", "id", "id", "id", "name", "str", "archived", "flag")
	project.Relations = map[string]*catalog.Relation{
		"issues": rel("issues", "Issue", "many", catalog.Materialize{Kind: catalog.QueryScoped, Capability: "issue_query", Param: "project_id"}),
		// lead is embedded in the project's get with only some of its fields.
		"lead": rel("lead", "User", "one", catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "lead"}}}),
	}
	issue := entity("Issue", "id", "id", "id", "project_id", "project_ref", "title", "str", "status", "status",
		"assignee_id", "id", "score", "score", "votes", "count", "body", "str")
	issue.Relations = map[string]*catalog.Relation{
		"comments": rel("comments", "Comment", "many", catalog.Materialize{Kind: catalog.QueryScoped, Capability: "comment_query", Param: "issue_id"}),
		"labels": rel("labels", "Label", "many", catalog.Materialize{Kind: catalog.FromParentGet,
			Path: []catalog.PathStep{{Key: "labels"}, {Wildcard: true}}}),
		"assignee": rel("assignee", "User", "one", catalog.Materialize{Kind: catalog.QueryScopedBindings, Capability: "user_query",
			Bindings: map[string]string{"user_id": "assignee_id", "project": "project_id"}}),
	}
	issue.RelOrder = []string{"comments", "labels", "assignee"}
	c.Entities["Project"] = project
	c.Entities["Issue"] = issue
	c.Entities["User"] = entity("User", "id", "id", "id", "login", "str", "name", "str")
	c.Entities["Comment"] = entity("Comment", "id", "id", "id", "issue_id", "issue_ref", "body", "str", "author_id", "id")
	c.Entities["Label"] = entity("Label", "name", "name", "str", "color", "str")
	c.Entities["Node"] = &catalog.Entity{Name: "Node", Abstract: true, Fields: map[string]*catalog.Field{}}
	c.Entities["Repo"] = &catalog.Entity{Name: "Repo", KeyVars: []string{"owner", "name"},
		Fields:     map[string]*catalog.Field{"owner": {Name: "owner", ValueRef: "str"}, "name": {Name: "name", ValueRef: "str"}, "stars": {Name: "stars", ValueRef: "count"}},
		FieldOrder: []string{"owner", "name", "stars"}}

	// Member is keyed by login and its mappings name {login}, not {id}.
	member := entity("Member", "login", "login", "str", "name", "str")
	member.Relations = map[string]*catalog.Relation{
		"badges": rel("badges", "Label", "many", catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "badges"}, {Wildcard: true}}}),
	}
	c.Entities["Member"] = member
	c.Mappings = map[string]*catalog.Mapping{
		"member_get":     {Method: "GET", Path: []catalog.Segment{{Type: "literal", Value: "members"}, {Type: "var", Name: "login"}}},
		"member_suspend": {Method: "POST", Path: []catalog.Segment{{Type: "literal", Value: "members"}, {Type: "var", Name: "login"}, {Type: "literal", Value: "suspend"}}},
		"member_rename": {Method: "PATCH", Path: []catalog.Segment{{Type: "literal", Value: "members"}},
			Body: &catalog.Expr{Type: catalog.ExprObject, Fields: []catalog.ObjectKV{{Key: "who", Value: &catalog.Expr{Type: catalog.ExprVar, Name: "login"}}}}},
	}
	for _, cp := range []*catalog.Capability{
		capability("member_query", catalog.KindQuery, "Member"),
		capability("member_get", catalog.KindGet, "Member"),
		capability("member_suspend", catalog.KindAction, "Member"),
		capability("member_rename", catalog.KindUpdate, "Member", param("name", "str", true, "")),
		capability("project_query", catalog.KindQuery, "Project"),
		capability("project_get", catalog.KindGet, "Project", param("id", "id", true, "")),
		capability("issue_query", catalog.KindQuery, "Issue",
			param("project_id", "id", false, ""), param("status", "status", false, ""), param("assignee_id", "id", false, "")),
		capability("issue_search", catalog.KindSearch, "Issue", param("project_id", "id", false, ""), param("q", "str", true, catalog.RoleSearch)),
		capability("issue_get", catalog.KindGet, "Issue", param("id", "id", true, "")),
		capability("issue_create", catalog.KindCreate, "Issue",
			param("project_id", "id", true, ""), param("title", "str", true, ""), param("body", "str", false, ""), param("assignee_id", "id", false, "")),
		capability("issue_update", catalog.KindUpdate, "Issue",
			param("id", "id", true, ""), param("title", "str", false, ""), param("status", "status", false, ""), param("body", "str", false, "")),
		capability("issue_delete", catalog.KindDelete, "Issue", param("id", "id", true, "")),
		capability("issue_close", catalog.KindAction, "Issue", param("id", "id", true, "")),
		capability("issue_add_label", catalog.KindAction, "Issue", param("id", "id", true, ""), param("label", "str", true, "")),
		capability("user_query", catalog.KindQuery, "User", param("user_id", "id", false, ""), param("project", "id", false, "")),
		capability("user_get", catalog.KindGet, "User", param("id", "id", true, "")),
		capability("comment_query", catalog.KindQuery, "Comment", param("issue_id", "issue_ref", true, "")),
		capability("comment_create", catalog.KindCreate, "Comment", param("issue_id", "id", true, ""), param("body", "str", true, "")),
		capability("repo_get", catalog.KindGet, "Repo", param("owner", "str", true, ""), param("name", "str", true, "")),
		// A search that declares nothing to carry the phrase (a catalog defect
		// the planner must refuse rather than run as an unfiltered list).
		capability("label_search", catalog.KindSearch, "Label"),
		capability("repo_star", catalog.KindAction, "Repo", param("owner", "str", true, ""), param("name", "str", true, "")),
	} {
		c.Capabilities[cp.Name] = cp
	}
	c.Capabilities["issue_close"].Output = &catalog.Output{Type: "side_effect"}
	// Lists leave out the long or costly fields; the gets return them.
	listed := []string{"id", "project_id", "title", "status", "assignee_id", "score", "votes"}
	c.Capabilities["issue_query"].Provides = listed
	c.Capabilities["issue_search"].Provides = listed
	c.Capabilities["issue_get"].Provides = append(slices.Clone(listed), "body")
	c.Capabilities["user_query"].Provides = []string{"id", "name"}
	return c
}

func kanbanCatalog() *catalog.Catalog {
	c := &catalog.Catalog{
		EntryID: "kanban", Version: 1,
		Values: map[string]*catalog.Value{"str": {Type: "string"}},
		Entities: map[string]*catalog.Entity{
			"Team":  entity("Team", "id", "id", "str", "name", "str"),
			"Issue": entity("Issue", "id", "id", "str", "team_id", "str", "title", "str", "state", "str"),
			"User":  entity("User", "id", "id", "str", "name", "str"),
			"Board": entity("Board", "id", "id", "str", "team_id", "str"),
		},
		Capabilities: map[string]*catalog.Capability{},
	}
	for _, cp := range []*catalog.Capability{
		capability("team_query", catalog.KindQuery, "Team"),
		capability("issue_query", catalog.KindQuery, "Issue", param("team_id", "str", true, "")),
		capability("issue_query_mine", catalog.KindQuery, "Issue", param("team_id", "str", true, ""), param("state", "str", false, "")),
		capability("issue_get", catalog.KindGet, "Issue", param("id", "str", true, "")),
		capability("issue_close", catalog.KindAction, "Issue", param("id", "str", true, "")),
		capability("user_get", catalog.KindGet, "User", param("id", "str", true, "")),
		capability("board_query", catalog.KindQuery, "Board", param("team_id", "str", true, "")),
	} {
		c.Capabilities[cp.Name] = cp
	}
	return c
}

func testCatalogs() map[string]*catalog.Catalog {
	return map[string]*catalog.Catalog{"tracker": trackerCatalog(), "kanban": kanbanCatalog()}
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
			{EntryID: "tracker", Name: "id", ValueRef: "id"}, {EntryID: "tracker", Name: "project_id", ValueRef: "id"},
			{EntryID: "tracker", Name: "status", ValueRef: "status"}, {EntryID: "tracker", Name: "title", ValueRef: "str"},
			{EntryID: "tracker", Name: "label", ValueRef: "str"},
		},
		Relations: []symbol.Relation{
			{EntryID: "tracker", Entity: "Issue", Name: "comments"}, {EntryID: "tracker", Entity: "Issue", Name: "labels"},
			{EntryID: "tracker", Entity: "Project", Name: "issues"},
		},
		Values: []symbol.Value{{EntryID: "tracker", Key: "status"}},
	})
	return m
}
