package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
)

// TestProgramInvalidUTF8: a program with a byte that is not UTF-8 is a 400
// program-syntax naming its line and column, on every way a program comes
// in; it used to run with the byte replaced by U+FFFD (the backend was
// asked for Issue "iss-\uFFFD1").
func TestProgramInvalidUTF8(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")

	r := f.do(t, "POST", path, "text/plain", "a = Issue(\"iss-1\")\nIssue(\"iss-\xff1\")")
	p := problemOf(t, r)
	if r.status != http.StatusBadRequest || !strings.HasSuffix(p["type"].(string), "/program-syntax") ||
		p["line"] != 2.0 || p["column"] != 12.0 || !strings.Contains(p["detail"].(string), "byte 0xff") {
		t.Errorf("text/plain program: %d %s", r.status, r.body)
	}
	r = f.do(t, "POST", path, "application/json", "{\"program\":\"Issue(\\\"iss-\xff1\\\")\"}")
	if p := problemOf(t, r); r.status != http.StatusBadRequest || !strings.Contains(p["detail"].(string), "not UTF-8") {
		t.Errorf("JSON program: %d %s", r.status, r.body)
	}
	// MCP: refused before the SDK decodes (and repairs) the message.
	body := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"plasm_run\",\"arguments\":{\"logical_session_ref\":\"s0\",\"program\":\"Issue(\\\"iss-\xff1\\\")\"}}}"
	r = f.do(t, "POST", "/mcp", "application/json", body, "Accept", "application/json, text/event-stream")
	if p := problemOf(t, r); r.status != http.StatusBadRequest || !strings.Contains(p["detail"].(string), "not UTF-8") {
		t.Errorf("MCP: %d %s", r.status, r.body)
	}
	// Valid UTF-8 beyond ASCII still runs.
	if r := f.do(t, "POST", path, "text/plain", `Issue("iss-é")[id]`); r.status == http.StatusBadRequest {
		t.Errorf("a UTF-8 program refused: %s", r.body)
	}
}

// TestExecuteDuplicateJSONKey: POST /execute takes exactly its documented
// fields, each once; a repeated key was accepted with the last one winning.
func TestExecuteDuplicateJSONKey(t *testing.T) {
	f := newFixture(t, server.Config{})
	r := f.do(t, "POST", "/execute", "application/json", `{"entry_id":"tracker","entry_id":"kanban","entities":["Issue"]}`)
	p := problemOf(t, r)
	if r.status != http.StatusBadRequest || !strings.HasSuffix(p["type"].(string), "/malformed-json") ||
		!strings.Contains(p["detail"].(string), `repeats the key "entry_id"`) {
		t.Fatalf("duplicate entry_id: %d %s", r.status, r.body)
	}
	if r := f.do(t, "POST", "/execute", "application/json", `{"entry_id":"tracker","entities":["Issue"]}`); r.status != http.StatusSeeOther {
		t.Fatalf("plain open: %d %s", r.status, r.body)
	}
}
