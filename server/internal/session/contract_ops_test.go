package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

// contractCommits: a commit is taken once, only with its plan hash, only
// in its tenant and scope; a mismatch does not consume it.
func contractCommits(t *testing.T, s Store) {
	ctx := context.Background()
	if err := s.PutPlanCommit(ctx, PlanCommit{Tenant: "A", Scope: "CL", N: 1, PlanHash: "h1", Summary: "s"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tenant, scope, hash string
		want                error
	}{
		{"B", "CL", "h1", ErrNotFound},
		{"A", "other", "h1", ErrNotFound},
		{"A", "CL", "h2", ErrPlanMismatch},
		{"A", "CL", "h1", nil},
		{"A", "CL", "h1", ErrNotFound},
	} {
		c, err := s.TakePlanCommit(ctx, tc.tenant, tc.scope, 1, tc.hash)
		if (tc.want == nil) != (err == nil) || tc.want != nil && !errors.Is(err, tc.want) {
			t.Fatalf("take %+v: %v, want %v", tc, err, tc.want)
		}
		if err == nil && (c.Summary != "s" || c.Expires.IsZero()) {
			t.Fatalf("taken commit %+v", c)
		}
	}
}

// contractOperations: at most max unfinished per scope; a cancel request
// sticks; a final state is never left and frees a slot.
func contractOperations(t *testing.T, s Store) {
	ctx := context.Background()
	op := func(n int) Operation {
		return Operation{Tenant: "A", Scope: "OL", N: n, Handle: "s0_o1", Program: "e1", State: OpAccepted}
	}
	for n := 1; n <= 2; n++ {
		if err := s.StartOperation(ctx, op(n), 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.StartOperation(ctx, op(3), 2); !errors.Is(err, ErrTooManyOperations) {
		t.Fatalf("third operation: %v", err)
	}
	if _, err := s.GetOperation(ctx, "B", "OL", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another tenant's operation: %v", err)
	}
	c, err := s.RequestCancel(ctx, "A", "OL", 1)
	if err != nil || !c.CancelRequested {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	run := op(1)
	run.State, run.Calls = OpRunning, 3
	if err := s.UpdateOperation(ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetOperation(ctx, "A", "OL", 1)
	if err != nil || !got.CancelRequested || got.Calls != 3 || got.State != OpRunning {
		t.Fatalf("after update: %+v %v", got, err)
	}
	run.State = OpCancelled
	if err := s.UpdateOperation(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.State = OpRunning
	if err := s.UpdateOperation(ctx, run); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetOperation(ctx, "A", "OL", 1); got.State != OpCancelled {
		t.Fatalf("a final state was left: %+v", got)
	}
	if err := s.StartOperation(ctx, op(3), 2); err != nil {
		t.Fatalf("a finished operation did not free its slot: %v", err)
	}
}
