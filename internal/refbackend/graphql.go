package refbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/graphql-go/graphql"
)

// GraphQL side: one schema over the same data. Lists are Relay-style
// connections {nodes, pageInfo {endCursor, hasNextPage}} taking first and
// after; a single read of a missing id answers null, as GraphQL servers do.

type entityDef struct {
	gqlName  string
	coll     string
	fields   []string // wire names, all scalar
	ints     map[string]bool
	listArgs []string // equality filters
}

var gqlEntities = []entityDef{
	{"Author", "authors", []string{"id", "name", "country"}, map[string]bool{"id": true}, []string{"id", "country"}},
	{"Post", "posts", []string{"id", "title", "authorId", "views", "status"}, map[string]bool{"id": true, "authorId": true, "views": true}, []string{"authorId", "status"}},
	{"Comment", "comments", []string{"id", "postId", "body", "likes"}, map[string]bool{"id": true, "postId": true, "likes": true}, []string{"postId"}},
}

var (
	schemaOnce sync.Once
	schema     graphql.Schema
	schemaErr  error
)

func buildSchema() (graphql.Schema, error) {
	pageInfo := graphql.NewObject(graphql.ObjectConfig{Name: "PageInfo", Fields: graphql.Fields{
		"endCursor":   {Type: graphql.String},
		"hasNextPage": {Type: graphql.NewNonNull(graphql.Boolean)},
	}})
	q := graphql.Fields{}
	for _, e := range gqlEntities {
		fields := graphql.Fields{}
		for _, f := range e.fields {
			var t graphql.Output = graphql.String
			if e.ints[f] {
				t = graphql.Int
			}
			fields[f] = &graphql.Field{Type: t}
		}
		obj := graphql.NewObject(graphql.ObjectConfig{Name: e.gqlName, Fields: fields})
		conn := graphql.NewObject(graphql.ObjectConfig{Name: e.gqlName + "Connection", Fields: graphql.Fields{
			"nodes":    {Type: graphql.NewList(obj)},
			"pageInfo": {Type: graphql.NewNonNull(pageInfo)},
		}})
		args := graphql.FieldConfigArgument{"first": {Type: graphql.Int}, "after": {Type: graphql.String}}
		for _, a := range e.listArgs {
			if e.ints[a] {
				args[a] = &graphql.ArgumentConfig{Type: graphql.Int}
			} else {
				args[a] = &graphql.ArgumentConfig{Type: graphql.String}
			}
		}
		q[e.coll] = &graphql.Field{Type: conn, Args: args, Resolve: func(p graphql.ResolveParams) (any, error) {
			srv := p.Context.Value(serverKey{}).(*Server)
			filters := map[string][]string{}
			for _, a := range e.listArgs {
				if v, ok := p.Args[a]; ok && v != nil {
					filters[a] = []string{fmt.Sprint(v)}
				}
			}
			rows, _ := srv.list(e.coll)
			list := filter(rows, filters)
			first := srv.pageSize
			if v, ok := p.Args["first"].(int); ok && v > 0 && v < first {
				first = v
			}
			off := 0
			if a, ok := p.Args["after"].(string); ok && a != "" {
				n, err := strconv.Atoi(strings.TrimPrefix(a, "g"))
				if err != nil || !strings.HasPrefix(a, "g") {
					return nil, fmt.Errorf("bad cursor %q", a)
				}
				off = n
			}
			nodes := window(list, off, first)
			end := off + len(nodes)
			var cursor any
			if len(nodes) > 0 {
				cursor = "g" + strconv.Itoa(end)
			}
			return map[string]any{"nodes": nodes, "pageInfo": map[string]any{"endCursor": cursor, "hasNextPage": end < len(list)}}, nil
		}}
		single := strings.ToLower(e.gqlName[:1]) + e.gqlName[1:]
		q[single] = &graphql.Field{Type: obj, Args: graphql.FieldConfigArgument{"id": {Type: graphql.NewNonNull(graphql.Int)}},
			Resolve: func(p graphql.ResolveParams) (any, error) {
				srv := p.Context.Value(serverKey{}).(*Server)
				id := fmt.Sprint(p.Args["id"])
				rows, _ := srv.list(e.coll)
				for _, row := range rows {
					if fmt.Sprint(row["id"]) == id {
						return row, nil
					}
				}
				return nil, nil
			}}
	}
	return graphql.NewSchema(graphql.SchemaConfig{Query: graphql.NewObject(graphql.ObjectConfig{Name: "Query", Fields: q})})
}

type serverKey struct{}

// graphql answers POST /graphql {query, variables}. Queries come from the
// test's own catalogs only, so no bounds beyond the body size are needed.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	schemaOnce.Do(func() { schema, schemaErr = buildSchema() })
	if schemaErr != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": schemaErr.Error()})
		return
	}
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || r.Method != http.MethodPost {
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []any{map[string]any{"message": "POST a JSON body {query, variables}"}}})
		return
	}
	res := graphql.Do(graphql.Params{Schema: schema, RequestString: req.Query, VariableValues: req.Variables, Context: withServer(r, s)})
	writeJSON(w, http.StatusOK, res)
}

func withServer(r *http.Request, s *Server) context.Context {
	return context.WithValue(r.Context(), serverKey{}, s)
}
