package server_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oneShot connects, makes one tool call and disconnects, like the MCP
// Inspector CLI, scripts and serverless hosts do.
func (f *fixture) oneShot(t *testing.T, token, tool string, args map[string]any) toolOut {
	t.Helper()
	cs := f.mcpClientAs(t, token)
	defer func() { _ = cs.Close() }()
	return call(t, cs, tool, args)
}

func (f *fixture) oneShotRead(t *testing.T, token, uri string) (*mcp.ReadResourceResult, error) {
	t.Helper()
	cs := f.mcpClientAs(t, token)
	defer func() { _ = cs.Close() }()
	return cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
}

// TestSessionHandleFromAnyConnection: a client that connects per call opens
// a session, runs, pages and gets its table back on fresh connections,
// naming the session by the canonical handle; another tenant cannot.
func TestSessionHandleFromAnyConnection(t *testing.T) {
	f := newTenantsFixture(t)
	const intent = "read kanban cards one call at a time"
	opened := mustOK(t, f.oneShot(t, tokenA, "plasm_context", map[string]any{"intent": intent, "seeds": seedList("kanban:Issue")}))
	if !strings.HasPrefix(opened.text, "`s0`\n\n") {
		t.Fatalf("first open does not start with its ref: %q", opened.text[:min(40, len(opened.text))])
	}
	handle, _ := opened.meta["session_handle"].(string)
	sc, _ := opened.structured["_meta"].(map[string]any)["plasm"].(map[string]any)
	if !regexp.MustCompile(`^plasm_ls_[0-9a-f]{32}$`).MatchString(handle) || sc["session_handle"] != handle {
		t.Fatalf("session_handle %q (structuredContent %v)", handle, sc["session_handle"])
	}
	issue := symbolFor(t, opened.text, "kanban:Issue")

	// A new connection: the handle resolves; the old s0 does not.
	if o := f.oneShot(t, tokenA, "plasm_run", map[string]any{"logical_session_ref": "s3", "program": issue + "[id]"}); !o.isError ||
		!strings.Contains(o.text, "session_handle") {
		t.Fatalf("unknown ref: want an error pointing at session_handle, got %q", o.text)
	}
	plan := mustOK(t, f.oneShot(t, tokenA, "plasm", map[string]any{"logical_session_ref": handle, "program": issue + "[id]"}))
	if plan.meta["session_handle"] != handle {
		t.Fatalf("plasm meta: %v", plan.meta)
	}
	list := mustOK(t, f.oneShot(t, tokenA, "plasm_run", map[string]any{"logical_session_ref": handle, "program": issue + "[id]"}))
	var page string
	for _, p := range list.meta["paging"].([]any) {
		page = p.(map[string]any)["handle"].(string)
	}
	if page == "" || list.meta["session_handle"] != handle {
		t.Fatalf("run by handle: paging %q meta %v", page, list.meta)
	}
	first := tsvRows(t, list.text)
	next := tsvRows(t, mustOK(t, f.oneShot(t, tokenA, "plasm_run", map[string]any{"logical_session_ref": handle, "program": "page(" + page + ")"})).text)
	if len(next) == 0 || next[0]["id"] == first[0]["id"] {
		t.Fatalf("page(%s) on a new connection did not continue: %v", page, next)
	}

	// A restarted agent reuses its intent: the ref, the unchanged line and
	// how to get the table back; refresh and the resource give it.
	again := mustOK(t, f.oneShot(t, tokenA, "plasm_context", map[string]any{"intent": intent, "seeds": seedList("kanban:Issue")}))
	if again.text != unchangedText("s0", 1) || again.meta["session_handle"] != handle {
		t.Fatalf("reopen: %q %v", again.text, again.meta)
	}
	table := opened.text[strings.Index(opened.text, "```tsv"):]
	refreshed := mustOK(t, f.oneShot(t, tokenA, "plasm_context", map[string]any{"intent": intent, "seeds": seedList("kanban:Issue"), "refresh": true}))
	if refreshed.text != "`s0`\n\n"+table {
		t.Fatalf("refresh: %q", refreshed.text)
	}
	for _, uri := range []string{"plasm://session/" + handle + "/teaching", "plasm://session/s0/teaching"} {
		res, err := f.oneShotRead(t, tokenA, uri)
		if uri == "plasm://session/s0/teaching" {
			// A fresh connection has no s0 of its own.
			if err == nil {
				t.Fatalf("%s resolved on a connection that never named s0", uri)
			}
			continue
		}
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != table {
			t.Fatalf("resources/read %s: %v %+v", uri, err, res)
		}
	}
	cs := f.mcpClientAs(t, tokenA)
	mustOK(t, call(t, cs, "plasm_context", map[string]any{"intent": intent, "seeds": seedList("kanban:Issue")}))
	if res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "plasm://session/s0/teaching"}); err != nil || res.Contents[0].Text != table {
		t.Fatalf("teaching resource by ref: %v", err)
	}

	// Another tenant: the handle is "not found", like garbage.
	for _, ref := range []string{handle, "plasm_ls_" + strings.Repeat("0", 32), "plasm_ls_zz"} {
		if o := f.oneShot(t, tokenB, "plasm_run", map[string]any{"logical_session_ref": ref, "program": issue + "[id]"}); !o.isError {
			t.Fatalf("tenant b ran with %q: %s", ref, o.text)
		}
	}
	if _, err := f.oneShotRead(t, tokenB, "plasm://session/"+handle+"/teaching"); err == nil {
		t.Fatal("tenant b read tenant a's teaching table")
	}
}
