package server_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// problemLines counts WARN and ERROR log lines (the request log writes
// one INFO line per request, whatever it carried).
func problemLines(logs string) int {
	return strings.Count(logs, "level=WARN") + strings.Count(logs, "level=ERROR")
}

// newMCPGuardFixture serves the demo with tenants a and b (tenant a may
// hold at most maxSessions live MCP sessions) and logs into the returned
// buffer.
func newMCPGuardFixture(t *testing.T, maxSessions int) (*fixture, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	f := newFixtureFor(t, func(*demo.Server) server.Config {
		set, err := tenant.Parse([]byte(fmt.Sprintf(`
tenants:
  - id: a
    token_sha256: [%s]
    limits: {max_mcp_sessions: %d}
  - id: b
    token_sha256: [%s]
`, tenant.Digest(tokenA), maxSessions, tenant.Digest(tokenB))))
		if err != nil {
			t.Fatal(err)
		}
		return server.Config{Tenants: set, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	})
	return f, logs
}

type mcpResp struct {
	status int
	id     string
	body   string
}

// mcpPost sends one raw Streamable HTTP POST.
func (f *fixture) mcpPost(t *testing.T, token, session, body string) mcpResp {
	t.Helper()
	return f.mcpRaw(t, http.MethodPost, token, session, body)
}

func (f *fixture) mcpRaw(t *testing.T, method, token, session, body string) mcpResp {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b []byte
	if method == http.MethodGet && resp.StatusCode == http.StatusOK {
		b = []byte("stream") // an open event stream never ends by itself
	} else if b, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	return mcpResp{status: resp.StatusCode, id: resp.Header.Get("Mcp-Session-Id"), body: string(b)}
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"guard-test","version":"1"}}}`

// mcpOpen initializes a session as token and returns its id.
func (f *fixture) mcpOpen(t *testing.T, token string) string {
	t.Helper()
	r := f.mcpPost(t, token, "", mcpInitialize)
	if r.status != http.StatusOK || r.id == "" {
		t.Fatalf("initialize: %d %q %s", r.status, r.id, r.body)
	}
	if r := f.mcpPost(t, token, r.id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status/100 != 2 {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	return r.id
}

// TestMCPSessionBelongsToTenant: tenant b holding tenant a's session id
// gets exactly what an unknown id gets, for POST, GET and DELETE, and a's
// session is unharmed.
func TestMCPSessionBelongsToTenant(t *testing.T) {
	f, _ := newMCPGuardFixture(t, 8)
	id := f.mcpOpen(t, tokenA)
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			body := ""
			if method == http.MethodPost {
				body = list
			}
			stolen := f.mcpRaw(t, method, tokenB, id, body)
			unknown := f.mcpRaw(t, method, tokenB, "no-such-session", body)
			if stolen.status != http.StatusNotFound || stolen != unknown {
				t.Fatalf("another tenant's session: %+v; an unknown one: %+v", stolen, unknown)
			}
		})
	}
	if r := f.mcpPost(t, tokenA, id, list); r.status != http.StatusOK || !strings.Contains(r.body, "plasm_run") {
		t.Fatalf("the owner's session after the attempts: %d %s", r.status, r.body)
	}
	if r := f.mcpRaw(t, http.MethodDelete, tokenA, id, ""); r.status != http.StatusNoContent {
		t.Fatalf("the owner's DELETE: %+v", r)
	}
}

// TestMCPSessionCap: tenant a opens sessions up to its cap, the next
// initialize is a 429 quota-exceeded (counted in /metrics) while tenant b
// still opens sessions; closing one frees a slot.
func TestMCPSessionCap(t *testing.T) {
	f, _ := newMCPGuardFixture(t, 3)
	var ids []string
	for range 3 {
		ids = append(ids, f.mcpOpen(t, tokenA))
	}
	r := f.mcpPost(t, tokenA, "", mcpInitialize)
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.body, "quota-exceeded") || !strings.Contains(r.body, "max_mcp_sessions") {
		t.Fatalf("initialize past the cap: %+v", r)
	}
	f.mcpOpen(t, tokenB)
	metrics := f.do(t, "GET", "/metrics", "", "").body
	for _, want := range []string{
		`plasmd_tenant_usage{resource="mcp_sessions",tenant="a"} 3`,
		`plasmd_tenant_usage{resource="mcp_sessions",tenant="b"} 1`,
		`plasmd_quota_exceeded_total{resource="mcp_sessions",tenant="a"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if r := f.mcpRaw(t, http.MethodDelete, tokenA, ids[0], ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %+v", r)
	}
	f.mcpOpen(t, tokenA)
}

// TestMCPBatchBounds: a batch over the message bound is refused with one
// log line; a batch of identical bad messages under the bound logs each
// distinct SDK message once.
func TestMCPBatchBounds(t *testing.T) {
	f, logs := newMCPGuardFixture(t, 8)
	batch := func(n int, msg string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(msg+",", n), ",") + "]"
	}
	bad := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	start := problemLines(logs.String())
	r := f.mcpPost(t, tokenA, "", batch(2000, bad))
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "batch-too-large") {
		t.Fatalf("huge batch: %+v", r)
	}
	if n := problemLines(logs.String()) - start; n != 1 {
		t.Fatalf("a refused batch wrote %d log lines:\n%s", n, logs.String())
	}
	if r := f.mcpPost(t, tokenA, "", batch(17, bad)); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("batch of 17: %+v", r)
	}
	id := f.mcpOpen(t, tokenA)
	before := problemLines(logs.String())
	// Each message is a duplicate initialized notification, which the
	// SDK logs as an error.
	for range 5 {
		f.mcpPost(t, tokenA, id, batch(16, bad))
	}
	if n := problemLines(logs.String()) - before; n > 1 {
		t.Fatalf("80 identical bad messages wrote %d log lines:\n%s", n, logs.String())
	}
}
