// Package teachingtest builds small in-memory catalogs for tests of the
// teaching and discovery packages: a tracker-like REST API and a kanban-like
// one that share the entity names Issue and User. They are built in Go so
// the tests depend on the catalog model only, not on the directory loader.
package teachingtest

import (
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Tracker returns a fresh tracker-like catalog (entry id "tracker"):
// Project, Issue, User, Comment and Label.
func Tracker() *catalog.Catalog {
	c := &catalog.Catalog{
		EntryID:     "tracker",
		Version:     1,
		Description: "Issue tracker with projects, issues, comments and labels",
		HTTPBackend: "https://tracker.example.test/api",
		Auth:        catalog.Auth{Scheme: "bearer_token", Env: "TRACKER_TOKEN"},
		Values:      trackerValues(),
		Entities: map[string]*catalog.Entity{
			"Project": {
				Name: "Project", IDField: "id", Description: "A project grouping issues",
				Fields: fields(
					field("id", "project_id", true),
					field("name", "project_name", true),
				),
				FieldOrder: []string{"id", "name"},
				Relations: map[string]*catalog.Relation{
					"issues": {Name: "issues", Target: "Issue", Cardinality: "many", Description: "Issues filed in the project",
						Materialize: catalog.Materialize{Kind: catalog.QueryScoped, Capability: "issue_query", Param: "project_id"}},
				},
				RelOrder: []string{"issues"},
			},
			"Issue": {
				Name: "Issue", IDField: "id", Description: "A bug report or task",
				Fields: fields(
					field("id", "issue_id", true),
					field("title", "issue_title", true),
					field("body", "issue_body", false),
					field("status", "issue_status", true),
					field("project_id", "project_id", true),
					field("assignee_id", "user_login", false),
					field("created_at", "timestamp", true),
				),
				FieldOrder: []string{"id", "title", "body", "status", "project_id", "assignee_id", "created_at"},
				Relations: map[string]*catalog.Relation{
					"comments": {Name: "comments", Target: "Comment", Cardinality: "many", Description: "Discussion on the issue",
						Materialize: catalog.Materialize{Kind: catalog.QueryScoped, Capability: "comment_query", Param: "issue_id"}},
					"labels": {Name: "labels", Target: "Label", Cardinality: "many", Description: "Labels attached to the issue",
						Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "labels"}, {Wildcard: true}}}},
					"assignee": {Name: "assignee", Target: "User", Cardinality: "one", Description: "Who works on it",
						Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "assignee"}}}},
				},
				RelOrder:    []string{"comments", "labels", "assignee"},
				PrimaryRead: "issue_get",
			},
			"User": {
				Name: "User", IDField: "login", Description: "A person with an account",
				Fields: fields(
					field("login", "user_login", true),
					field("name", "user_name", false),
				),
				FieldOrder: []string{"login", "name"},
			},
			"Comment": {
				Name: "Comment", IDField: "id", Description: "A comment on an issue",
				Fields: fields(
					field("id", "comment_id", true),
					field("body", "comment_body", true),
					field("author_id", "user_login", true),
					field("created_at", "timestamp", true),
				),
				FieldOrder: []string{"id", "body", "author_id", "created_at"},
				Relations: map[string]*catalog.Relation{
					"author": {Name: "author", Target: "User", Cardinality: "one", Description: "Who wrote it",
						Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "author"}}}},
				},
				RelOrder: []string{"author"},
			},
			"Label": {
				Name: "Label", IDField: "name", Description: "A coloured tag",
				Fields: fields(
					field("name", "label_name", true),
					field("color", "label_color", false),
				),
				FieldOrder: []string{"name", "color"},
			},
		},
		Capabilities: trackerCapabilities(),
	}
	c.Mappings = restMappings(c, map[string]string{
		"project_query": "GET projects", "project_get": "GET projects/{id}",
		"issue_query": "GET projects/{project_id}/issues", "issue_search": "GET search/issues",
		"issue_get": "GET issues/{id}", "issue_create": "POST projects/{project_id}/issues",
		"issue_update": "PATCH issues/{id}", "issue_delete": "DELETE issues/{id}",
		"issue_close": "POST issues/{id}/close", "issue_add_label": "POST issues/{id}/labels",
		"user_get": "GET users/{login}", "user_search": "GET search/users",
		"comment_query": "GET issues/{issue_id}/comments", "comment_create": "POST issues/{issue_id}/comments",
		"comment_delete": "DELETE comments/{id}",
	})
	return c
}

