package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Review gating (language.md, "Plans, verdicts and long operations"): a dry
// run of a review plan mints a plan_commit_ref pcN, a promise that the same
// semantic plan may run live once in the same session within
// planCommitTTL. A live run of a review plan needs a matching pcN or force;
// otherwise it is refused with the dry-run summary and how to proceed.

// planCommitTTL is how long a pcN stays valid.
const planCommitTTL = 10 * time.Minute

// Gate is what a live run presents to pass review gating.
type Gate struct {
	Force         bool
	PlanCommitRef string
}

// planHash hashes the semantic plan: what runs, in what order, with which
// arguments and outputs, but not where or under which labels the program
// text wrote it, so the same program with other spacing, symbols instead
// of wire names or other binding names can still use the commit.
func planHash(p *plan.Plan) (string, error) {
	nodes := make([]plan.Node, len(p.Nodes))
	for i, n := range p.Nodes {
		// Positions and labels are presentation: an unbound root is
		// labelled by its source text, a bound one by the agent's name.
		n.Line, n.Column, n.Label = 0, 0, ""
		nodes[i] = n
	}
	roots := make([]int, len(p.Roots))
	for i, r := range p.Roots {
		roots[i] = r.Node
	}
	b, err := json.Marshal(struct {
		Nodes []plan.Node `json:"nodes"`
		Roots []int       `json:"roots"`
		Order []int       `json:"order"`
	}{nodes, roots, p.Order})
	if err != nil {
		return "", fmt.Errorf("hash plan: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// CommitPlan mints a pcN for a review plan in a scope; an ok plan needs
// none and gets "".
func (s *Service) CommitPlan(ctx context.Context, t *tenant.Tenant, scope string, p *plan.Plan) (string, error) {
	if p.Verdict != plan.VerdictReview {
		return "", nil
	}
	h, err := planHash(p)
	if err != nil {
		return "", err
	}
	n, err := s.store.NextSeq(ctx, t.ID, scope, "commit")
	if err != nil {
		return "", err
	}
	if err := s.store.PutPlanCommit(ctx, session.PlanCommit{Tenant: t.ID, Scope: scope, N: n, PlanHash: h, Summary: p.Summary}, planCommitTTL); err != nil {
		return "", err
	}
	return "pc" + strconv.Itoa(n), nil
}

// checkGate lets a plan run or refuses it. ok plans always run; review
// plans run with force, or with a pcN minted for this plan in this scope,
// which is consumed.
func (s *Service) checkGate(ctx context.Context, t *tenant.Tenant, scope string, p *plan.Plan, g Gate) error {
	if p.Verdict != plan.VerdictReview || g.Force {
		return nil
	}
	ref := strings.TrimSpace(g.PlanCommitRef)
	if ref == "" {
		return reviewRefused(p, "this plan needs review before it runs live")
	}
	n, err := strconv.Atoi(strings.TrimPrefix(ref, "pc"))
	if !strings.HasPrefix(ref, "pc") || err != nil || n <= 0 {
		pr := problem.BadRequest("bad-plan-commit-ref", "%q is not a plan_commit_ref (they look like pc1 and come from a plasm dry run)", ref)
		return pr
	}
	h, err := planHash(p)
	if err != nil {
		return err
	}
	_, err = s.store.TakePlanCommit(ctx, t.ID, scope, n, h)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrPlanMismatch):
		return reviewRefused(p, ref+" was minted for a different plan")
	case errors.Is(err, session.ErrNotFound):
		return reviewRefused(p, ref+" is unknown in this session, expired (valid 10 minutes) or already used")
	}
	return err
}

// reviewRefused is the refusal of a review plan: the dry-run summary and
// reasons, then how to proceed.
func reviewRefused(p *plan.Plan, why string) *problem.Problem {
	var b strings.Builder
	b.WriteString(why + ": " + p.Summary)
	for _, r := range p.Reasons {
		b.WriteString("\nreview: " + r)
	}
	pr := problem.New(http.StatusPreconditionRequired, "review-required", b.String())
	pr.Hint = "dry-run this program with plasm (HTTP: ?mode=plan) and pass the plan_commit_ref it returns (pcN, single use, valid 10 minutes), " +
		"or pass force: true (HTTP: ?force=true) to run it as is; bounding reads with .limit(n) and projecting [fields] avoids review"
	return pr
}
