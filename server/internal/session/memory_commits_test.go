package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPlanCommits(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	m := NewMemory(time.Hour)
	m.SetClock(func() time.Time { return now })
	put := func(tenant, scope string, n int, hash string) {
		t.Helper()
		if err := m.PutPlanCommit(ctx, PlanCommit{Tenant: tenant, Scope: scope, N: n, PlanHash: hash}, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	put("A", "L", 1, "h1")
	put("A", "L", 2, "h2")
	tests := []struct {
		name          string
		tenant, scope string
		n             int
		hash          string
		want          error
	}{
		{"another tenant", "B", "L", 1, "h1", ErrNotFound},
		{"another scope", "A", "M", 1, "h1", ErrNotFound},
		{"wrong plan", "A", "L", 1, "h2", ErrPlanMismatch},
		{"match (a mismatch did not consume it)", "A", "L", 1, "h1", nil},
		{"single use", "A", "L", 1, "h1", ErrNotFound},
		{"unknown", "A", "L", 9, "h1", ErrNotFound},
	}
	for _, tc := range tests {
		_, err := m.TakePlanCommit(ctx, tc.tenant, tc.scope, tc.n, tc.hash)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	now = now.Add(10 * time.Minute)
	if _, err := m.TakePlanCommit(ctx, "A", "L", 2, "h2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired commit: %v", err)
	}

	// Bounded per scope: the oldest commits go first.
	for n := 1; n <= maxCommitsPerScope+5; n++ {
		put("A", "L", n, "h")
	}
	if got := len(m.commits[commitScope{"A", "L"}]); got != maxCommitsPerScope {
		t.Fatalf("%d commits held, want %d", got, maxCommitsPerScope)
	}
	if _, err := m.TakePlanCommit(ctx, "A", "L", 1, "h"); !errors.Is(err, ErrNotFound) {
		t.Errorf("oldest commit kept: %v", err)
	}
	if _, err := m.TakePlanCommit(ctx, "A", "L", maxCommitsPerScope+5, "h"); err != nil {
		t.Errorf("newest commit dropped: %v", err)
	}
	// Expired commits of any scope are dropped on the next put.
	now = now.Add(11 * time.Minute)
	put("A", "Other", 1, "h")
	if len(m.commits) != 1 {
		t.Errorf("expired scopes kept: %d", len(m.commits))
	}
}
