package server_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server"
)

// TestUnencodableResultAnswered: when a tool's result cannot be encoded
// (here a NaN in _meta), the go-sdk logged it and wrote no response, so
// on stdio the client waited for that id forever and the guard kept the
// id pending, refusing its reuse (a reviewer's case). The call is now
// answered with an internal error carrying its id, the id is released, and
// the session goes on.
func TestUnencodableResultAnswered(t *testing.T) {
	f := newFixture(t, server.Config{})
	f.app.AddMCPTool(&mcp.Tool{Name: "nan", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, Meta: mcp.Meta{"score": math.NaN()}}, nil
		})
	w := newStdioWire(t, f)
	w.open("2025-06-18")
	w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nan","arguments":{}}}`)
	m := w.next(t)
	e, _ := m["error"].(map[string]any)
	if m["id"] != 5.0 || e == nil || e["code"] != -32603.0 || !strings.Contains(e["message"].(string), "could not be encoded") {
		t.Fatalf("answer to the call: %v", m)
	}
	// The id is free again: the guard does not refuse its reuse.
	w.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if m := w.next(t); m["id"] != 5.0 || m["result"] == nil {
		t.Fatalf("ping reusing id 5: %v", m)
	}
}

// BenchmarkMCPRunList is a plasm_run of a 20-row list over MCP (in
// memory); BenchmarkMCPResultEncode is the encoding encodableResults adds
// to it, of the same result: their ratio is the check's share of a call.
func BenchmarkMCPRunList(b *testing.B) {
	cs, ref := benchMCPSession(b)
	b.ResetTimer()
	for b.Loop() {
		mustOK(b, runCall(b, cs, ref, benchListProgram))
	}
}

func BenchmarkMCPResultEncode(b *testing.B) {
	cs, ref := benchMCPSession(b)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plasm_run", Arguments: map[string]any{"logical_session_ref": ref, "program": benchListProgram}})
	if err != nil || res.IsError {
		b.Fatalf("plasm_run: %v %+v", err, res)
	}
	b.ResetTimer()
	for b.Loop() {
		enc := json.NewEncoder(io.Discard)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			b.Fatal(err)
		}
	}
}

const benchListProgram = `Issue.limit(20)[id,title,priority]`

func benchMCPSession(b *testing.B) (*mcp.ClientSession, string) {
	f := newFixture(b, server.Config{})
	cs := f.mcpClient(b)
	return cs, refOf(contextCall(b, cs, "bench list", "tracker:Issue"))
}
