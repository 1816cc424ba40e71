package refbackend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The catalogs describing the reference backend: one per style, the same
// domain with different wire mappings.

const domainYAML = `version: 1
description: Reference blog (authors, posts, comments) served in the %[1]s pagination style.
http_backend: %[2]s
auth: {scheme: none}
values:
  author_id: {type: integer, description: Author id}
  author_ref: {type: entity_ref, target: Author, description: Id of an author}
  author_name: {type: string, description: Author name}
  country: {type: select, allowed_values: [fr, de, jp, br], description: Country code}
  post_id: {type: integer, description: Post id}
  post_ref: {type: entity_ref, target: Post, description: Id of a post}
  title: {type: string, description: Post title}
  views: {type: integer, description: Times read}
  status: {type: select, allowed_values: [draft, published, archived], description: Publication state}
  comment_id: {type: integer, description: Comment id}
  body: {type: string, description: Comment text}
  likes: {type: integer, description: Likes}
entities:
  Author:
    description: A person who writes posts.
    id_field: id
    fields:
      id: {value_ref: author_id, required: true}
      name: {value_ref: author_name}
      country: {value_ref: country}
    relations:
      posts:
        target: Post
        cardinality: many
        description: Posts by this author
        materialize: {kind: query_scoped, capability: post_query, param: authorId}
  Post:
    description: A blog post.
    id_field: id
    fields:
      id: {value_ref: post_id, required: true}
      title: {value_ref: title}
      authorId: {value_ref: author_ref}
      views: {value_ref: views}
      status: {value_ref: status}
    relations:
      comments:
        target: Comment
        cardinality: many
        description: Comments on the post
        materialize: {kind: query_scoped, capability: comment_query, param: postId}
      author:
        target: Author
        cardinality: one
        description: Who wrote the post
        materialize: {kind: query_scoped_bindings, capability: author_query, bindings: {id: authorId}}
  Comment:
    description: A comment on a post.
    id_field: id
    fields:
      id: {value_ref: comment_id, required: true}
      postId: {value_ref: post_ref}
      body: {value_ref: body}
      likes: {value_ref: likes}
capabilities:
  author_query:
    kind: query
    entity: Author
    description: List authors
    parameters:
      - {name: id, value_ref: author_id}
      - {name: country, value_ref: country}
    provides: [id, name, country]
  author_get: {kind: get, entity: Author, description: Read one author, provides: [id, name, country]}
  post_query:
    kind: query
    entity: Post
    description: List posts
    parameters:
      - {name: authorId, value_ref: author_ref}
      - {name: status, value_ref: status}
    provides: [id, title, authorId, views, status]
  post_get: {kind: get, entity: Post, description: Read one post, provides: [id, title, authorId, views, status]}
%[3]s  comment_query:
    kind: query
    entity: Comment
    description: List comments
    parameters:
      - {name: postId, value_ref: post_ref}
    provides: [id, postId, body, likes]
  comment_get: {kind: get, entity: Comment, description: Read one comment, provides: [id, postId, body, likes]}
`

// restPaging is each REST style's response shape and pagination block.
func restPaging(style string, pageSize int) string {
	switch style {
	case StyleOffset:
		return fmt.Sprintf(`  response: {items_path: [items]}
  pagination:
    params:
      offset: {counter: 0, step: %d}
      limit: {fixed: %d}
    stop_when: {field: has_more, eq: false}
`, pageSize, pageSize)
	case StylePage:
		return `  response: bare_list
  pagination:
    params:
      page: {counter: 1}
`
	case StyleCursor:
		return fmt.Sprintf(`  response: {items_path: [data]}
  pagination:
    params:
      cursor: {from_response: next_cursor}
      limit: {fixed: %d}
`, pageSize)
	case StyleLink:
		return `  response: bare_list
  pagination:
    location: link_header
`
	case StyleSparse:
		return `  response: {items_path: [data]}
  pagination:
    params:
      page: {counter: 1}
`
	case StyleNextURL:
		return `  response: {items_path: [results]}
  pagination:
    location: response_next_url
    params:
      next: {from_response: next}
`
	}
	panic("refbackend: unknown style " + style)
}

var listVars = map[string][]string{"authors": {"id", "country"}, "posts": {"authorId", "status"}, "comments": {"postId"}}

var collOf = map[string]string{"author": "authors", "post": "posts", "comment": "comments"}

