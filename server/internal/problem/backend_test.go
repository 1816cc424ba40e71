package problem

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/executor"
)

// Backend outcomes map to the same problem whichever surface reports them
// (HTTP writes the problem, MCP's toolError carries it as structured
// content): both go through toProblem.
func TestBackendProblems(t *testing.T) {
	be := func(status int, msg, retry string) error {
		return &executor.Error{Node: 0, Op: "fetch", Err: &executor.BackendError{Capability: "post_get", Status: status, Message: "decode post_get: backend answered " + msg, RetryAfter: retry}}
	}
	for _, tc := range []struct {
		err    error
		status int
		typ    string
		detail string
		retry  int
	}{
		{&executor.Error{Err: &executor.NotFoundError{Entity: "Post", ID: "abc", Capability: "post_get"}}, 404, "not-found", `Post "abc" not found (post_get)`, 0},
		{&executor.Error{Err: &executor.NotFoundError{Entity: "Post", ID: 999.0, Capability: "post_get"}}, 404, "not-found", `Post 999 not found`, 0},
		{be(401, "401 Unauthorized: token [redacted] is wrong", ""), 502, "backend-unauthorized", "the backend refused post_get (401 Unauthorized): token [redacted] is wrong", 0},
		{be(429, "429 Too Many Requests", "12"), 503, "backend-busy", "429 Too Many Requests after retries", 12},
		{be(503, "503 Service Unavailable", "Wed, 21 Oct 2015 07:28:00 GMT"), 503, "backend-busy", "503", 1},
		{be(409, "409 Conflict: title taken", ""), 422, "backend-rejected", "the backend rejected post_get (409 Conflict): title taken", 0},
		{be(500, "500 Internal Server Error: boom", ""), 502, "backend-error", "post_get failed: the backend answered 500 Internal Server Error: boom", 0},
	} {
		p := From(tc.err)
		if p.Status != tc.status || !strings.HasSuffix(p.Type, "/"+tc.typ) || !strings.Contains(p.Detail, tc.detail) || p.RetryAfter != tc.retry {
			t.Errorf("%v → %+v, want %d %s %q retry %d", tc.err, p, tc.status, tc.typ, tc.detail, tc.retry)
		}
	}
	if got := retryAfterSeconds(time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC).Format(http.TimeFormat), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); got != 30 {
		t.Errorf("HTTP-date Retry-After: %d, want 30", got)
	}
	if got := retryAfterSeconds("999999", time.Now()); got != 3600 {
		t.Errorf("huge Retry-After: %d, want the 3600 cap", got)
	}
}
