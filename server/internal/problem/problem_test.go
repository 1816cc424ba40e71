package problem

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/session"
)

// Every error kind a client can cause or meet maps to a stable problem
// type and status; nothing falls through to a generic 500 except genuinely
// unknown errors, whose text never reaches the client.
func TestToProblem(t *testing.T) {
	busy := &sandbox.CallError{Tenant: "a", Export: abi.ExportPlan, Err: sandbox.ErrBusy, RetryAfter: 2500 * time.Millisecond}
	for _, tc := range []struct {
		err    error
		status int
		typ    string
	}{
		{&abi.Error{Code: abi.CodeSyntax, Message: "x", Line: 1, Column: 2}, 400, "program-syntax"},
		{&abi.Error{Code: abi.CodeUnknownEntity, Message: "x"}, 400, "program-unknown_entity"},
		{&abi.Error{Code: abi.CodeCompile, Message: "x"}, 422, "catalog-compile"},
		{&abi.Error{Code: abi.CodeDecode, Message: "x"}, 502, "backend-response"},
		{&abi.Error{Code: abi.CodeInternal, Message: "x"}, 500, "engine-internal"},
		{fmt.Errorf("wrapped: %w", session.ErrExpired), 410, "session-expired"},
		{session.ErrNotFound, 404, "not-found"},
		{busy, 429, "busy"},
		{&sandbox.CallError{Err: sandbox.ErrDeadline}, 504, "sandbox-deadline"},
		{&sandbox.CallError{Err: sandbox.ErrMemoryLimit}, 422, "sandbox-memory"},
		{&sandbox.CallError{Err: sandbox.ErrOutputTooLarge}, 413, "sandbox-size"},
		{&sandbox.CallError{Err: sandbox.ErrTrap, Detail: "panic: secret stack"}, 502, "sandbox-trap"},
		{fmt.Errorf("x: %w", egress.ErrDenied), 403, "egress-denied"},
		{fmt.Errorf("x: %w", egress.ErrTimeout), 504, "backend-timeout"},
		{fmt.Errorf("x: %w", egress.ErrSecret), 424, "secret-missing"},
		{&executor.Error{Node: 1, Err: executor.ErrFanOut}, 422, "fan-out"},
		{&executor.Error{Node: 0, Err: &executor.MaxPagesError{Capability: "pc_query", Entity: "Pc", Counter: "page 2", Pages: 2, Rows: 6}}, 422, "page-max"},
		{&executor.Error{Node: 0, Err: &executor.OverlapError{Capability: "pokemon_query", Entity: "Pokemon", Page: 2, Repeated: 19, Rows: 20}}, 502, "pages-overlap"},
		{context.DeadlineExceeded, 504, "timeout"},
		{&executor.Error{Node: 2, Err: errors.New("argument issue_id takes id from a result with 0 rows")}, 422, "run-failed"},
		{&sandbox.CallError{Export: abi.ExportDecode, Err: sandbox.ErrInputTooLarge}, 502, "backend-too-large"},
		{&sandbox.CallError{Export: abi.ExportPlan, Err: sandbox.ErrInputTooLarge}, 413, "sandbox-size"},
		{errors.New("something internal with /home/secret/path"), 500, "internal"},
	} {
		p := From(tc.err)
		if p.Status != tc.status || p.Type != Base+tc.typ {
			t.Errorf("%v → %d %s, want %d %s", tc.err, p.Status, p.Type, tc.status, tc.typ)
		}
		if strings.Contains(p.Detail, "secret stack") || strings.Contains(p.Detail, "/home/secret") {
			t.Errorf("%v leaks internal text: %q", tc.err, p.Detail)
		}
	}
	if p := From(busy); p.RetryAfter != 3 || !strings.Contains(p.Hint, "retry after 3s") {
		t.Errorf("busy retry hint: %+v", p)
	}
}
