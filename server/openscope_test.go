package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
)

// TestHTTPOpenPerIntent: POST /execute with another intent (or other
// ranked capabilities) for the same seeds opens its own execute session,
// taught for that intent; the same intent and ranked set reuse it. An open
// with "create an issue" used to get the session opened for "read issues",
// whose table teaches no create.
func TestHTTPOpenPerIntent(t *testing.T) {
	f := newFixture(t, server.Config{})
	type opened struct {
		session string
		reused  bool
		prompt  string
	}
	open := func(t *testing.T, body string) opened {
		t.Helper()
		r := f.do(t, "POST", "/execute", "application/json", body)
		var o struct {
			SessionID string `json:"session_id"`
			Reused    bool   `json:"reused"`
			Location  string `json:"location"`
		}
		if err := json.Unmarshal([]byte(r.body), &o); err != nil || r.status != 303 {
			t.Fatalf("open %s: %d %s", body, r.status, r.body)
		}
		g := f.do(t, "GET", o.Location, "", "", "Accept", "application/json")
		var s struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(g.body), &s); err != nil {
			t.Fatalf("session %s: %d %s", o.Location, g.status, g.body)
		}
		return opened{o.SessionID, o.Reused, s.Prompt}
	}
	const seeds = `"entry_id":"tracker","entities":["Issue"]`
	read := open(t, `{`+seeds+`,"intent":"read issues"}`)
	// The table names methods by symbol; a create row reads "· create ·".
	const create = "· create ·"
	if strings.Contains(read.prompt, create) {
		t.Fatal("a read intent was taught a create")
	}
	tests := []struct {
		name, body string
		same       bool   // reuses the "read issues" session
		teaches    string // a fragment its table must hold
	}{
		{"same intent", `{` + seeds + `,"intent":"read issues"}`, true, ""},
		{"another intent", `{` + seeds + `,"intent":"create an issue"}`, false, create},
		{"no intent", `{` + seeds + `}`, false, ""},
		{"same intent, ranked", `{` + seeds + `,"intent":"read issues","ranked_capabilities":["issue_create"]}`, false, create},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := open(t, tc.body)
			if (o.session == read.session) != tc.same || o.reused != tc.same {
				t.Fatalf("session %s reused=%v; the read session %s; want shared=%v", o.session, o.reused, read.session, tc.same)
			}
			if tc.teaches != "" && !strings.Contains(o.prompt, tc.teaches) {
				t.Fatalf("the table lacks %s", tc.teaches)
			}
			// Opening it again reuses its own session.
			if again := open(t, tc.body); again.session != o.session || !again.reused {
				t.Fatalf("reopen: %s reused=%v, want %s reused", again.session, again.reused, o.session)
			}
		})
	}
}
