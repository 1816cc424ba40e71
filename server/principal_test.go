package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPrincipalsSeparateSessionsMCP: two people of one tenant using the
// same intent and seeds get separate logical sessions, execute rows and
// symbols; neither can read the other's runs; _meta names the principal.
func TestPrincipalsSeparateSessionsMCP(t *testing.T) {
	o := newOAuthFixture(t, oauthOpts{})
	alice := o.mcpClientAs(t, o.token(t, "alice"))
	bob := o.mcpClientAs(t, o.token(t, "bob"))
	static := o.mcpClientAs(t, tokenA)

	const intent = "triage open issues"
	ids := map[string]string{}
	for name, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob, "static": static} {
		out := contextCall(t, cs, intent, "tracker:Issue")
		if out.meta["logical_session_ref"] != "s0" {
			t.Fatalf("%s: ref %v", name, out.meta["logical_session_ref"])
		}
		cont, _ := out.meta["continuity"].(map[string]any)
		if cont["new_symbol_space"] != true {
			t.Fatalf("%s reused another principal's symbols: %v", name, out.meta)
		}
		want := name
		if name == "static" {
			want = ""
		}
		if got, _ := out.meta["principal"].(string); got != want {
			t.Fatalf("%s: _meta.principal = %q", name, got)
		}
		ids[name] = out.meta["logical_session_id"].(string)
	}
	if ids["alice"] == ids["bob"] || ids["alice"] == ids["static"] || ids["bob"] == ids["static"] {
		t.Fatalf("logical sessions shared across principals: %v", ids)
	}
	// Same principal, same intent, another connection: the same session.
	again := contextCall(t, o.mcpClientAs(t, o.token(t, "alice")), intent, "tracker:Issue")
	if again.meta["logical_session_id"] != ids["alice"] {
		t.Fatalf("alice's second connection got another logical session")
	}

	run := mustOK(t, runCall(t, alice, "s0", `Issue("iss-1")[id,title]`))
	if run.meta["principal"] != "alice" {
		t.Fatalf("run _meta %v", run.meta)
	}
	uri := run.meta["canonical_uri"].(string)
	if _, err := alice.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
		t.Fatalf("alice reads her run: %v", err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"bob": bob, "static": static} {
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Fatalf("%s read alice's run", name)
		}
	}
	res, err := alice.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"principal":"alice"`) {
		t.Fatalf("run artifact does not name its principal: %v", res)
	}
}

// TestPrincipalsSeparateSessionsHTTP: the same over HTTP execute routes.
func TestPrincipalsSeparateSessionsHTTP(t *testing.T) {
	o := newOAuthFixture(t, oauthOpts{})
	alice, bob := o.token(t, "alice"), o.token(t, "bob")
	la := openAs(t, o.fixture, alice, "tracker", "Issue")
	lb := openAs(t, o.fixture, bob, "tracker", "Issue")
	ls := openAs(t, o.fixture, tokenA, "tracker", "Issue")
	if la == lb || la == ls || lb == ls {
		t.Fatalf("execute sessions shared: %s %s %s", la, lb, ls)
	}
	if again := openAs(t, o.fixture, alice, "tracker", "Issue"); again != la {
		t.Fatalf("alice's reopen did not reuse her session: %s vs %s", again, la)
	}
	if r := o.do(t, "POST", la, "text/plain", `Issue("iss-1")`, "Authorization", "Bearer "+alice); r.status != 200 {
		t.Fatalf("alice runs: %d %s", r.status, r.body)
	}
	for _, tok := range []string{bob, tokenA} {
		for _, req := range [][2]string{{"GET", la}, {"POST", la}, {"GET", la + "/runs"}} {
			r := o.do(t, req[0], req[1], "text/plain", `Issue("iss-1")`, "Authorization", "Bearer "+tok)
			if r.status != http.StatusNotFound {
				t.Fatalf("%s %s by another principal: %d %s", req[0], req[1], r.status, r.body)
			}
		}
	}
	r := o.do(t, "GET", la+"/runs", "", "", "Authorization", "Bearer "+alice)
	if !strings.Contains(r.body, `"principal":"alice"`) {
		t.Fatalf("runs do not name the principal: %s", r.body)
	}
}

// TestMCPSessionBoundToPrincipal: a transport session created by one
// principal refuses requests carrying another principal's token.
func TestMCPSessionBoundToPrincipal(t *testing.T) {
	o := newOAuthFixture(t, oauthOpts{})
	alice, bob := o.token(t, "alice"), o.token(t, "bob")
	hdr := func(tok, sid string) []string {
		h := []string{"Authorization", "Bearer " + tok, "Accept", "application/json, text/event-stream"}
		if sid != "" {
			h = append(h, "Mcp-Session-Id", sid)
		}
		return h
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r := o.do(t, "POST", "/mcp", "application/json", init, hdr(alice, "")...)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if r := o.do(t, "POST", "/mcp", "application/json", list, hdr(bob, sid)...); r.status != http.StatusForbidden {
		t.Fatalf("bob on alice's session: %d %s", r.status, r.body)
	}
	if r := o.do(t, "POST", "/mcp", "application/json", list, hdr(tokenA, sid)...); r.status != http.StatusForbidden {
		t.Fatalf("a static token on alice's session: %d %s", r.status, r.body)
	}
	_ = o.do(t, "POST", "/mcp", "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr(alice, sid)...)
	if r := o.do(t, "POST", "/mcp", "application/json", list, hdr(alice, sid)...); r.status != 200 {
		t.Fatalf("alice on her session: %d %s", r.status, r.body)
	}
}
