package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSessionHTTPParity drives the HTTP execute routes the way MCP drives
// plasm_context: reuse on identical opens, expand / federate deltas and the
// unchanged line through POST …/context, run history and artifacts, and
// "not found" for another tenant.
func TestSessionHTTPParity(t *testing.T) {
	f := newTenantsFixture(t)
	asA := []string{"Authorization", "Bearer " + tokenA}
	asB := []string{"Authorization", "Bearer " + tokenB}
	open := func(auth []string, body string) map[string]any {
		t.Helper()
		r := f.do(t, "POST", "/execute", "application/json", body, auth...)
		if r.status != http.StatusSeeOther {
			t.Fatalf("open %s: %d %s", body, r.status, r.body)
		}
		return r.json(t)
	}

	first := open(asA, `{"entry_id": "tracker", "entities": ["Issue", "Project"]}`)
	path := first["location"].(string)
	reuse := []struct {
		name, body string
		auth       []string
		reused     bool
	}{
		{"same seeds", `{"entry_id": "tracker", "entities": ["Issue", "Project"]}`, asA, true},
		{"reordered and duplicated", `{"entry_id": "tracker", "entities": ["Project", "Issue", "Project"]}`, asA, true},
		{"other entities", `{"entry_id": "tracker", "entities": ["Issue"]}`, asA, false},
		{"other catalog", `{"entry_id": "kanban", "entities": ["Issue"]}`, asA, false},
		{"other tenant", `{"entry_id": "tracker", "entities": ["Issue", "Project"]}`, asB, false},
	}
	for _, tc := range reuse {
		t.Run("open "+tc.name, func(t *testing.T) {
			m := open(tc.auth, tc.body)
			if m["reused"] != tc.reused || (m["location"] == path) != tc.reused {
				t.Fatalf("reused=%v location=%v, want reused=%v (first %s)", m["reused"], m["location"], tc.reused, path)
			}
		})
	}

	ctxCall := func(auth []string, seeds string) httpResult {
		t.Helper()
		return f.do(t, "POST", path+"/context", "application/json", `{"seeds": `+seeds+`, "intent": "triage"}`, auth...)
	}
	waves := []struct {
		name, seeds string
		unchanged   bool
		rev         float64
	}{
		{"expand", `[{"api": "tracker", "entity": "Comment"}]`, false, 2},
		{"federate", `[{"api": "kanban", "entity": "Issue"}]`, false, 3},
		{"duplicate", `[{"api": "tracker", "entity": "Issue"}]`, true, 3},
		{"multi-catalog again", `[{"api": "kanban", "entity": "Issue"}, {"api": "tracker", "entity": "Comment"}]`, true, 3},
	}
	for _, w := range waves {
		t.Run("context "+w.name, func(t *testing.T) {
			r := ctxCall(asA, w.seeds)
			if r.status != http.StatusOK {
				t.Fatalf("%d %s", r.status, r.body)
			}
			m := r.json(t)
			text := m["text"].(string)
			if m["unchanged"] != w.unchanged || m["domain_revision"] != w.rev {
				t.Fatalf("unchanged=%v rev=%v: %s", m["unchanged"], m["domain_revision"], r.body)
			}
			if w.unchanged {
				if strings.Count(text, "\n") != 0 || !strings.HasPrefix(text, "_Session unchanged (`e1`…`e") {
					t.Fatalf("unchanged text %q", text)
				}
				return
			}
			if !strings.HasPrefix(text, "```tsv\n") || strings.Contains(text, "\n#") || strings.Contains(text, "plasm_expr\tMeaning") {
				t.Fatalf("delta is not rows only:\n%s", text)
			}
		})
	}
	// The federated session runs both catalogs from the one execute path.
	run := f.do(t, "POST", path, "text/plain", "a = tracker:Issue(\"iss-1\")[id]\nb = kanban:Issue(\"kiss-1\")[id]\na, b",
		append([]string{"Accept", "application/json"}, asA...)...)
	if run.status != 200 || !strings.Contains(run.body, `"kiss-1"`) {
		t.Fatalf("federated run: %d %s", run.status, run.body)
	}
	runs := f.do(t, "GET", path+"/runs", "", "", asA...)
	var list struct {
		Runs []struct {
			RunID string `json:"run_id"`
			N     int    `json:"n"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(runs.body), &list); err != nil || runs.status != 200 || len(list.Runs) != 1 || list.Runs[0].N != 1 {
		t.Fatalf("runs: %d %s", runs.status, runs.body)
	}
	art := f.do(t, "GET", path+"/artifacts/"+list.Runs[0].RunID, "", "", asA...)
	if art.status != 200 || !strings.Contains(art.body, `"kiss-1"`) || !strings.Contains(art.body, `"iss-1"`) {
		t.Fatalf("artifact: %d %s", art.status, art.body)
	}

	// Tenant b learns nothing about tenant a's session: every route is 404.
	for _, tc := range []struct{ method, path, body string }{
		{"GET", path, ""},
		{"GET", path + "/runs", ""},
		{"GET", path + "/artifacts/" + list.Runs[0].RunID, ""},
		{"POST", path + "/context", `{"seeds": [{"api": "tracker", "entity": "User"}]}`},
		{"POST", path, `tracker:Issue("iss-1")`},
	} {
		ct := "text/plain"
		if strings.HasPrefix(tc.body, "{") {
			ct = "application/json"
		}
		r := f.do(t, tc.method, tc.path, ct, tc.body, asB...)
		if r.status != http.StatusNotFound {
			t.Fatalf("tenant b %s %s: %d %s", tc.method, tc.path, r.status, r.body)
		}
		problemOf(t, r)
	}
	// Tenant a's own session is untouched by b's attempts.
	if r := f.do(t, "GET", path, "", "", asA...); r.status != 200 || r.json(t)["domain_revision"] != 3.0 {
		t.Fatalf("session after b's attempts: %d %s", r.status, r.body)
	}
}
