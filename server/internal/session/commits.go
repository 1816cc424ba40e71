package session

import (
	"context"
	"errors"
	"time"
)

// ErrPlanMismatch: a plan_commit_ref exists but was minted for another
// plan; it is not consumed.
var ErrPlanMismatch = errors.New("plan_commit_ref was minted for a different plan")

// PlanCommit is what a dry run of a review plan promises: the live run of
// the same semantic plan (PlanHash) in the same scope before Expires may go
// ahead once. It is named pcN to the agent.
type PlanCommit struct {
	Tenant   string    `json:"tenant"`
	Scope    string    `json:"scope"` // logical session id, or execute session id for HTTP
	N        int       `json:"n"`
	PlanHash string    `json:"plan_hash"`
	Summary  string    `json:"summary"`
	Expires  time.Time `json:"expires"`
}

// PlanCommits stores plan commits. A Redis store keeps one key per commit
// with the remaining validity as its expiry, and takes it with a
// compare-and-delete (a Lua script or WATCH/MULTI) so two concurrent runs
// can never both consume one commit.
type PlanCommits interface {
	// PutPlanCommit stores a commit valid for ttl by the store's clock (it
	// sets Expires); N comes from NextSeq(scope, "commit").
	PutPlanCommit(ctx context.Context, c PlanCommit, ttl time.Duration) error
	// TakePlanCommit consumes commit n of a scope if its hash matches:
	// ErrNotFound when it is unknown, expired, already used or another
	// tenant's; ErrPlanMismatch (not consumed) when the hash differs.
	TakePlanCommit(ctx context.Context, tenant, scope string, n int, planHash string) (PlanCommit, error)
}