func mappingsYAML(style string, pageSize int) string {
	var b strings.Builder
	for _, ent := range []string{"author", "post", "comment"} {
		coll := collOf[ent]
		if style == StyleGraphQL {
			b.WriteString(graphqlMappings(ent, coll))
			continue
		}
		fmt.Fprintf(&b, "%s_query:\n  method: GET\n  path: [{type: literal, value: %s}]\n  query:\n    type: object\n    fields:\n", ent, coll)
		for _, v := range listVars[coll] {
			fmt.Fprintf(&b, "      - [%s, {type: var, name: %s}]\n", v, v)
		}
		b.WriteString(restPaging(style, pageSize))
		fmt.Fprintf(&b, "%s_get:\n  method: GET\n  path: [{type: literal, value: %s}, {type: var, name: id}]\n  response: single\n", ent, coll)
		if ent == "post" {
			b.WriteString("post_search:\n  method: GET\n  path: [{type: literal, value: posts}]\n  query:\n    type: object\n    fields:\n      - [q, {type: var, name: q}]\n")
			b.WriteString(restPaging(style, pageSize))
			b.WriteString("post_delete:\n  method: DELETE\n  path: [{type: literal, value: posts}, {type: var, name: id}]\n")
			b.WriteString("post_create:\n  method: POST\n  path: [{type: literal, value: posts}]\n  body:\n    type: object\n    fields:\n" +
				"      - [title, {type: var, name: title}]\n      - [authorId, {type: var, name: authorId}]\n      - [views, {type: var, name: views}]\n      - [status, {type: var, name: status}]\n  response: single\n")
		}
	}
	return b.String()
}

func graphqlMappings(ent, coll string) string {
	def := gqlEntities[0]
	for _, d := range gqlEntities {
		if d.coll == coll {
			def = d
		}
	}
	sel := strings.Join(def.fields, " ")
	var decl, use, vars []string
	for _, a := range def.listArgs {
		t := "String"
		if def.ints[a] {
			t = "Int"
		}
		decl = append(decl, "$"+a+": "+t)
		use = append(use, a+": $"+a)
		vars = append(vars, fmt.Sprintf("[%s, {type: var, name: %s}]", a, a))
	}
	list := fmt.Sprintf("query L(%s, $after: String) { %s(%s, after: $after) { nodes { %s } pageInfo { endCursor hasNextPage } } }",
		strings.Join(decl, ", "), coll, strings.Join(use, ", "), sel)
	single := strings.ToLower(def.gqlName[:1]) + def.gqlName[1:]
	get := fmt.Sprintf("query G($id: Int!) { %s(id: $id) { %s } }", single, sel)
	return fmt.Sprintf(`%[1]s_query:
  method: POST
  transport: graphql
  path: [{type: literal, value: graphql}]
  body:
    type: object
    fields:
      - [query, {type: const, value: %[2]q}]
      - [variables, {type: object, fields: [%[3]s]}]
  response: {items_path: [data, %[4]s, nodes]}
  pagination:
    params:
      after: {from_response: endCursor}
    location: body
    response_prefix: [data, %[4]s, pageInfo]
    stop_when: {field: hasNextPage, eq: false}
%[1]s_get:
  method: POST
  transport: graphql
  path: [{type: literal, value: graphql}]
  body:
    type: object
    fields:
      - [query, {type: const, value: %[5]q}]
      - [variables, {type: object, fields: [[id, {type: var, name: id}]]}]
  response: {items_path: [data, %[6]s], single: true}
`, ent, list, strings.Join(vars, ", "), coll, get, single)
}

// EntryID is the catalog entry id of a style.
func EntryID(style string) string { return "blog_" + style }

// WriteCatalog writes the catalog of style, served at baseURL (the
// server's root URL), as the catalog directory dir/entry and returns its
// path.
func WriteCatalog(dir, entry, style, baseURL string, pageSize int) (string, error) {
	p := filepath.Join(dir, entry)
	if err := os.MkdirAll(p, 0o755); err != nil {
		return "", err
	}
	backend := strings.TrimSuffix(baseURL, "/") + "/" + style
	if style == StyleGraphQL {
		backend = strings.TrimSuffix(baseURL, "/")
	}
	del := `  post_delete: {kind: delete, entity: Post, description: Delete a post}
  post_search:
    kind: search
    entity: Post
    description: Find posts whose title has the words
    parameters:
      - {name: q, value_ref: title, required: true, role: search}
    provides: [id, title, authorId, views, status]
  post_create:
    kind: create
    entity: Post
    description: Write a post
    parameters:
      - {name: title, value_ref: title, required: true}
      - {name: authorId, value_ref: author_ref, required: true}
      - {name: views, value_ref: views}
      - {name: status, value_ref: status}
    provides: [id, title, authorId, views, status]
`
	if style == StyleGraphQL {
		del = ""
	}
	if err := os.WriteFile(filepath.Join(p, "domain.yaml"), []byte(fmt.Sprintf(domainYAML, style, backend, del)), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(p, "mappings.yaml"), []byte(mappingsYAML(style, pageSize)), 0o644); err != nil {
		return "", err
	}
	return p, nil
}