// trackerValues are Tracker's value domains.
func trackerValues() map[string]*catalog.Value {
	return map[string]*catalog.Value{
		"project_id":    {Type: "integer", Description: "Project number"},
		"project_name":  {Type: "string", StringSemantics: "short", Description: "Project name"},
		"issue_id":      {Type: "integer", Description: "Issue number"},
		"issue_title":   {Type: "string", StringSemantics: "short", Description: "One-line summary"},
		"issue_body":    {Type: "string", StringSemantics: "markdown", Description: "Issue text"},
		"issue_status":  {Type: "select", AllowedValues: []string{"open", "closed"}, Description: "Issue state"},
		"user_login":    {Type: "string", Description: "User login name"},
		"user_name":     {Type: "string", Description: "Display name"},
		"comment_id":    {Type: "integer", Description: "Comment number"},
		"comment_body":  {Type: "string", StringSemantics: "markdown", Description: "Comment text"},
		"label_name":    {Type: "string", Description: "Label name"},
		"label_color":   {Type: "string", Description: "Hex colour without #"},
		"label_names":   {Type: "array", ItemsRef: "label_name", Description: "Label names"},
		"timestamp":     {Type: "date", ValueFormat: "rfc3339", Description: "Point in time"},
		"search_phrase": {Type: "string", Description: "Words to search for"},
	}
}

// trackerCapabilities are Tracker's capabilities: reads, writes and actions
// over projects, issues, users and comments.
func trackerCapabilities() map[string]*catalog.Capability {
	return map[string]*catalog.Capability{
		"project_query": {Name: "project_query", Kind: catalog.KindQuery, Entity: "Project", Description: "List projects"},
		"project_get": {Name: "project_get", Kind: catalog.KindGet, Entity: "Project", Description: "Get a project",
			Parameters: []catalog.Parameter{{Name: "id", ValueRef: "project_id", Required: true}}},
		"issue_query": {Name: "issue_query", Kind: catalog.KindQuery, Entity: "Issue", Description: "List issues of a project",
			Parameters: []catalog.Parameter{
				{Name: "project_id", ValueRef: "project_id", Required: true, Role: catalog.RoleScope},
				{Name: "status", ValueRef: "issue_status"},
				{Name: "assignee_id", ValueRef: "user_login"},
			}},
		"issue_search": {Name: "issue_search", Kind: catalog.KindSearch, Entity: "Issue", Description: "Full-text search over issues",
			Parameters: []catalog.Parameter{{Name: "q", ValueRef: "search_phrase", Required: true, Role: catalog.RoleSearch}}},
		"issue_get": {Name: "issue_get", Kind: catalog.KindGet, Entity: "Issue", Description: "Get one issue",
			Parameters: []catalog.Parameter{{Name: "id", ValueRef: "issue_id", Required: true}}},
		"issue_create": {Name: "issue_create", Kind: catalog.KindCreate, Entity: "Issue", Description: "File an issue in a project",
			Parameters: []catalog.Parameter{
				{Name: "project_id", ValueRef: "project_id", Required: true},
				{Name: "title", ValueRef: "issue_title", Required: true},
				{Name: "body", ValueRef: "issue_body"},
				{Name: "assignee_id", ValueRef: "user_login"},
				{Name: "labels", ValueRef: "label_names"},
			}},
		"issue_update": {Name: "issue_update", Kind: catalog.KindUpdate, Entity: "Issue", Description: "Edit an issue's title, text, status or assignee",
			Parameters: []catalog.Parameter{
				{Name: "id", ValueRef: "issue_id", Required: true},
				{Name: "title", ValueRef: "issue_title"},
				{Name: "body", ValueRef: "issue_body"},
				{Name: "status", ValueRef: "issue_status"},
				{Name: "assignee_id", ValueRef: "user_login"},
			}},
		"issue_delete": {Name: "issue_delete", Kind: catalog.KindDelete, Entity: "Issue", Description: "Delete an issue for good"},
		"issue_close": {Name: "issue_close", Kind: catalog.KindAction, Entity: "Issue", Description: "Close an issue",
			Parameters: []catalog.Parameter{{Name: "reason", ValueRef: "issue_body"}},
			Provides:   []string{"id", "status"}},
		"issue_add_label": {Name: "issue_add_label", Kind: catalog.KindAction, Entity: "Issue", Description: "Attach a label to an issue",
			Parameters: []catalog.Parameter{{Name: "label", ValueRef: "label_name", Required: true}},
			Output:     &catalog.Output{Type: "side_effect", Description: "The label is attached"}},
		"user_get": {Name: "user_get", Kind: catalog.KindGet, Entity: "User", Description: "Get a user by login",
			Parameters: []catalog.Parameter{{Name: "login", ValueRef: "user_login", Required: true}}},
		"user_search": {Name: "user_search", Kind: catalog.KindSearch, Entity: "User", Description: "Find users by name",
			Parameters: []catalog.Parameter{{Name: "q", ValueRef: "search_phrase", Required: true, Role: catalog.RoleSearch}}},
		"comment_query": {Name: "comment_query", Kind: catalog.KindQuery, Entity: "Comment", Description: "List comments on an issue",
			Parameters: []catalog.Parameter{{Name: "issue_id", ValueRef: "issue_id", Required: true, Role: catalog.RoleScope}}},
		"comment_create": {Name: "comment_create", Kind: catalog.KindCreate, Entity: "Comment", Description: "Post a comment on an issue",
			Parameters: []catalog.Parameter{
				{Name: "issue_id", ValueRef: "issue_id", Required: true},
				{Name: "body", ValueRef: "comment_body", Required: true},
			}},
		"comment_delete": {Name: "comment_delete", Kind: catalog.KindDelete, Entity: "Comment", Description: "Remove a comment"},
	}
}

