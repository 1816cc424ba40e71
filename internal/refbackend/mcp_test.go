package refbackend_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPParity: the problems HTTP answers with reach MCP clients as tool
// errors of the same type.
func TestMCPParity(t *testing.T) {
	e := newEnv(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "refbackend", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tool := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	ctx := tool("plasm_context", map[string]any{"intent": "read the blog", "seeds": []any{
		map[string]any{"api": "blog_offset", "entity": "Post"},
		map[string]any{"api": "blog_tiny", "entity": "Comment"},
	}})
	meta, _ := ctx.Meta["plasm"].(map[string]any)
	ref, _ := meta["logical_session_ref"].(string)
	if ctx.IsError || ref == "" {
		t.Fatalf("plasm_context: %v %v", ctx.IsError, ctx.Meta)
	}
	for _, tc := range []struct{ program, typ, text string }{
		{`blog_offset:Post(999)`, "not-found", "Post 999 not found"},
		{`blog_tiny:Comment.sort(likes, desc).limit(3)`, "run-budget", "250 pages"},
	} {
		res := tool("plasm_run", map[string]any{"logical_session_ref": ref, "program": tc.program, "force": true})
		sc, _ := res.StructuredContent.(map[string]any)
		perr, _ := sc["error"].(map[string]any)
		typ, _ := perr["type"].(string)
		var text string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.HasSuffix(typ, "/"+tc.typ) || !strings.Contains(text, tc.text) {
			t.Errorf("%s: error=%v type=%q text=%q, want a %s tool error", tc.program, res.IsError, typ, text, tc.typ)
		}
	}
	// The dry run says what the plan reads and the budget.
	res := tool("plasm", map[string]any{"logical_session_ref": ref, "program": `blog_offset:Post.sort(views, desc).limit(3)`})
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError || !strings.Contains(text, "reads: n0 Post: every page") || !strings.Contains(text, "at most 250 pages and 10000 rows") {
		t.Errorf("dry run: %s", text)
	}
}
