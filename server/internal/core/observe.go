package core

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
	"github.com/plasmd/plasmd/server/internal/tracing"
)

// Run plans and executes a program (runProgram) under a run span in its
// logical session's trace, logs one line for it, and records it, failed or
// not, in the activity journal the console reads.
func (s *Service) Run(ctx context.Context, t *tenant.Tenant, sc RunScope, program string) (*RunOutcome, error) {
	return s.observeRun(ctx, t, sc, program, func(ctx context.Context) (*RunOutcome, error) {
		return s.runProgram(ctx, t, sc, program)
	})
}

// observeRun runs do as Run does: traced, logged and journaled. Execute
// and long operations (operations.go) run through it too.
func (s *Service) observeRun(ctx context.Context, t *tenant.Tenant, sc RunScope, program string,
	do func(ctx context.Context) (*RunOutcome, error)) (*RunOutcome, error) {
	start := time.Now()
	ctx, span := s.tracer.Run(ctx, tracing.RunInfo{Tenant: t.ID, LogicalID: sc.LogicalID, SessionID: sc.Execute.ID})
	out, err := do(ctx)
	if out == nil && err == nil {
		// do started a long operation; its worker observes the run.
		span.End(nil)
		return nil, nil
	}
	if err == nil {
		span.SetRunID(out.Run.RunID)
		out.TraceID = span.TraceID()
	}
	span.End(err)
	r := s.journalRun(ctx, t, sc, program, out, err, start)
	r.TraceID = span.TraceID()
	activity.NoteRun(ctx, sc.LogicalID, sc.Execute.ID, r.ID)
	ptype := ""
	if r.Err != nil {
		ptype = r.Err.Type
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "run",
		slog.String("tenant", t.ID), slog.String("logical_session", sc.LogicalID), slog.String("execute_session", sc.Execute.ID),
		slog.String("run_id", r.ID), slog.String("problem_type", ptype), slog.String("trace_id", r.TraceID),
		slog.Duration("duration", r.Duration))
	if s.journal != nil {
		s.journal.AddRun(r)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// journalRun is the journal's record of a run; a failed run gets a fresh
// id (it has no stored artifact) and its problem document.
func (s *Service) journalRun(ctx context.Context, t *tenant.Tenant, sc RunScope, program string, out *RunOutcome, err error, start time.Time) activity.Run {
	r := activity.Run{
		ID: uuid.NewString(), Tenant: t.ID, LogicalID: sc.LogicalID, Program: program,
		PromptHash: sc.Execute.PromptHash, SessionID: sc.Execute.ID, Started: start.UTC(), Duration: time.Since(start),
	}
	if sc.LogicalID != "" {
		if l, lerr := s.store.GetLogical(ctx, t.ID, sc.LogicalID); lerr == nil {
			r.Intent = l.Intent
		}
	}
	if out != nil {
		r.Plan = out.Plan
		r.Steps = out.Steps
	}
	if err != nil {
		p := problem.From(err)
		r.Err = &activity.Problem{Type: p.Type, Title: p.Title, Status: p.Status, Detail: p.Detail, Hint: p.Hint, Line: p.Line, Column: p.Column}
		return r
	}
	r.ID, r.N, r.Roots = out.Run.RunID, out.Run.N, out.Run.Roots
	return r
}

// VisibleCatalogs are the loaded catalogs allow admits, sorted by entry id
// (the console's catalog pages).
func (s *Service) VisibleCatalogs(allow func(entryID string) bool) []*catalog.Catalog {
	return s.registry.Visible(allow)
}

// PoolStats is a snapshot of the sandbox pools by tenant (the console's
// tenants page).
func (s *Service) PoolStats() map[string]sandbox.TenantStats { return s.host.Stats().Tenants }

// Journal is the activity journal (nil when none was configured).
func (s *Service) Journal() *activity.Journal { return s.journal }
