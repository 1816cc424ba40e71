package server

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool definitions as hosts see them in tools/list: a title, annotations
// (so hosts stop asking the user to approve read-only calls), descriptions
// that teach the flow in two lines, input schemas without type arrays (some
// function-calling hosts reject ["null","array"]: optional fields are
// simply left out) and output schemas for the structured results.

func ptr[T any](v T) *T { return &v }

func discoverTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "discover_capabilities",
		Title: "Discover capabilities",
		Description: "Find the APIs and entities for a goal: pass one intent sentence for the whole task; returns TSV rows api/entity/description, best first.\n" +
			"Next: copy the api and entity of the rows you need into one plasm_context seeds list.",
		Annotations:  &mcp.ToolAnnotations{Title: "Discover capabilities", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		InputSchema:  inputSchema[discoverIn](),
		OutputSchema: outputSchema(map[string]*jsonschema.Schema{"options": {Type: "array", Description: "ranked rows {api, entity, description, score}", Items: &jsonschema.Schema{Type: "object"}}}),
	}
}

func contextTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "plasm_context",
		Title: "Open or extend a session",
		Description: "Open the session for a stable intent with seeds [{api, entity}]: answers `sN`, then the teaching table (later calls: only new rows, or one line when nothing changed).\n" +
			"Next: plasm / plasm_run with that logical_session_ref (or the session_handle, from any connection); refresh: true resends the whole table.",
		Annotations:  &mcp.ToolAnnotations{Title: "Open or extend a session", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		InputSchema:  inputSchema[contextIn](),
		OutputSchema: outputSchema(nil),
	}
}

func planTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "plasm",
		Title: "Dry-run a program",
		Description: "Plan a program without calling any API: parse, expand symbols, type-check; returns the plan, its verdict (ok or review) and a plan_commit_ref (pcN).\n" +
			"Next: plasm_run the same program; a review verdict needs that plan_commit_ref (or force: true).",
		Annotations: &mcp.ToolAnnotations{Title: "Dry-run a program", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		InputSchema: inputSchema[programIn](),
		OutputSchema: outputSchema(map[string]*jsonschema.Schema{
			"plan": {Type: "object", Description: "nodes, edges, order, returns, summary, verdict, reasons"},
		}),
	}
}

func runTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "plasm_run",
		Title: "Run a program",
		Description: "Run a program live against the APIs (reads and writes): one `## label (n rows)` heading and a TSV table per root, with page(…) and wait(…) handles.\n" +
			"Needs a logical_session_ref from plasm_context; a review plan needs the plan_commit_ref from plasm (or force: true); wait: false returns wait(sN_oM) at once.",
		Annotations: &mcp.ToolAnnotations{Title: "Run a program", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
		InputSchema: inputSchema[runIn](),
		OutputSchema: outputSchema(map[string]*jsonschema.Schema{
			"results":   {Type: "array", Description: "one {label, entry_id, entity, columns, rows, count, page_handle} per root", Items: &jsonschema.Schema{Type: "object"}},
			"operation": {Type: "object", Description: "a long operation: {handle, state, progress}"},
		}),
	}
}

// outputSchema is an object schema with the _meta mirror every result
// carries (hosts that drop _meta still see it) and the tool's own fields.
// Nothing is required and more properties are allowed: error results carry
// {error, _meta} instead, and clients validate structuredContent against it.
func outputSchema(props map[string]*jsonschema.Schema) *jsonschema.Schema {
	all := map[string]*jsonschema.Schema{
		"_meta": {Type: "object", Description: "mirror of _meta: {plasm: {logical_session_ref, session_handle, logical_session_id, …}}"},
		"error": {Type: "object", Description: "on error: {type, title, status, detail, hint, line, column}"},
	}
	for k, v := range props {
		all[k] = v
	}
	return &jsonschema.Schema{Type: "object", Properties: all}
}

// inputSchema derives T's schema and replaces every nullable type array
// (["null","array"] for slices, ["null","boolean"] for pointers) by its
// non-null type: absent is how a caller says "not given".
func inputSchema[T any]() any {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		// The input types are fixed at compile time and tests list the
		// tools, so this cannot happen in a build that passed; nil lets
		// the SDK derive the schema itself rather than fail startup.
		return nil
	}
	dropNullTypes(s)
	return s
}

func dropNullTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(types) == 1 {
			s.Type, s.Types = types[0], nil
		} else {
			s.Types = types
		}
	}
	for _, p := range s.Properties {
		dropNullTypes(p)
	}
	dropNullTypes(s.Items)
	dropNullTypes(s.AdditionalProperties)
	for _, d := range s.Defs {
		dropNullTypes(d)
	}
}
