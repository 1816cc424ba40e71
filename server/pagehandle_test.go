package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
)

// TestPageHandleBeforeReview: a page(…) handle is resolved before the
// review gate, so a handle that names nothing is refused at once (it was
// 428 review-required, and only a forced run said the handle was bad),
// over HTTP and MCP alike.
func TestPageHandleBeforeReview(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	for _, tc := range []struct {
		program string
		status  int
		typ     string
	}{
		{"page(s0_pg999999)", http.StatusNotFound, "/not-found"},
		{"page(s0_pg1)", http.StatusNotFound, "/not-found"},
		{"page(s99_pg1)", http.StatusBadRequest, "/bad-handle"},
	} {
		r := f.do(t, "POST", path+"?force=false", "text/plain", tc.program)
		if r.status != tc.status || !strings.HasSuffix(problemOf(t, r)["type"].(string), tc.typ) {
			t.Errorf("HTTP %s: %d %s, want %d %s", tc.program, r.status, r.body, tc.status, tc.typ)
		}
	}

	cs := f.mcpClient(t)
	contextCall(t, cs, "issues", "tracker:Issue")
	o := call(t, cs, "plasm_run", runArgs("page(s0_pg999999)", "force", false))
	if !o.isError || !strings.Contains(o.text, "paging handle s0_pg999999 is unknown") || strings.Contains(o.text, "review") {
		t.Errorf("MCP page(s0_pg999999): %s", o.text)
	}
}
