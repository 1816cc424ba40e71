package decode

import (
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

func i64(v int64) *int64 { return &v }

func fields(specs ...string) (map[string]*catalog.Field, []string) {
	m := map[string]*catalog.Field{}
	var order []string
	for _, s := range specs {
		// "name:value_ref[:a.b.c]"
		parts := strings.Split(s, ":")
		f := &catalog.Field{Name: parts[0], ValueRef: parts[1]}
		if len(parts) > 2 {
			f.Path = strings.Split(parts[2], ".")
		}
		m[f.Name] = f
		order = append(order, f.Name)
	}
	return m, order
}

func entity(name string, specs ...string) *catalog.Entity {
	fs, order := fields(specs...)
	return &catalog.Entity{Name: name, IDField: order[0], Fields: fs, FieldOrder: order}
}

func graphqlPaging() *catalog.Pagination {
	return &catalog.Pagination{
		Params:         map[string]catalog.PageParam{"after": {FromResponse: "endCursor"}},
		ResponsePrefix: []string{"data", "issues", "pageInfo"},
		StopWhen:       &catalog.StopWhen{Field: "hasNextPage", Eq: false, HasEq: true},
	}
}

// testCatalog covers every response shape and pagination style.
func testCatalog() *catalog.Catalog {
	pokemon := entity("Pokemon", "id:int", "name:str", "weight:num", "is_default:bool", "types:list", "owner_login:str:owner.login", "born:date")
	pokemon.Relations = map[string]*catalog.Relation{
		"abilities": {Name: "abilities", Target: "Ability", Cardinality: "many", Materialize: catalog.Materialize{
			Kind: catalog.FromParentGet,
			Path: []catalog.PathStep{{Key: "abilities"}, {Wildcard: true}, {Key: "ability"}},
		}},
		"forms": {Name: "forms", Target: "Ability", Cardinality: "many", Materialize: catalog.Materialize{
			Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "forms"}},
		}},
		"evolutions": {Name: "evolutions", Target: "Pokemon", Cardinality: "many", Materialize: catalog.Materialize{
			Kind: catalog.QueryScoped, Capability: "pokemon_results", Param: "species",
		}},
	}
	// species is embedded with cardinality one; trainer is declared only,
	// which makes it a reference embedded under its name (catalog.EmbeddedPath).
	pokemon.Relations["species"] = &catalog.Relation{Name: "species", Target: "Ability", Cardinality: "one", Materialize: catalog.Materialize{
		Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "meta"}, {Key: "species"}},
	}}
	pokemon.Relations["trainer"] = &catalog.Relation{Name: "trainer", Target: "Ability", Cardinality: "one"}
	pokemon.RelOrder = []string{"abilities", "forms", "evolutions", "species", "trainer"}

	cat := &catalog.Catalog{
		EntryID:     "demo",
		Version:     1,
		HTTPBackend: "https://api.example.com/v2/",
		Auth:        catalog.Auth{Scheme: "bearer_token", Env: "DEMO_TOKEN"},
		Values: map[string]*catalog.Value{
			"int":  {Type: "integer"},
			"num":  {Type: "number"},
			"str":  {Type: "string"},
			"bool": {Type: "boolean"},
			"list": {Type: "array"},
			"date": {Type: "date", ValueFormat: "rfc3339"},
		},
		Entities: map[string]*catalog.Entity{
			"Pokemon": pokemon,
			"Ability": entity("Ability", "name:str", "url:str"),
			"Issue":   entity("Issue", "id:str", "title:str", "number:int", "team:str:team.key"),
		},
		Capabilities: map[string]*catalog.Capability{},
		Mappings:     map[string]*catalog.Mapping{},
	}
	add := func(name, kind, ent string, m *catalog.Mapping) {
		cat.Capabilities[name] = &catalog.Capability{Name: name, Kind: kind, Entity: ent}
		cat.Mappings[name] = m
	}
	add("pokemon_list", catalog.KindQuery, "Pokemon", &catalog.Mapping{Response: &catalog.Response{Items: true}})
	add("pokemon_default", catalog.KindQuery, "Pokemon", &catalog.Mapping{})
	add("pokemon_results", catalog.KindQuery, "Pokemon", &catalog.Mapping{
		Response: &catalog.Response{ItemsPath: []string{"results"}},
		Pagination: &catalog.Pagination{
			Params:     map[string]catalog.PageParam{"offset": {Counter: i64(0), Step: 20}, "limit": {Fixed: float64(20)}},
			ParamOrder: []string{"offset", "limit"},
		},
	})
	add("pokemon_items", catalog.KindQuery, "Pokemon", &catalog.Mapping{Response: &catalog.Response{ItemsPath: []string{"items"}}})
	add("pokemon_get", catalog.KindGet, "Pokemon", &catalog.Mapping{Response: &catalog.Response{Single: true}})
	add("pokemon_delete", catalog.KindDelete, "Pokemon", &catalog.Mapping{Method: "DELETE"})
	add("pokemon_ping", catalog.KindAction, "Pokemon", &catalog.Mapping{Method: "POST"})
	cat.Capabilities["pokemon_ping"].Output = &catalog.Output{Type: "side_effect"}
	add("pokemon_pages", catalog.KindQuery, "Pokemon", &catalog.Mapping{
		Response:   &catalog.Response{Items: true},
		Pagination: &catalog.Pagination{Params: map[string]catalog.PageParam{"page": {Counter: i64(1), Step: 1, Max: 3}}},
	})
	add("pokemon_offset_auto", catalog.KindQuery, "Pokemon", &catalog.Mapping{
		Response:   &catalog.Response{Items: true},
		Pagination: &catalog.Pagination{Params: map[string]catalog.PageParam{"skip": {Counter: i64(0)}}},
	})
	add("pokemon_wasm", catalog.KindQuery, "Pokemon", &catalog.Mapping{Transport: "wasm"})
	add("issue_query", catalog.KindQuery, "Issue", &catalog.Mapping{
		Transport:  "graphql",
		Response:   &catalog.Response{ItemsPath: []string{"data", "issues", "nodes"}},
		Pagination: graphqlPaging(),
	})
	add("issue_edges", catalog.KindQuery, "Issue", &catalog.Mapping{
		Transport: "graphql",
		Response:  &catalog.Response{ItemsPath: []string{"data", "issues", "edges"}, ItemInnerKey: "node"},
	})
	add("issue_get", catalog.KindGet, "Issue", &catalog.Mapping{
		Transport: "graphql",
		Response:  &catalog.Response{ItemsPath: []string{"data", "issue"}, Single: true},
	})
	add("issue_links", catalog.KindQuery, "Issue", &catalog.Mapping{
		Response: &catalog.Response{Items: true},
		Pagination: &catalog.Pagination{
			Params:   map[string]catalog.PageParam{"per_page": {Fixed: float64(50)}},
			Location: "link_header",
		},
	})
	add("issue_nexturl", catalog.KindQuery, "Issue", &catalog.Mapping{
		Response: &catalog.Response{ItemsPath: []string{"results"}},
		Pagination: &catalog.Pagination{
			Params:   map[string]catalog.PageParam{"next": {FromResponse: "next"}},
			Location: "response_next_url",
		},
	})
	add("issue_absent", catalog.KindQuery, "Issue", &catalog.Mapping{
		Response: &catalog.Response{ItemsPath: []string{"results"}},
		Pagination: &catalog.Pagination{
			Params:         map[string]catalog.PageParam{"cursor": {FromResponse: "cursor"}, "size": {Fixed: "10"}},
			ResponsePrefix: []string{"meta"},
			StopWhen:       &catalog.StopWhen{Field: "more", Absent: true},
		},
	})
	return cat
}

// pokemonList renders n list items as JSON.
func pokemonList(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"mon-%d","weight":%d.5,"is_default":true,"types":["grass","poison"],"owner":{"login":"ash"},"extra":{"deep":[1,2,3]}}`, i+1, i+1, i)
	}
	b.WriteByte(']')
	return b.String()
}
