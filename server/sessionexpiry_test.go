package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server"
)

// TestExecuteSessionExpiredAskedAgain: an execute session past its idle TTL
// answers 410 session-expired on every request while its expiry is known
// (it was 410 once, then 404 not-found on the same URL), and 404 once the
// tombstone has gone a TTL later.
func TestExecuteSessionExpiredAskedAgain(t *testing.T) {
	clk := newFakeClock()
	f := newFixture(t, server.Config{SessionIdleTTL: time.Minute, Clock: clk.Now})
	path := f.open(t, "tracker", "Issue")
	if r := f.do(t, "POST", path, "text/plain", `Issue("iss-1")[id]`); r.status != http.StatusOK {
		t.Fatalf("live session: %d %s", r.status, r.body)
	}
	clk.Advance(2 * time.Minute)
	for i := range 3 {
		r := f.do(t, "POST", path, "text/plain", `Issue("iss-1")[id]`)
		if r.status != http.StatusGone || !strings.HasSuffix(problemOf(t, r)["type"].(string), "/session-expired") {
			t.Fatalf("request %d after expiry: %d %s", i+1, r.status, r.body)
		}
	}
	clk.Advance(2 * time.Minute)
	if r := f.do(t, "POST", path, "text/plain", `Issue("iss-1")[id]`); r.status != http.StatusNotFound {
		t.Fatalf("a TTL after expiry: %d %s", r.status, r.body)
	}
}
