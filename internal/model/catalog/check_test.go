package catalog

import (
	"errors"
	"strings"
	"testing"
)

// checkedCatalog is small and valid: every kind of reference Check
// follows appears once.
func checkedCatalog() *Catalog {
	return &Catalog{
		EntryID: "t",
		Values: map[string]*Value{
			"text": {Type: "string"}, "user_ref": {Type: "entity_ref", Target: "User"},
			"texts": {Type: "array", ItemsRef: "text"},
		},
		Entities: map[string]*Entity{
			"Issue": {Name: "Issue", IDField: "id",
				Fields: map[string]*Field{
					"id": {Name: "id", ValueRef: "text"}, "title": {Name: "title", ValueRef: "text"},
					"author": {Name: "author", ValueRef: "user_ref"},
				},
				FieldOrder: []string{"id", "title", "author"},
				Relations: map[string]*Relation{
					"owner":    {Name: "owner", Target: "User", Cardinality: "one", Materialize: Materialize{Kind: FromParentGet, Path: []PathStep{{Key: "owner"}}}},
					"watchers": {Name: "watchers", Target: "User", Cardinality: "many", Materialize: Materialize{Kind: QueryScoped, Capability: "user_query", Param: "issue"}},
				},
				RelOrder:    []string{"owner", "watchers"},
				PrimaryRead: "issue_get",
			},
			"User": {Name: "User", IDField: "login", KeyVars: []string{"login"},
				Fields: map[string]*Field{"login": {Name: "login", ValueRef: "text"}}, FieldOrder: []string{"login"}},
			"Me": {Name: "Me", IDField: "id", Implicit: true, Fields: map[string]*Field{}},
		},
		Capabilities: map[string]*Capability{
			"issue_get":  {Name: "issue_get", Kind: KindGet, Entity: "Issue", Parameters: []Parameter{{Name: "id", ValueRef: "text"}}},
			"user_query": {Name: "user_query", Kind: KindQuery, Entity: "User", Preflight: []PreflightStep{{Kind: PreHydrateTarget, Get: "issue_get"}}},
		},
		Mappings: map[string]*Mapping{
			"issue_get": {Method: "GET", Path: []Segment{{Type: "literal", Value: "issues"}, {Type: "var", Name: "id"}},
				Query: &Expr{Type: ExprObject, Fields: []ObjectKV{{Key: "q", Value: &Expr{Type: ExprVar, Name: "id"}}}}},
			"user_query": {Method: "GET", Pagination: &Pagination{Params: map[string]PageParam{"page": {}}, ParamOrder: []string{"page"}}},
		},
		Views: map[string]*View{
			"board": {Name: "board", Entity: "Issue", Serves: []string{"issue_get"},
				Nodes:     []ViewNode{{ID: "a", Capability: "issue_get"}, {ID: "b", Capability: "user_query", Bind: []ViewBind{{Param: "x", Kind: ViewField, Node: "a"}}}},
				Relations: []ViewRelationOutput{{Relation: "r", Target: "User", Node: "b"}},
				Output:    []ViewOutput{{Field: "n", Kind: ViewRowCount, Node: "a"}}},
		},
	}
}

