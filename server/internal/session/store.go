// Package session owns plasmd's session state: logical sessions (one per
// tenant and intent), the per-transport refs that name them (s0, s1, …),
// execute sessions with their symbol maps and teaching exposure, run
// artifacts and paging continuations.
//
// All state lives behind Store. Values cross the boundary by copy and
// serialise to JSON, so a shared (e.g. Redis) implementation can replace the
// in-memory one without touching callers: Memory deep-copies every value
// it stores through JSON and every value it returns, so code that works
// against it never relies on shared pointers. A Redis store would keep one
// JSON document per Logical, Execute, Run and Page under keys scoped by
// tenant, map (tenant, intent) and (transport, ref) with SETNX so
// concurrent opens agree on one id (one hash per transport, so
// ForgetTransport is a single DEL), use INCR for NextSeq, and express the
// idle TTL as a key expiry refreshed by GetExecute (distinguishing
// ErrExpired from ErrNotFound with a short-lived tombstone). Server code reaches the store only through this interface and
// server.Config.SessionStore injects one.
package session

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

// Errors callers branch on.
var (
	// ErrNotFound: no such session, ref, run or handle for this tenant.
	// Another tenant's objects are also "not found" (no existence oracle).
	ErrNotFound = errors.New("not found")
	// ErrExpired: the execute session existed but its idle TTL passed.
	ErrExpired = errors.New("execute session expired")
)

// Binding names the execute session a logical session currently uses.
type Binding struct {
	PromptHash string `json:"prompt_hash"`
	SessionID  string `json:"session_id"`
}

// Logical is the canonical session for one (tenant, intent).
type Logical struct {
	ID      string   `json:"id"`
	Tenant  string   `json:"tenant"`
	Intent  string   `json:"intent"`
	Binding *Binding `json:"binding,omitempty"`
}

// Execute is one execute session: a symbol space and its teaching exposure.
type Execute struct {
	Tenant     string `json:"tenant"`
	PromptHash string `json:"prompt_hash"`
	ID         string `json:"id"`
	LogicalID  string `json:"logical_id,omitempty"`
	ReuseKey   string `json:"reuse_key"`
	// Principal is the person the session acts for when auth is delegated;
	// only that principal's requests may use the session.
	Principal string `json:"principal,omitempty"`
	// Entries are the catalogs in the session: primary first, then
	// federated ones in the order they joined.
	Entries []string `json:"entries"`
	// Digests pins each entry's catalog digest at exposure time.
	Digests  map[string]string `json:"digests"`
	Symbols  symbol.Map        `json:"symbols"`
	Exposure teaching.Exposure `json:"exposure"`
	// Prompt is the cumulative teaching text (first wave plus deltas).
	Prompt         string    `json:"prompt"`
	DomainRevision int       `json:"domain_revision"`
	Created        time.Time `json:"created"`
	LastUsed       time.Time `json:"last_used"`
}

// Clone returns a deep copy sharing no memory with e.
func (e Execute) Clone() Execute {
	c := e
	c.Entries = slices.Clone(e.Entries)
	c.Digests = maps.Clone(e.Digests)
	c.Symbols = *e.Symbols.Clone()
	c.Exposure = e.Exposure.Clone()
	return c
}

// Key returns the binding that names this execute session.
func (e *Execute) Key() Binding { return Binding{PromptHash: e.PromptHash, SessionID: e.ID} }

// RunRoot is one stored result.
type RunRoot struct {
	Label      string    `json:"label"`
	EntryID    string    `json:"entry_id,omitempty"`
	Entity     string    `json:"entity,omitempty"`
	Table      abi.Table `json:"table"`
	PageHandle string    `json:"page_handle,omitempty"`
}

// Run is a run artifact.
type Run struct {
	Tenant     string    `json:"tenant"`
	Principal  string    `json:"principal,omitempty"`
	LogicalID  string    `json:"logical_id,omitempty"`
	PromptHash string    `json:"prompt_hash"`
	SessionID  string    `json:"session_id"`
	RunID      string    `json:"run_id"`
	N          int       `json:"n"` // short index r/{n} within the logical (or execute) session
	Program    string    `json:"program"`
	Created    time.Time `json:"created"`
	Roots      []RunRoot `json:"roots"`
}

// Page is a stored continuation behind a handle sN_pgM.
type Page struct {
	Tenant       string                `json:"tenant"`
	Scope        string                `json:"scope"` // logical session id, or execute session id for HTTP
	N            int                   `json:"n"`
	Continuation executor.Continuation `json:"continuation"`
}

// Store is the session state. Implementations must be safe for concurrent
// use and must never return another tenant's objects.
//
// State is bounded by idleness, not kept forever: an execute session idle
// past the TTL expires (with its HTTP-scoped runs, pages and counters), and
// a logical session whose binding is gone and that has not been used for a
// further TTL is removed with its refs, counters, runs and pages. Anything
// that named a removed object (a ref, an r/N, a paging handle, a canonical
// run id) then reads as ErrNotFound.
type Store interface {
	// OpenLogical returns the logical session for (tenant, intent), creating
	// it on first use; the same pair always yields the same id.
	OpenLogical(ctx context.Context, tenant, intent string) (Logical, error)
	GetLogical(ctx context.Context, tenant, id string) (Logical, error)
	BindLogical(ctx context.Context, tenant, id string, b Binding) error

	// RefFor names a logical session on a transport: s0, s1, … in order of
	// first use; stable for the same (transport, logical id).
	RefFor(ctx context.Context, transport, tenant, logicalID string) (string, error)
	// ResolveRef returns the logical id a transport's ref names.
	ResolveRef(ctx context.Context, transport, tenant, ref string) (string, error)
	// ForgetTransport drops every ref minted on a transport (call it when
	// the MCP session closes). The logical sessions they named live on and
	// keep their other refs; forgetting an unknown transport is not an
	// error. A later RefFor on the same transport starts again at s0.
	ForgetTransport(ctx context.Context, transport string) error

	PutExecute(ctx context.Context, e Execute) error
	// GetExecute returns a live execute session and marks it used;
	// ErrExpired when its idle TTL passed, ErrNotFound otherwise.
	GetExecute(ctx context.Context, tenant, promptHash, id string) (Execute, error)
	// FindReusable returns a live execute session with this reuse key.
	FindReusable(ctx context.Context, tenant, reuseKey string) (Execute, error)

	// NextSeq returns the next number (1, 2, …) of a counter in a scope.
	NextSeq(ctx context.Context, tenant, scope, counter string) (int, error)

	PutRun(ctx context.Context, r Run) error
	GetRun(ctx context.Context, tenant, promptHash, sessionID, runID string) (Run, error)
	GetRunByIndex(ctx context.Context, tenant, scope string, n int) (Run, error)
	ListRuns(ctx context.Context, tenant, promptHash, sessionID string) ([]Run, error)

	PutPage(ctx context.Context, p Page) error
	GetPage(ctx context.Context, tenant, scope string, n int) (Page, error)

	// Review gating (commits.go) and long operations (operations.go).
	PlanCommits
	Operations
}
