package session

import (
	"context"
	"errors"
	"time"
)

// ErrTooManyOperations: a session already has the maximum number of
// unfinished operations.
var ErrTooManyOperations = errors.New("too many running operations")

// Operation states, in the order an operation moves through them; the last
// three are final.
const (
	OpAccepted  = "accepted"
	OpRunning   = "running"
	OpDone      = "done"
	OpCancelled = "cancelled"
	OpFailed    = "failed"
)

// Operation is a run working in the background, named sN_oM to the agent.
// The goroutine doing the work lives on one replica; everything an agent
// asks about it (wait, cancel) goes through the store, so any replica can
// answer and a cancel reaches the worker wherever it runs.
type Operation struct {
	Tenant  string `json:"tenant"`
	Scope   string `json:"scope"` // logical session id, or execute session id for HTTP
	N       int    `json:"n"`
	Handle  string `json:"handle"`
	Program string `json:"program"`
	Summary string `json:"summary"`
	Verdict string `json:"verdict"`
	State   string `json:"state"`
	// CancelRequested is set by cancel(…); the worker stops before its
	// next backend call. Once set it stays set.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	Calls           int  `json:"calls"`
	// RunN is the run artifact (r/N in the scope) holding the result.
	RunN  int    `json:"run_n,omitempty"`
	Error string `json:"error,omitempty"`
	// Owner names the process running the worker (see core's opowner.go);
	// whether it is alive is judged by its lease (OpLeases), on the
	// store's clock. Deadline is when the worker's own time limit ends it,
	// on the owner's clock: informative, never compared with another
	// process's clock.
	Owner    string    `json:"owner,omitempty"`
	Deadline time.Time `json:"deadline,omitempty"`
	// Leased says the owner keeps a lease for it. A record without it
	// was written by a plasmd from before leases (a rolling upgrade) and
	// is judged by its owner's deadline, as that plasmd judged it.
	Leased  bool      `json:"leased,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Final reports whether the operation has stopped.
func (o Operation) Final() bool {
	return o.State == OpDone || o.State == OpCancelled || o.State == OpFailed
}

// Operations stores operation records. A Redis store keeps one JSON
// document per operation and a per-scope set of unfinished handles, and
// starts an operation with a script that checks the set's size and adds
// to it atomically.
type Operations interface {
	// StartOperation records a new operation unless its scope already has
	// max unfinished ones (ErrTooManyOperations). N comes from
	// NextSeq(scope, "op").
	StartOperation(ctx context.Context, op Operation, max int) error
	GetOperation(ctx context.Context, tenant, scope string, n int) (Operation, error)
	// UpdateOperation stores progress or a new state. A recorded cancel
	// request is never cleared, a final state is never left, and the call
	// count never goes down (progress writes may land out of order, and a
	// waiter recording a dead owner's end may hold an older count).
	UpdateOperation(ctx context.Context, op Operation) error
	// RequestCancel marks an unfinished operation for cancellation and
	// returns it; a finished one is returned unchanged.
	RequestCancel(ctx context.Context, tenant, scope string, n int) (Operation, error)
	// Owner leases of running operations (oplease.go).
	OpLeases
}
