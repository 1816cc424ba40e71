// Package problem owns the RFC 9457 problem documents every client-facing
// error becomes: stable types, statuses and hints, the same over HTTP and MCP.
package problem

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/session"
)

// Problem is an RFC 9457 problem document; every error a client sees over
// HTTP is one, and MCP tool errors carry the same fields as text.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Hint   string `json:"hint,omitempty"`
	Code   string `json:"code,omitempty"`
	// RetryAfter, in seconds, is sent as a Retry-After header with 429s.
	RetryAfter int `json:"retry_after,omitempty"`
}

func (p *Problem) Error() string {
	s := p.Detail
	if p.Line > 0 {
		s = fmt.Sprintf("%d:%d: %s", p.Line, p.Column, s)
	}
	if p.Hint != "" {
		s += "\nhint: " + p.Hint
	}
	return s
}

const Base = "https://plasmd.dev/problems/"

func New(status int, typ, detail string) *Problem {
	return &Problem{Type: Base + typ, Title: http.StatusText(status), Status: status, Detail: detail}
}

// BadRequest and NotFound build problems for input errors.
func BadRequest(typ, format string, args ...any) *Problem {
	return New(http.StatusBadRequest, typ, fmt.Sprintf(format, args...))
}

func NotFound(format string, args ...any) *Problem {
	return New(http.StatusNotFound, "not-found", fmt.Sprintf(format, args...))
}

// From maps any error from the service to a problem with a stable type.
// Unknown errors become a 500 whose detail is generic: internal text and
// stacks never reach clients.
func From(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var ae *abi.Error
	if errors.As(err, &ae) {
		status := http.StatusBadRequest
		typ := "program-" + ae.Code
		switch ae.Code {
		case abi.CodeInternal:
			status, typ = http.StatusInternalServerError, "engine-internal"
		case abi.CodeCompile, abi.CodeCatalog:
			status, typ = http.StatusUnprocessableEntity, "catalog-"+ae.Code
		case abi.CodeDecode:
			status, typ = http.StatusBadGateway, "backend-response"
		}
		return &Problem{Type: Base + typ, Title: http.StatusText(status), Status: status, Detail: ae.Message, Line: ae.Line, Column: ae.Column, Hint: ae.Hint, Code: ae.Code}
	}
	switch {
	case errors.Is(err, session.ErrUnavailable):
		p := New(http.StatusServiceUnavailable, "store-unavailable", "the session store is unreachable; nothing was changed")
		p.RetryAfter = 1
		p.Hint = "retry after 1s"
		return p
	case errors.Is(err, session.ErrTooLarge):
		return New(http.StatusInsufficientStorage, "artifact-too-large", err.Error())
	case errors.Is(err, session.ErrExpired):
		p := New(http.StatusGone, "session-expired", err.Error())
		p.Hint = "call plasm_context again with the same intent (or POST /execute) to open a new session"
		return p
	case errors.Is(err, session.ErrNotFound):
		return New(http.StatusNotFound, "not-found", err.Error())
	case errors.Is(err, session.ErrQuota):
		return New(http.StatusTooManyRequests, "quota-exceeded", err.Error())
	case errors.Is(err, sandbox.ErrBusy):
		p := New(http.StatusTooManyRequests, "busy", "the tenant's sandboxes are all busy")
		p.RetryAfter = 1
		var ce *sandbox.CallError
		if errors.As(err, &ce) && ce.RetryAfter > 0 {
			p.RetryAfter = int(math.Ceil(ce.RetryAfter.Seconds()))
		}
		p.Hint = fmt.Sprintf("retry after %ds", p.RetryAfter)
		return p
	case errors.Is(err, sandbox.ErrDeadline):
		return New(http.StatusGatewayTimeout, "sandbox-deadline", "catalog logic exceeded its time limit")
	case errors.Is(err, sandbox.ErrMemoryLimit):
		return New(http.StatusUnprocessableEntity, "sandbox-memory", "catalog logic exceeded its memory limit")
	case errors.Is(err, sandbox.ErrInputTooLarge) && isDecode(err):
		// The backend's answer, not the client's request, was too big.
		return New(http.StatusBadGateway, "backend-too-large", "the backend's response is larger than the sandbox accepts")
	case errors.Is(err, sandbox.ErrInputTooLarge), errors.Is(err, sandbox.ErrOutputTooLarge):
		return New(http.StatusRequestEntityTooLarge, "sandbox-size", err.Error())
	case errors.Is(err, sandbox.ErrTrap), errors.Is(err, sandbox.ErrABI):
		return New(http.StatusBadGateway, "sandbox-trap", "catalog logic failed; the instance was discarded")
	case errors.Is(err, egress.ErrDenied):
		return New(http.StatusForbidden, "egress-denied", err.Error())
	case errors.Is(err, egress.ErrTimeout):
		return New(http.StatusGatewayTimeout, "backend-timeout", err.Error())
	case errors.Is(err, egress.ErrTooLarge):
		return New(http.StatusBadGateway, "backend-too-large", err.Error())
	case errors.Is(err, egress.ErrSecret):
		return New(http.StatusFailedDependency, "secret-missing", err.Error())
	case errors.Is(err, egress.ErrTransport):
		return New(http.StatusBadGateway, "backend-unreachable", err.Error())
	case errors.Is(err, executor.ErrBackend), errors.Is(err, executor.ErrNotFound):
		p, _ := backendProblem(err)
		return p
	case errors.Is(err, executor.ErrBudget):
		return New(http.StatusUnprocessableEntity, "run-budget", err.Error())
	case errors.Is(err, executor.ErrPageMax):
		return New(http.StatusUnprocessableEntity, "page-max", err.Error())
	case errors.Is(err, executor.ErrPagesOverlap):
		return New(http.StatusBadGateway, "pages-overlap", err.Error())
	case errors.Is(err, executor.ErrFanOut):
		return New(http.StatusUnprocessableEntity, "fan-out", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return New(http.StatusGatewayTimeout, "timeout", "the request took too long")
	case errors.Is(err, context.Canceled):
		return New(499, "canceled", "the request was canceled")
	}
	var xe *executor.Error
	if errors.As(err, &xe) {
		// What is left is the program asking for something its data cannot
		// give (a reference to a result with no rows, a field a step
		// dropped): the client's to fix, not a gateway failure.
		return New(http.StatusUnprocessableEntity, "run-failed", err.Error())
	}
	return New(http.StatusInternalServerError, "internal", "internal error")
}

// isDecode reports whether a sandbox error came from decoding a response.
func isDecode(err error) bool {
	var ce *sandbox.CallError
	return errors.As(err, &ce) && (ce.Export == abi.ExportDecode || strings.HasPrefix(ce.Export, "plasm_hook_"))
}
