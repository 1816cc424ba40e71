package server_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
)

// TestHTTPHostileInput: inputs a hostile or careless client sends to the
// HTTP surface get a typed problem that says what is wrong in the client's
// terms, and nothing the server would misread runs.
func TestHTTPHostileInput(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	const get = `Issue("iss-1")[id]`
	tests := []struct {
		name, path, ctype, body string
		status                  int
		detail                  []string // substrings of the problem's detail
		absent                  []string // substrings the detail must not hold
	}{
		// A query parameter the server does not understand used to be
		// taken as absent: ?mode=PLAN ran the program live.
		{name: "mode in capitals", path: path + "?mode=PLAN&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{`mode="PLAN"`, "mode=plan"}},
		{name: "unknown mode", path: path + "?mode=dry&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{`mode="dry"`}},
		{name: "misspelt mode", path: path + "?mdoe=plan&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{`"mdoe"`, "mode"}},
		{name: "force=1", path: path + "?force=1", ctype: "text/plain", body: get, status: 400, detail: []string{`force="1"`, "force=true or force=false"}},
		{name: "wait=no", path: path + "?wait=no&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{`wait="no"`}},
		// Pairs url.Values cannot parse were dropped, leaving mode unset.
		{name: "semicolon after mode", path: path + "?mode=plan;x=1&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{"does not parse"}},
		{name: "bad escape after mode", path: path + "?mode=plan%ZZ&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{"does not parse"}},
		{name: "mode twice", path: path + "?mode=plan&mode=run&force=false", ctype: "text/plain", body: get, status: 400, detail: []string{`"mode" is given 2 times`}},
		// A JSON program body with a field the route does not read was
		// accepted and the field dropped: "mode": "plan" ran live.
		{name: "mode in the JSON body", path: path, ctype: "application/json", body: `{"program": "Issue(\"iss-1\")[id]", "mode": "plan"}`, status: 400, detail: []string{`unknown field "mode"`, "program"}},
		{name: "trailing data after the program", path: path, ctype: "application/json", body: `{"program": "Issue(\"iss-1\")[id]"} {"program": "Issue(\"iss-2\").delete()"}`, status: 400, detail: []string{"more than one JSON value"}},
		// A number literal used as text went out normalised (Issue(-0)
		// fetched id "0"); it is refused with its spelling kept.
		{name: "text id written -0", path: path + "?force=false", ctype: "text/plain", body: `Issue(-0)`, status: 400, detail: []string{"Issue id -0 is the number 0", `sent as "0"`}},
		{name: "text id written 1.0", path: path + "?force=false", ctype: "text/plain", body: `Issue(1.0)`, status: 400, detail: []string{"Issue id expects text, got 1.0"}},
		{name: "program of the wrong type", path: path, ctype: "application/json", body: `{"program": 5}`, status: 400, detail: []string{`field "program" must be a string, not a number`}, absent: []string{"Go ", "struct"}},
		// encoding/json's messages named Go types and struct tags.
		{name: "open with an array", path: "/execute", ctype: "application/json", body: `[]`, status: 400, detail: []string{"must be a JSON object, not an array"}, absent: []string{"Go ", "struct", "EntryID"}},
		{name: "open with entities as a string", path: "/execute", ctype: "application/json", body: `{"entry_id": "tracker", "entities": "Issue"}`, status: 400, detail: []string{`field "entities" must be a list of strings, not a string`}, absent: []string{"Go ", "[]string"}},
		{name: "open with an unknown field", path: "/execute", ctype: "application/json", body: `{"entry_id": "tracker", "entities": ["Issue"], "extra": 1}`, status: 400, detail: []string{`unknown field "extra"`, "entities, entry_id, intent, ranked_capabilities"}},
		{name: "open followed by another value", path: "/execute", ctype: "application/json", body: `{"entry_id": "tracker", "entities": ["Issue"]}{"x": 1}`, status: 400, detail: []string{"more than one JSON value"}},
		{name: "open truncated", path: "/execute", ctype: "application/json", body: `{"entry_id": "tra`, status: 400, detail: []string{"ends early"}},
		{name: "open empty", path: "/execute", ctype: "application/json", body: ``, status: 400, detail: []string{"body is empty"}},
		{name: "discover with a fraction", path: "/v1/discover", ctype: "application/json", body: `{"intent": "issues", "max_options": 2.5}`, status: 400, detail: []string{`field "max_options" must be a whole number, not 2.5`}},
		{name: "open not JSON", path: "/execute", ctype: "application/json", body: `{entry_id: 1}`, status: 400, detail: []string{"not valid JSON at byte 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "POST", tc.path, tc.ctype, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			detail, _ := problemOf(t, r)["detail"].(string)
			for _, want := range tc.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail %q lacks %q", detail, want)
				}
			}
			for _, bad := range tc.absent {
				if strings.Contains(detail, bad) {
					t.Errorf("detail %q holds %q", detail, bad)
				}
			}
		})
	}
	// What the server understands still works.
	for _, q := range []string{"?mode=plan", "?force=true", "?force=false", "?wait=true&force=true", "?plan_commit_ref=pc9&force=false"} {
		if r := f.do(t, "POST", path+q, "text/plain", get); r.status != http.StatusOK {
			t.Errorf("%s: status %d: %s", q, r.status, r.body)
		}
	}
	if r := f.do(t, "POST", path, "application/json", `{"program": "Issue(\"iss-1\")[id]"}`+"\n"); r.status != http.StatusOK {
		t.Errorf("JSON program with a trailing newline: status %d: %s", r.status, r.body)
	}
}

// TestHTTPWaitWithComments: wait(…) and cancel(…) with the ;; comments the
// language allows are answered by the host like bare ones; they used to
// reach the planner, which said the server had no operations at all.
func TestHTTPWaitWithComments(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	if r := f.do(t, "POST", path+"?wait=false&force=true", "text/plain", `Issue{status="open"}.limit(2)[id]`); r.status != http.StatusAccepted || !strings.Contains(r.body, "s0_o1") {
		t.Fatalf("operation: status %d: %s", r.status, r.body)
	}
	for _, program := range []string{";; poll the operation\nwait(s0_o1)", "wait(s0_o1) ;; again", "cancel(s0_o1) ;; stop it\n;; done"} {
		r := f.do(t, "POST", path, "text/plain", program)
		if r.status != http.StatusOK && r.status != http.StatusAccepted {
			t.Fatalf("%q: status %d: %s", program, r.status, r.body)
		}
		if !strings.Contains(r.body, "s0_o1") && !strings.Contains(r.body, "iss-") {
			t.Fatalf("%q: neither progress nor result: %s", program, r.body)
		}
	}
}

// TestLongPathsLoggedClipped: every request writes a log line quoting its
// path, and Go takes request lines up to its 1 MB header limit; the line
// and a 404's detail quote the path clipped, whoever sends it.
func TestLongPathsLoggedClipped(t *testing.T) {
	logs := &syncBuffer{}
	f := newFixture(t, server.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	long := strings.Repeat("A", 300<<10)
	for _, p := range []string{"/execute/" + long + "/x", "/nothing/" + long, "/execute/x/" + long + "/runs"} {
		r := f.do(t, "GET", p, "", "")
		if r.status != http.StatusNotFound {
			t.Fatalf("GET %.40s…: status %d", p, r.status)
		}
		if len(r.body) > 4<<10 {
			t.Errorf("GET %.40s…: a %d-byte answer", p, len(r.body))
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if len(line) > 4<<10 {
			t.Errorf("log line of %d bytes: %.200s…", len(line), line)
		}
	}
}

// TestWrongMethod: a method a real route does not serve is 405 with Allow,
// not 404 "no such route" (echo's group catch-all used to swallow it), and
// an unknown path is still 404; neither reaches a handler unauthenticated.
func TestWrongMethod(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	for _, tc := range []struct {
		method, path string
		status       int
		typ, allow   string
	}{
		{"PUT", "/execute", 405, "method-not-allowed", "POST"},
		{"DELETE", "/v1/registry", 405, "method-not-allowed", "GET"},
		{"PATCH", path, 405, "method-not-allowed", "GET"},
		{"GET", "/v1/discover", 405, "method-not-allowed", "POST"},
		{"GET", "/no/such/route", 404, "not-found", ""},
	} {
		r := f.do(t, tc.method, tc.path, "", "")
		if r.status != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.method, tc.path, r.status, tc.status, r.body)
			continue
		}
		if typ, _ := problemOf(t, r)["type"].(string); !strings.HasSuffix(typ, "/"+tc.typ) {
			t.Errorf("%s %s: type %q, want %s", tc.method, tc.path, typ, tc.typ)
		}
		if tc.allow != "" && !strings.Contains(r.header.Get("Allow"), tc.allow) {
			t.Errorf("%s %s: Allow %q lacks %s", tc.method, tc.path, r.header.Get("Allow"), tc.allow)
		}
	}
}