// Kanban returns a fresh kanban-like catalog (entry id "kanban"): Team,
// Issue and User. Its Issue and User collide by name with Tracker's.
func Kanban() *catalog.Catalog {
	c := &catalog.Catalog{
		EntryID:     "kanban",
		Version:     1,
		Description: "Kanban boards for teams",
		HTTPBackend: "https://kanban.example.test/graphql",
		Auth:        catalog.Auth{Scheme: "api_key_header", Header: "Authorization", Env: "KANBAN_KEY"},
		Values: map[string]*catalog.Value{
			"team_key":    {Type: "string", Description: "Short team key such as ENG"},
			"team_name":   {Type: "string", Description: "Team name"},
			"issue_uuid":  {Type: "uuid", Description: "Issue id"},
			"issue_ident": {Type: "string", Description: "Human identifier such as ENG-12"},
			"title":       {Type: "string", StringSemantics: "short", Description: "Card title"},
			"description": {Type: "string", StringSemantics: "markdown", Description: "Card description"},
			"state":       {Type: "select", AllowedValues: []string{"backlog", "todo", "in_progress", "done"}, Description: "Workflow state"},
			"user_uuid":   {Type: "uuid", Description: "User id"},
			"user_name":   {Type: "string", Description: "Display name"},
			"email":       {Type: "string", Description: "Email address"},
			"phrase":      {Type: "string", Description: "Search words"},
		},
		Entities: map[string]*catalog.Entity{
			"Team": {
				Name: "Team", IDField: "key", Description: "A team owning a board",
				Fields:     fields(field("key", "team_key", true), field("name", "team_name", true)),
				FieldOrder: []string{"key", "name"},
				Relations: map[string]*catalog.Relation{
					"issues": {Name: "issues", Target: "Issue", Cardinality: "many", Description: "Cards on the team's board",
						Materialize: catalog.Materialize{Kind: catalog.QueryScopedBindings, Capability: "issue_query", Bindings: map[string]string{"team_key": "key"}}},
				},
				RelOrder: []string{"issues"},
			},
			"Issue": {
				Name: "Issue", IDField: "id", Description: "A card on a kanban board",
				Fields: fields(
					field("id", "issue_uuid", true),
					field("identifier", "issue_ident", true),
					field("title", "title", true),
					field("description", "description", false),
					field("state", "state", true),
					field("team_key", "team_key", true),
					field("assignee_id", "user_uuid", false),
				),
				FieldOrder: []string{"id", "identifier", "title", "description", "state", "team_key", "assignee_id"},
				Relations: map[string]*catalog.Relation{
					"assignee": {Name: "assignee", Target: "User", Cardinality: "one", Description: "Who owns the card",
						Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "assignee"}}}},
					"team": {Name: "team", Target: "Team", Cardinality: "one", Description: "Board the card is on",
						Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "team"}}}},
				},
				RelOrder: []string{"assignee", "team"},
			},
			"User": {
				Name: "User", IDField: "id", Description: "A workspace member",
				Fields:     fields(field("id", "user_uuid", true), field("name", "user_name", true), field("email", "email", false)),
				FieldOrder: []string{"id", "name", "email"},
			},
		},
		Capabilities: map[string]*catalog.Capability{
			"team_query": {Name: "team_query", Kind: catalog.KindQuery, Entity: "Team", Description: "List teams"},
			"team_get": {Name: "team_get", Kind: catalog.KindGet, Entity: "Team", Description: "Get a team",
				Parameters: []catalog.Parameter{{Name: "key", ValueRef: "team_key", Required: true}}},
			"issue_query": {Name: "issue_query", Kind: catalog.KindQuery, Entity: "Issue", Description: "List a team's cards",
				Parameters: []catalog.Parameter{
					{Name: "team_key", ValueRef: "team_key", Required: true, Role: catalog.RoleScope},
					{Name: "state", ValueRef: "state"},
				}},
			"issue_search": {Name: "issue_search", Kind: catalog.KindSearch, Entity: "Issue", Description: "Search cards by text",
				Parameters: []catalog.Parameter{
					{Name: "query", ValueRef: "phrase", Required: true, Role: catalog.RoleSearch},
					{Name: "team_key", ValueRef: "team_key"},
				}},
			"issue_get": {Name: "issue_get", Kind: catalog.KindGet, Entity: "Issue", Description: "Get a card",
				Parameters: []catalog.Parameter{{Name: "id", ValueRef: "issue_uuid", Required: true}}},
			"issue_create": {Name: "issue_create", Kind: catalog.KindCreate, Entity: "Issue", Description: "Add a card to a team's board",
				Parameters: []catalog.Parameter{
					{Name: "team_key", ValueRef: "team_key", Required: true},
					{Name: "title", ValueRef: "title", Required: true},
					{Name: "description", ValueRef: "description"},
				}},
			"issue_update": {Name: "issue_update", Kind: catalog.KindUpdate, Entity: "Issue", Description: "Move or edit a card",
				Parameters: []catalog.Parameter{
					{Name: "title", ValueRef: "title"},
					{Name: "state", ValueRef: "state"},
				}},
			"issue_archive": {Name: "issue_archive", Kind: catalog.KindAction, Entity: "Issue", Description: "Archive a finished card",
				Output: &catalog.Output{Type: "side_effect", Description: "The card leaves the board"}},
			"user_query": {Name: "user_query", Kind: catalog.KindQuery, Entity: "User", Description: "List workspace members"},
			"user_get": {Name: "user_get", Kind: catalog.KindGet, Entity: "User", Description: "Get a member",
				Parameters: []catalog.Parameter{{Name: "id", ValueRef: "user_uuid", Required: true}}},
		},
	}
	c.Mappings = restMappings(c, map[string]string{
		"team_query": "GET teams", "team_get": "GET teams/{key}",
		"issue_query": "GET teams/{team_key}/issues", "issue_search": "GET issues/search",
		"issue_get": "GET issues/{id}", "issue_create": "POST issues",
		"issue_update": "PATCH issues/{id}", "issue_archive": "POST issues/{id}/archive",
		"user_query": "GET users", "user_get": "GET users/{id}",
	})
	return c
}

