package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// AuditRingSize is how many records the in-memory ring keeps for
// GET /v1/audit (the JSON lines file, when configured, keeps them all).
const AuditRingSize = 10000

// audited reports whether a plan's run must be recorded: it writes (a
// create, update, delete or action) or its verdict asks for review.
func audited(p *plan.Plan) bool {
	if p.Verdict == plan.VerdictReview {
		return true
	}
	for _, n := range p.Nodes {
		if n.Effect == plan.EffectWrite {
			return true
		}
	}
	return false
}

// PlanHash is the sha256 of a plan's canonical JSON: what the audit log
// and review refer to.
func PlanHash(p *plan.Plan) string {
	s := sha256.Sum256(p.AppendJSON(nil))
	return hex.EncodeToString(s[:])
}

// auditRun records a finished (or failed) run of an audited plan. Every
// secret the run could resolve is redacted from the program and error
// text first, so a program that quotes a token does not put it in the log.
func (s *Service) auditRun(ctx context.Context, t *tenant.Tenant, sc RunScope, program string, p *plan.Plan,
	res *executor.Result, runID string, runErr error, secrets func(string) egress.Secrets) {
	if s.audit == nil || !audited(p) {
		return
	}
	rec := audit.Record{
		Tenant: t.ID, Principal: t.Principal, Action: "run",
		Session: sc.Execute.PromptHash + "/" + sc.Execute.ID, RunID: runID,
		Program: program, PlanHash: PlanHash(p), Verdict: p.Verdict, CommitRef: sc.CommitRef, Outcome: "ok",
	}
	if res != nil {
		for _, st := range res.Steps {
			if st.Calls == 0 {
				continue
			}
			c := audit.Call{Node: st.Node, Op: st.Op, Entity: st.Entity, Calls: st.Calls}
			if st.Node >= 0 && st.Node < len(p.Nodes) {
				n := p.Nodes[st.Node]
				c.EntryID, c.Capability, c.Effect = n.EntryID, n.Capability, n.Effect
			}
			rec.Calls = append(rec.Calls, c)
		}
	}
	if runErr != nil {
		pr := problem.From(runErr)
		rec.Outcome, rec.Error = "error", pr.Type+": "+pr.Detail
	}
	rec = audit.Redact(rec, s.secretValues(t, sc.Execute.Entries, secrets))
	if err := s.audit.Append(ctx, rec); err != nil {
		s.log.Error("audit log append failed", "tenant", t.ID, "err", err)
	}
}

// secretValues lists every secret value a run over entries could
// resolve, plus all the tenant's configured ones.
func (s *Service) secretValues(t *tenant.Tenant, entries []string, secrets func(string) egress.Secrets) []string {
	out := []string{t.AccessToken}
	for _, v := range t.Secrets {
		out = append(out, v.Value)
	}
	for _, e := range entries {
		c, ok := s.registry.byID[e]
		sc := secrets(e)
		if !ok || sc == nil {
			continue
		}
		for _, name := range c.SecretNames() {
			if v, ok := sc.Secret(name); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// Audit appends a record on behalf of the caller (credential changes).
func (s *Service) Audit(ctx context.Context, t *tenant.Tenant, rec audit.Record) {
	if s.audit == nil {
		return
	}
	rec.Tenant, rec.Principal = t.ID, t.Principal
	if err := s.audit.Append(ctx, rec); err != nil {
		s.log.Error("audit log append failed", "tenant", t.ID, "err", err)
	}
}

func auditCredential(entry, what string) audit.Record {
	return audit.Record{Action: "credential." + what, EntryID: entry, Outcome: "ok"}
}

// AuditRecords returns the caller's tenant's most recent records: a
// delegated caller (a person) sees their own, a tenant token (the
// tenant's operator or service) the whole tenant's.
func (s *Service) AuditRecords(ctx context.Context, t *tenant.Tenant, limit int) ([]audit.Record, error) {
	recs := []audit.Record{}
	if s.audit == nil {
		return recs, nil
	}
	got, err := s.audit.List(ctx, t.ID, t.Principal, limit)
	if err != nil {
		return nil, err
	}
	return append(recs, got...), nil
}
