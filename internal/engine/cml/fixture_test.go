package cml

import "github.com/plasmd/plasmd/internal/model/catalog"

// Expression builders keep the test tables readable.

func vr(name string) *catalog.Expr { return &catalog.Expr{Type: catalog.ExprVar, Name: name} }
func cn(v any) *catalog.Expr       { return &catalog.Expr{Type: catalog.ExprConst, Value: v} }

func ob(kvs ...any) *catalog.Expr {
	e := &catalog.Expr{Type: catalog.ExprObject}
	for i := 0; i+1 < len(kvs); i += 2 {
		e.Fields = append(e.Fields, catalog.ObjectKV{Key: kvs[i].(string), Value: kvs[i+1].(*catalog.Expr)})
	}
	return e
}

func ar(items ...*catalog.Expr) *catalog.Expr {
	return &catalog.Expr{Type: catalog.ExprArray, Items: items}
}

func ifx(c *catalog.Cond, then, els *catalog.Expr) *catalog.Expr {
	return &catalog.Expr{Type: catalog.ExprIf, Cond: c, Then: then, Else: els}
}

func join(sep string, x *catalog.Expr) *catalog.Expr {
	return &catalog.Expr{Type: catalog.ExprJoin, Sep: sep, Expr: x}
}

func format(t string, vars map[string]*catalog.Expr) *catalog.Expr {
	return &catalog.Expr{Type: catalog.ExprFormat, Template: t, Vars: vars}
}

func lit(s string) catalog.Segment  { return catalog.Segment{Type: "literal", Value: s} }
func pvar(n string) catalog.Segment { return catalog.Segment{Type: "var", Name: n} }

func i64(v int64) *int64 { return &v }

// testCatalog is a small catalog with one capability, "cap", whose kind and
// mapping each test case supplies.
func testCatalog(kind string, m *catalog.Mapping, auth catalog.Auth) *catalog.Catalog {
	return &catalog.Catalog{
		EntryID:     "demo",
		Version:     1,
		HTTPBackend: "https://api.example.com/v1/",
		Auth:        auth,
		Values: map[string]*catalog.Value{
			"int": {Type: "integer"},
			"str": {Type: "string"},
		},
		Entities: map[string]*catalog.Entity{
			"Item": {
				Name: "Item", IDField: "id",
				Fields: map[string]*catalog.Field{
					"id":   {Name: "id", ValueRef: "int"},
					"name": {Name: "name", ValueRef: "str"},
				},
				FieldOrder: []string{"id", "name"},
			},
		},
		Capabilities: map[string]*catalog.Capability{
			"cap": {Name: "cap", Kind: kind, Entity: "Item"},
		},
		Mappings: map[string]*catalog.Mapping{"cap": m},
	}
}

// zoo is a catalog with one capability per mapping feature, used by the
// fuzz test and the benchmark.
func zoo() *catalog.Catalog {
	cat := testCatalog(catalog.KindQuery, &catalog.Mapping{
		Path:  []catalog.Segment{lit("items")},
		Query: ob("q", vr("q"), "labels", vr("labels"), "state", ifx(&catalog.Cond{Exists: "state"}, vr("state"), cn("open"))),
		Pagination: &catalog.Pagination{
			Params: map[string]catalog.PageParam{
				"offset": {Counter: i64(0), Step: 20},
				"limit":  {Fixed: float64(20)},
			},
			ParamOrder: []string{"offset", "limit"},
		},
	}, catalog.Auth{Scheme: "bearer_token", Env: "DEMO_TOKEN"})
	add := func(name, kind string, m *catalog.Mapping) {
		cat.Capabilities[name] = &catalog.Capability{Name: name, Kind: kind, Entity: "Item"}
		cat.Mappings[name] = m
	}
	add("item_get", catalog.KindGet, &catalog.Mapping{
		Path: []catalog.Segment{lit("items"), pvar("id"), lit("")},
	})
	add("item_create", catalog.KindCreate, &catalog.Mapping{
		Method: "POST", Path: []catalog.Segment{lit("items")},
		Body: ob("title", vr("title"), "tags", join(",", vr("labels")),
			"summary", format("{title} by {owner}", nil),
			"n", ifx(&catalog.Cond{Equals: &catalog.EqualsCond{Left: vr("n"), Right: cn(float64(1))}}, cn("one"), vr("n"))),
		Headers: ob("X-Request-Kind", cn("create"), "X-Owner", vr("owner")),
	})
	add("item_upload", catalog.KindAction, &catalog.Mapping{
		Method: "POST", Path: []catalog.Segment{lit("items"), pvar("id"), lit("upload")},
		Body: ob("name", vr("title"), "flag", ifx(&catalog.Cond{Bool: vr("flag")}, cn(true), nil)), BodyFormat: FormatMultipart,
	})
	add("item_form", catalog.KindUpdate, &catalog.Mapping{
		Method: "PATCH", Path: []catalog.Segment{lit("items"), pvar("id")},
		Body: ob("title", vr("title"), "labels", vr("labels")), BodyFormat: FormatFormURLEncoded,
	})
	add("item_gql", catalog.KindQuery, &catalog.Mapping{
		Transport: TransportGraphQL, Path: []catalog.Segment{lit("graphql")},
		Body: ob("query", cn("query($first:Int,$after:String){issues(first:$first,after:$after){nodes{id}}}"),
			"variables", ob("first", cn(float64(50)), "filter", vr("q"))),
		Pagination: &catalog.Pagination{
			Params:         map[string]catalog.PageParam{"after": {FromResponse: "endCursor"}},
			ResponsePrefix: []string{"data", "issues", "pageInfo"},
			StopWhen:       &catalog.StopWhen{Field: "hasNextPage", Eq: false, HasEq: true},
		},
	})
	add("item_links", catalog.KindQuery, &catalog.Mapping{
		Path: []catalog.Segment{lit("items")},
		Pagination: &catalog.Pagination{
			Params:   map[string]catalog.PageParam{"per_page": {Fixed: float64(100)}},
			Location: LocLinkHeader,
		},
	})
	return cat
}
