package cml

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

func i64p(v int64) *int64 { return &v }

// TestPlasmForms compiles the Plasm forms the compiler implements: path
// suffixes, a single path variable binding the id, body_merge_path, the
// oauth_bearer scheme, and the refusal of capabilities not executable here.
func TestPlasmForms(t *testing.T) {
	lit := func(v string) catalog.Segment { return catalog.Segment{Type: "literal", Value: v} }
	cat := &catalog.Catalog{
		EntryID: "f", HTTPBackend: "https://api.example.com",
		Auth:     catalog.Auth{Scheme: "oauth_bearer", Env: "plasm:outbound:f:token"},
		Entities: map[string]*catalog.Entity{"Sheet": {Name: "Sheet", IDField: "id", Fields: map[string]*catalog.Field{"id": {Name: "id", ValueRef: "s"}}}},
		Capabilities: map[string]*catalog.Capability{
			"sheet_clear": {Name: "sheet_clear", Kind: catalog.KindAction, Entity: "Sheet"},
			"sheet_get":   {Name: "sheet_get", Kind: catalog.KindGet, Entity: "Sheet"},
			"sheet_query": {Name: "sheet_query", Kind: catalog.KindQuery, Entity: "Sheet"},
			"sheet_view":  {Name: "sheet_view", Kind: catalog.KindQuery, Entity: "Sheet", Unavailable: "transport view composes other capabilities"},
		},
		Mappings: map[string]*catalog.Mapping{
			"sheet_clear": {Method: "POST", Path: []catalog.Segment{lit("v4"), {Type: "var", Name: "id", Suffix: ":clear"}}},
			"sheet_get":   {Method: "GET", Path: []catalog.Segment{lit("sheets"), {Type: "var", Name: "sheet_id"}}, IDVar: "sheet_id"},
			"sheet_query": {Method: "POST", Path: []catalog.Segment{lit("graphql")},
				Body: &catalog.Expr{Type: catalog.ExprObject, Fields: []catalog.ObjectKV{{Key: "query", Value: &catalog.Expr{Type: catalog.ExprConst, Value: "{ sheets }"}}}},
				Pagination: &catalog.Pagination{Location: "body", BodyMergePath: []string{"variables", "o", "paginate"},
					Params: map[string]catalog.PageParam{"page": {Counter: i64p(1)}, "limit": {Fixed: int64(20)}}, ParamOrder: []string{"page", "limit"}}},
			"sheet_view": {Transport: "view"},
		},
	}
	tests := []struct {
		capability string
		vars       map[string]any
		url, body  string
		err        string
	}{
		{capability: "sheet_clear", vars: map[string]any{"id": "A1:B2"}, url: "https://api.example.com/v4/A1:B2:clear"},
		{capability: "sheet_get", vars: map[string]any{"id": "s1"}, url: "https://api.example.com/sheets/s1"},
		{capability: "sheet_get", vars: map[string]any{"id": "s1", "sheet_id": "s2"}, url: "https://api.example.com/sheets/s2"},
		{capability: "sheet_query", url: "https://api.example.com/graphql", body: `{"query":"{ sheets }","variables":{"o":{"paginate":{"page":1,"limit":20}}}}`},
		{capability: "sheet_view", err: "not executable here: transport view"},
	}
	for _, tt := range tests {
		out, aerr := Compile(cat, &abi.CompileRequest{EntryID: "f", Capability: tt.capability, Vars: tt.vars})
		if tt.err != "" {
			if aerr == nil || !strings.Contains(aerr.Message, tt.err) {
				t.Errorf("%s: error %v, want %q", tt.capability, aerr, tt.err)
			}
			continue
		}
		if aerr != nil {
			t.Errorf("%s: %v", tt.capability, aerr)
			continue
		}
		if out.URL != tt.url || out.Body != tt.body {
			t.Errorf("%s: got %s %s, want %s %s", tt.capability, out.URL, out.Body, tt.url, tt.body)
		}
		if out.Auth == nil || out.Auth.Scheme != "bearer_token" || out.Auth.Secret != "plasm:outbound:f:token" {
			t.Errorf("%s: auth %+v, want a bearer token from the tenant secret", tt.capability, out.Auth)
		}
	}
	// An optional bearer without a secret sends no credentials.
	cat.Auth = catalog.Auth{Scheme: "bearer_token", OptionalEnv: true}
	if out, aerr := Compile(cat, &abi.CompileRequest{EntryID: "f", Capability: "sheet_clear", Vars: map[string]any{"id": "x"}}); aerr != nil || out.Auth != nil {
		t.Errorf("optional bearer: %+v %v", out, aerr)
	}
}

// TestScopeSplat checks Plasm's scope splat: a compound entity_ref scope
// fills the key vars the path uses.
func TestScopeSplat(t *testing.T) {
	cat := &catalog.Catalog{
		EntryID: "gh", HTTPBackend: "https://api.example.com",
		Values: map[string]*catalog.Value{"repo_ref": {Type: "entity_ref", Target: "Repository"}, "s": {Type: "string"}},
		Entities: map[string]*catalog.Entity{
			"Repository": {Name: "Repository", KeyVars: []string{"owner", "repo"}},
			"Issue":      {Name: "Issue", IDField: "number"},
		},
		Capabilities: map[string]*catalog.Capability{
			"issue_query": {Name: "issue_query", Kind: catalog.KindQuery, Entity: "Issue", ScopeAggregateKeyPolicy: "omit_when_redundant",
				Parameters: []catalog.Parameter{{Name: "repository", ValueRef: "repo_ref", Required: true, Role: catalog.RoleScope}}},
		},
		Mappings: map[string]*catalog.Mapping{
			"issue_query": {Method: "GET", Path: []catalog.Segment{{Type: "literal", Value: "repos"}, {Type: "var", Name: "owner"}, {Type: "var", Name: "repo"}, {Type: "literal", Value: "issues"}},
				Query: &catalog.Expr{Type: catalog.ExprObject, Fields: []catalog.ObjectKV{{Key: "r", Value: &catalog.Expr{Type: catalog.ExprVar, Name: "repository"}}}}},
		},
	}
	for _, tt := range []struct {
		val       any
		url, fail string
	}{
		{val: "acme/tools", url: "https://api.example.com/repos/acme/tools/issues"},
		{val: map[string]any{"owner": "acme", "repo": "tools", "id": 7}, url: "https://api.example.com/repos/acme/tools/issues"},
		{val: "acme", fail: "scope repository must name a Repository by owner, repo"},
		{val: map[string]any{"owner": "acme"}, fail: "must name a Repository"},
	} {
		out, aerr := Compile(cat, &abi.CompileRequest{EntryID: "gh", Capability: "issue_query", Vars: map[string]any{"repository": tt.val}})
		switch {
		case tt.fail != "":
			if aerr == nil || !strings.Contains(aerr.Message, tt.fail) {
				t.Errorf("%v: error %v, want %q", tt.val, aerr, tt.fail)
			}
		case aerr != nil:
			t.Errorf("%v: %v", tt.val, aerr)
		case out.URL != tt.url:
			// omit_when_redundant drops the aggregate: no ?r= in the URL.
			t.Errorf("%v: url %s, want %s", tt.val, out.URL, tt.url)
		}
	}
}