// Catalogs returns fresh copies of both catalogs keyed by entry id.
func Catalogs() map[string]*catalog.Catalog {
	t, k := Tracker(), Kanban()
	return map[string]*catalog.Catalog{t.EntryID: t, k.EntryID: k}
}

func field(name, valueRef string, required bool) *catalog.Field {
	return &catalog.Field{Name: name, ValueRef: valueRef, Required: required}
}

func fields(fs ...*catalog.Field) map[string]*catalog.Field {
	out := make(map[string]*catalog.Field, len(fs))
	for _, f := range fs {
		out[f.Name] = f
	}
	return out
}

// restMappings turns "METHOD a/{var}/b" route strings into mappings; reads
// of many rows get a bare-list response, everything else a single object.
func restMappings(c *catalog.Catalog, routes map[string]string) map[string]*catalog.Mapping {
	out := make(map[string]*catalog.Mapping, len(routes))
	for name, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		m := &catalog.Mapping{Method: method, Response: &catalog.Response{Single: true}}
		for _, seg := range strings.Split(path, "/") {
			if v, ok := strings.CutPrefix(seg, "{"); ok {
				m.Path = append(m.Path, catalog.Segment{Type: "var", Name: strings.TrimSuffix(v, "}")})
			} else {
				m.Path = append(m.Path, catalog.Segment{Type: "literal", Value: seg})
			}
		}
		if cp := c.Capabilities[name]; cp != nil && (cp.Kind == catalog.KindQuery || cp.Kind == catalog.KindSearch) {
			m.Response = &catalog.Response{Items: true}
		}
		out[name] = m
	}
	return out
}
