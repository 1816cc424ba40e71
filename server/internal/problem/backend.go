package problem

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/executor"
)

// maxBackendMessage caps how much of a backend's own explanation a problem
// repeats: enough to act on, never a whole error page.
const maxBackendMessage = 300

// backendProblem maps what a backend answered to a stable problem type,
// the same over HTTP and MCP: not-found (404) names the entity and id;
// backend-unauthorized (401/403) quotes the backend's reason (the executor
// has already removed the request's credential from it); backend-busy (429/503, after the egress retries) carries
// Retry-After; backend-rejected (other 4xx) quotes the backend's message,
// capped; everything else is backend-error (502). ok is false for errors
// that are not backend outcomes.
func backendProblem(err error) (p *Problem, ok bool) {
	var nf *executor.NotFoundError
	if errors.As(err, &nf) {
		p := New(http.StatusNotFound, "not-found", nf.Error())
		p.Hint = fmt.Sprintf("check the id; list %s rows to see which exist", nf.Entity)
		return p, true
	}
	var be *executor.BackendError
	if !errors.As(err, &be) {
		return nil, false
	}
	status := fmt.Sprintf("%d %s", be.Status, http.StatusText(be.Status))
	switch {
	case be.Status == http.StatusUnauthorized || be.Status == http.StatusForbidden:
		p := New(http.StatusBadGateway, "backend-unauthorized", fmt.Sprintf("the backend refused %s (%s)%s", be.Capability, status, quoted(be.Detail())))
		p.Hint = "the catalog's credentials are missing, wrong or lack permission: check the tenant's secret for this catalog"
		return p, true
	case be.Status == http.StatusTooManyRequests || be.Status == http.StatusServiceUnavailable:
		p := New(http.StatusServiceUnavailable, "backend-busy", fmt.Sprintf("the backend is busy: %s answered %s after retries", be.Capability, status))
		p.RetryAfter = retryAfterSeconds(be.RetryAfter, time.Now())
		p.Hint = fmt.Sprintf("retry after %ds", p.RetryAfter)
		return p, true
	case be.Status == http.StatusNotFound:
		return New(http.StatusBadGateway, "backend-error", fmt.Sprintf("%s answered %s%s", be.Capability, status, quoted(be.Detail()))), true
	case be.Status >= 400 && be.Status < 500:
		p := New(http.StatusUnprocessableEntity, "backend-rejected", fmt.Sprintf("the backend rejected %s (%s)%s", be.Capability, status, quoted(be.Detail())))
		p.Hint = "the backend's message says what it did not accept; change the arguments accordingly"
		return p, true
	}
	return New(http.StatusBadGateway, "backend-error", fmt.Sprintf("%s failed: the backend answered %s%s", be.Capability, status, quoted(be.Detail()))), true
}

// quoted is ": msg" capped at maxBackendMessage bytes on a rune boundary,
// or "" for no message.
func quoted(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	if len(msg) > maxBackendMessage {
		cut := maxBackendMessage
		for cut > 0 && msg[cut]&0xC0 == 0x80 {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return ": " + msg
}

// retryAfterSeconds reads a Retry-After value (delay seconds or an HTTP
// date) as whole seconds, at least 1 and at most an hour.
func retryAfterSeconds(v string, now time.Time) int {
	secs := 1
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		secs = n
	} else if t, err := http.ParseTime(v); err == nil {
		secs = int(t.Sub(now).Round(time.Second) / time.Second)
	}
	return min(max(secs, 1), 3600)
}
