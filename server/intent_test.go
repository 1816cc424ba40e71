package server_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/core"
)

// TestOversizedIntent: an intent is one sentence; a megabyte one was kept
// with its logical session and written whole to the log each call whose
// announced intent differed. Every surface that takes one refuses it past
// core.MaxIntent, and the log line quotes intents clipped.
func TestOversizedIntent(t *testing.T) {
	logs := &syncBuffer{}
	f := newFixture(t, server.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	long := strings.Repeat("triage the login bugs ", core.MaxIntent/20)
	if len(long) <= core.MaxIntent {
		t.Fatalf("intent of %d bytes is not over the limit", len(long))
	}
	quoted, _ := json.Marshal(long)
	path := f.open(t, "tracker", "Issue")
	for _, tc := range []struct{ name, path, body string }{
		{"open", "/execute", `{"entry_id": "tracker", "entities": ["Issue"], "intent": ` + string(quoted) + `}`},
		{"expand", path + "/context", `{"seeds": [{"api": "tracker", "entity": "Project"}], "intent": ` + string(quoted) + `}`},
		{"discover", "/v1/discover", `{"intent": ` + string(quoted) + `}`},
	} {
		r := f.do(t, "POST", tc.path, "application/json", tc.body)
		if p := problemOf(t, r); r.status != http.StatusBadRequest || !strings.HasSuffix(p["type"].(string), "intent-too-long") {
			t.Errorf("%s: status %d: %s", tc.name, r.status, r.body)
		}
	}

	cs := f.mcpClient(t)
	o := call(t, cs, "plasm_context", map[string]any{"intent": long, "seeds": seedList("tracker", "Issue")})
	if !o.isError || !strings.Contains(o.text, "the limit is") {
		t.Fatalf("plasm_context with a long intent: %s", o.text)
	}

	// An intent announced in initialize that differs from the explicit
	// one is logged, clipped.
	hdr := []string{"Accept", "application/json, text/event-stream"}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"plasm":{"intent":` + string(quoted) + `}},` +
		`"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r := f.do(t, "POST", "/mcp", "application/json", init, hdr...)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	hdr = append(hdr, "Mcp-Session-Id", sid)
	f.do(t, "POST", "/mcp", "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
	r = f.do(t, "POST", "/mcp", "application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plasm_context",`+
		`"arguments":{"intent":"read issues","seeds":[{"api":"tracker","entity":"Issue"}]}}}`, hdr...)
	if r.status != http.StatusOK || strings.Contains(r.body, `"isError":true`) {
		t.Fatalf("plasm_context: %d %s", r.status, r.body)
	}
	differs := false
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "explicit intent differs") {
			differs = true
		}
		if len(line) > 2*core.MaxIntent {
			t.Errorf("log line of %d bytes: %.200s…", len(line), line)
		}
	}
	if !differs {
		t.Error("the differing announced intent was not logged")
	}
}
