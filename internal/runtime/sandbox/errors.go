package sandbox

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Calls return them wrapped in a *CallError; branch with
// errors.Is. A guest's own error channel (abi.StatusError) is not one of
// these: it is returned as the decoded *abi.Error.
var (
	// ErrDeadline: the call ran past min(ctx deadline, Limits.CallTimeout).
	ErrDeadline = errors.New("sandbox: call deadline exceeded")
	// ErrTrap: the guest trapped or exited (panic, unreachable, stack
	// exhaustion, proc_exit).
	ErrTrap = errors.New("sandbox: guest trapped")
	// ErrMemoryLimit: the guest tried to grow its memory past
	// Limits.MemoryBytes.
	ErrMemoryLimit = errors.New("sandbox: guest memory limit exceeded")
	// ErrInputTooLarge: the request exceeds Limits.MaxInput; the guest was
	// not called.
	ErrInputTooLarge = errors.New("sandbox: input too large")
	// ErrOutputTooLarge: the guest's output exceeds Limits.MaxOutput.
	ErrOutputTooLarge = errors.New("sandbox: output too large")
	// ErrABI: the module or one of its results breaks the ABI (missing or
	// mistyped export, wrong version, out-of-bounds result, bad envelope).
	ErrABI = errors.New("sandbox: ABI violation")
	// ErrBusy: no instance could be had in time: the tenant's wait queue
	// was full, the wait outlasted Limits.QueueTimeout or the caller's
	// context, or the host's global instance cap stayed full. The
	// CallError's RetryAfter suggests when to try again.
	ErrBusy = errors.New("sandbox: no free instance")
	// ErrClosed: the host was closed.
	ErrClosed = errors.New("sandbox: closed")
)

// CallError reports a failed call into a tenant's sandbox.
type CallError struct {
	Tenant string
	Export string
	// Err is one of the sentinel errors above, or context.Canceled when the
	// caller cancelled a running call.
	Err error
	// Detail is diagnostic text: the runtime's message and, for traps, the
	// last lines the guest wrote to stdout/stderr.
	Detail string
	// RetryAfter is set with ErrBusy: an estimate of when an instance is
	// likely to be free (HTTP Retry-After, rounded up to whole seconds).
	RetryAfter time.Duration
}

func (e *CallError) Error() string {
	msg := fmt.Sprintf("tenant %q: %s: %v", e.Tenant, e.Export, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *CallError) Unwrap() error { return e.Err }
