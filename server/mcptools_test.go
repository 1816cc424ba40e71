package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server"
)

// TestMCPToolsHostFriendly checks tools/list as a host sees it: titles,
// annotations, two-line descriptions, output schemas, and input schemas
// with no type arrays anywhere.
func TestMCPToolsHostFriendly(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		readOnly, destructive, openWorld bool
	}{
		"discover_capabilities": {readOnly: true},
		"plasm_context":         {readOnly: true},
		"plasm":                 {readOnly: true},
		"plasm_run":             {destructive: true, openWorld: true},
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		delete(want, tool.Name)
		a := tool.Annotations
		if tool.Title == "" || a == nil || a.Title != tool.Title {
			t.Errorf("%s: title %q annotations %+v", tool.Name, tool.Title, a)
			continue
		}
		if a.ReadOnlyHint != w.readOnly || (a.DestructiveHint != nil && *a.DestructiveHint) != w.destructive ||
			(a.OpenWorldHint != nil && *a.OpenWorldHint) != w.openWorld {
			t.Errorf("%s: annotations %+v, want %+v", tool.Name, *a, w)
		}
		if w.destructive && (a.DestructiveHint == nil || a.OpenWorldHint == nil) {
			t.Errorf("%s: destructive and open-world hints must be explicit", tool.Name)
		}
		if n := strings.Count(tool.Description, "\n"); n != 1 {
			t.Errorf("%s: description has %d lines, want 2: %q", tool.Name, n+1, tool.Description)
		}
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(out), `"type":"object"`) || !strings.Contains(string(out), `"_meta"`) {
			t.Errorf("%s: output schema %s", tool.Name, out)
		}
		in, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(in), `"type":[`) || strings.Contains(string(in), `"null"`) {
			t.Errorf("%s: input schema has a type array: %s", tool.Name, in)
		}
	}
	for name := range want {
		t.Errorf("tool %s missing", name)
	}

	// Optional inputs are omitted, not nulled; a call without them works
	// and the structured result validates against the advertised schema.
	o := call(t, cs, "plasm_context", map[string]any{"intent": "look at cards", "seeds": seedList("kanban:Issue")})
	if o.isError {
		t.Fatal(o.text)
	}
	r := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s0", "program": "Issue.limit(1)[id]", "force": true})
	if r.isError {
		t.Fatal(r.text)
	}
	for _, tc := range []struct {
		tool string
		out  toolOut
	}{{"plasm_context", o}, {"plasm_run", r}, {"plasm_run", call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s9", "program": "x"})}} {
		validateOutput(t, res.Tools, tc.tool, tc.out.structured)
	}
}

func validateOutput(t *testing.T, tools []*mcp.Tool, name string, structured map[string]any) {
	t.Helper()
	for _, tool := range tools {
		if tool.Name != name {
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(structured); err != nil {
			t.Errorf("%s structuredContent does not match its output schema: %v", name, err)
		}
	}
}