// TestCheck: each invariant the engine relies on, broken once, is a
// typed error naming where; the valid catalog passes and freezes.
func TestCheck(t *testing.T) {
	deep := &Expr{Type: ExprConst}
	for range maxExprDepth + 2 {
		deep = &Expr{Type: ExprArray, Items: []*Expr{deep}}
	}
	tests := []struct {
		name string
		edit func(c *Catalog)
		want string // "" = valid
	}{
		{"valid", func(*Catalog) {}, ""},
		{"empty catalog", func(c *Catalog) { *c = Catalog{EntryID: "t"} }, ""},
		{"field order names a missing field", func(c *Catalog) { c.Entities["Issue"].FieldOrder[1] = "nope" },
			`entity Issue, field_order: names "nope", which is not declared`},
		{"field order twice", func(c *Catalog) { c.Entities["Issue"].FieldOrder[1] = "id" }, `field_order: names "id" twice`},
		{"field order short", func(c *Catalog) { c.Entities["Issue"].FieldOrder = []string{"id"} }, "field_order: lists 1 of 3"},
		{"no field order is sorted names", func(c *Catalog) { c.Entities["Issue"].FieldOrder = nil }, ""},
		{"null field", func(c *Catalog) { c.Entities["Issue"].Fields["title"] = nil }, "entity Issue, field title: is null"},
		{"field named otherwise", func(c *Catalog) { c.Entities["Issue"].Fields["title"].Name = "x" }, `field title: is named "x" inside`},
		{"id field", func(c *Catalog) { c.Entities["Issue"].IDField = "nope" }, `entity Issue: id_field "nope" is not one of its fields`},
		{"id from elsewhere", func(c *Catalog) { c.Entities["Issue"].IDField, c.Entities["Issue"].IDFrom = "nope", []string{"a"} }, ""},
		{"key vars", func(c *Catalog) { c.Entities["User"].KeyVars = []string{"nope"} }, `key_vars names "nope"`},
		{"primary read", func(c *Catalog) { c.Entities["Issue"].PrimaryRead = "nope" }, `primary_read names capability "nope"`},
		{"null entity", func(c *Catalog) { c.Entities["Me"] = nil }, "entity Me: is null"},
		{"entity named otherwise", func(c *Catalog) { c.Entities["User"].Name = "Person" }, `entity User: is named "Person" inside`},
		{"relation target", func(c *Catalog) { c.Entities["Issue"].Relations["owner"].Target = "Nope" },
			`entity Issue, relation owner: targets entity "Nope"`},
		{"null relation", func(c *Catalog) { c.Entities["Issue"].Relations["owner"] = nil }, "relation owner: is null"},
		{"relation order", func(c *Catalog) { c.Entities["Issue"].RelOrder = []string{"owner", "nope"} }, `relation_order: names "nope"`},
		{"relation capability", func(c *Catalog) { c.Entities["Issue"].Relations["watchers"].Materialize.Capability = "nope" },
			`relation watchers: materialize names capability "nope"`},
		{"relation kind", func(c *Catalog) { c.Entities["Issue"].Relations["watchers"].Materialize.Kind = "teleport" }, `materialize kind "teleport"`},
		{"relation path step", func(c *Catalog) { c.Entities["Issue"].Relations["owner"].Materialize.Path = []PathStep{{}} },
			"materialize path step 1 must be a key or a wildcard"},
		{"null value", func(c *Catalog) { c.Values["texts"] = nil }, "value texts: is null"},
		// Consumers treat a value naming nothing as untyped.
		{"unknown value refs", func(c *Catalog) {
			c.Entities["Issue"].Fields["title"].ValueRef = "nope"
			c.Values["user_ref"].Target = "Nope"
			c.Values["texts"].ItemsRef = "nope"
			c.Capabilities["issue_get"].Parameters[0].ValueRef = "nope"
		}, ""},
		{"capability entity", func(c *Catalog) { c.Capabilities["issue_get"].Entity = "Nope" }, `capability issue_get: is on entity "Nope"`},
		{"null capability", func(c *Catalog) { c.Capabilities["issue_get"] = nil }, "capability issue_get: is null"},
		{"capability named otherwise", func(c *Catalog) { c.Capabilities["issue_get"].Name = "x" }, `is named "x" inside`},
		{"parameter twice", func(c *Catalog) {
			c.Capabilities["issue_get"].Parameters = append(c.Capabilities["issue_get"].Parameters, Parameter{Name: "id"})
		}, `declares parameter "id" twice`},
		{"preflight", func(c *Catalog) { c.Capabilities["user_query"].Preflight[0].Get = "nope" }, `preflight reads capability "nope"`},
		{"mapping of nothing", func(c *Catalog) { c.Mappings["nope"] = &Mapping{} }, `mapping nope: maps capability "nope"`},
		{"null mapping", func(c *Catalog) { c.Mappings["issue_get"] = nil }, "mapping issue_get: is null"},
		{"segment type", func(c *Catalog) { c.Mappings["issue_get"].Path[0].Type = "glob" }, `path segment 1 has type "glob"`},
		{"null expression", func(c *Catalog) { c.Mappings["issue_get"].Query.Fields[0].Value = nil }, "an expression is null"},
		{"deep expression", func(c *Catalog) { c.Mappings["issue_get"].Body = deep }, "nests deeper than"},
		{"param order", func(c *Catalog) { c.Mappings["user_query"].Pagination.ParamOrder = []string{"nope"} }, `param_order names "nope"`},
		{"view entity", func(c *Catalog) { c.Views["board"].Entity = "Nope" }, `view board: is of entity "Nope"`},
		{"null view", func(c *Catalog) { c.Views["board"] = nil }, "view board: is null"},
		{"view serves", func(c *Catalog) { c.Views["board"].Serves = []string{"nope"} }, `serves capability "nope"`},
		{"view node", func(c *Catalog) { c.Views["board"].Nodes[0].Capability = "nope" }, `view board, node a: calls capability "nope"`},
		{"view bind later node", func(c *Catalog) { c.Views["board"].Nodes[1].Bind[0].Node = "b" }, `binds x from node "b"`},
		{"view relation target", func(c *Catalog) { c.Views["board"].Relations[0].Target = "Nope" }, `view board, relation r: targets entity "Nope"`},
		{"view relation node", func(c *Catalog) { c.Views["board"].Relations[0].Node = "z" }, `reads node "z"`},
		{"view output node", func(c *Catalog) { c.Views["board"].Output[0].Node = "z" }, `view board, output n: reads node "z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkedCatalog()
			tt.edit(c)
			err := c.Freeze()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.idx == nil {
					t.Fatal("a valid catalog was not indexed")
				}
				return
			}
			var ce *CheckError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
			if c.idx != nil {
				t.Fatal("an invalid catalog was indexed")
			}
		})
	}
}

// TestCheckStable: of several problems the same one is reported every
// time, though maps are walked in random order.
func TestCheckStable(t *testing.T) {
	c := checkedCatalog()
	c.Entities["User"].FieldOrder = []string{"nope"}
	c.Entities["Issue"].FieldOrder = []string{"nope"}
	c.Capabilities["user_query"].Entity = "Nope"
	c.Entities["Issue"].Relations["owner"].Target = "Nope"
	want := c.Check().Error()
	for range 50 {
		if got := c.Check().Error(); got != want {
			t.Fatalf("got %q, then %q", want, got)
		}
	}
	if !strings.Contains(want, "capability user_query") {
		t.Fatalf("first problem by where: %q", want)
	}
}
