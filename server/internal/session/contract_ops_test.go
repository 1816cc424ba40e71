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

// contractCallsNeverDrop: an update holding an older call count (progress
// writes landing out of order, a waiter's stale copy) keeps the higher
// count.
func contractCallsNeverDrop(t *testing.T, s Store) {
	ctx := context.Background()
	op := Operation{Tenant: "A", Scope: "CN", N: 1, Handle: "s0_o1", Program: "e1", State: OpRunning, Calls: 5}
	if err := s.StartOperation(ctx, op, 4); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		state string
		calls int
		want  int
	}{
		{OpRunning, 7, 7},
		{OpRunning, 6, 7},
		{OpFailed, 2, 7},
	} {
		op.State, op.Calls = tc.state, tc.calls
		if err := s.UpdateOperation(ctx, op); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetOperation(ctx, "A", "CN", 1)
		if err != nil || got.Calls != tc.want || got.State != tc.state {
			t.Fatalf("update to %s with %d calls: %+v %v, want %d calls", tc.state, tc.calls, got, err, tc.want)
		}
	}
}

// contractLeases: a lease is read back with its owner and TTL, only in its
// tenant and scope; renewal reports a lease that is gone; a dropped lease
// reads as not found.
func contractLeases(t *testing.T, s Store) {
	ctx := context.Background()
	a1, a2 := OpRef{Tenant: "A", Scope: "LS", N: 1}, OpRef{Tenant: "A", Scope: "LS", N: 2}
	if err := s.PutOpLease(ctx, a1, "me", time.Hour); err != nil {
		t.Fatal(err)
	}
	l, err := s.GetOpLease(ctx, a1)
	if err != nil || l.Owner != "me" || l.TTL != time.Hour || l.Left <= 0 || l.Left > time.Hour {
		t.Fatalf("lease: %+v %v", l, err)
	}
	for _, other := range []OpRef{{Tenant: "B", Scope: "LS", N: 1}, {Tenant: "A", Scope: "other", N: 1}, a2} {
		if _, err := s.GetOpLease(ctx, other); !errors.Is(err, ErrNotFound) {
			t.Fatalf("lease %+v: %v, want not found", other, err)
		}
	}
	lost, err := s.RenewOpLeases(ctx, []OpRef{a1, a2}, "me", 2*time.Hour)
	if err != nil || len(lost) != 1 || lost[0] != a2 {
		t.Fatalf("renew: lost %v %v, want [%v]", lost, err, a2)
	}
	if _, err := s.GetOpLease(ctx, a2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("renewal created a lease that was gone: %v", err)
	}
	if l, err := s.GetOpLease(ctx, a1); err != nil || l.TTL != 2*time.Hour || l.Left <= time.Hour {
		t.Fatalf("renewed lease: %+v %v", l, err)
	}
	if lost, err := s.RenewOpLeases(ctx, nil, "me", time.Hour); err != nil || lost != nil {
		t.Fatalf("renew nothing: %v %v", lost, err)
	}
	for range 2 {
		if err := s.DropOpLease(ctx, a1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetOpLease(ctx, a1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("dropped lease: %v", err)
	}
}

// A lease expires on the store's clock unless renewed; the memory store's
// clock is the injected one, so nothing waits.
func TestMemoryOpLeaseExpiry(t *testing.T) {
	m := NewMemory(time.Hour)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.SetClock(func() time.Time { return now })
	ctx := context.Background()
	ref := OpRef{Tenant: "A", Scope: "S", N: 1}
	if err := m.PutOpLease(ctx, ref, "me", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	now = now.Add(8 * time.Second)
	if lost, err := m.RenewOpLeases(ctx, []OpRef{ref}, "me", 10*time.Second); err != nil || len(lost) != 0 {
		t.Fatalf("renew in time: %v %v", lost, err)
	}
	now = now.Add(8 * time.Second) // 16 s after the put, 8 s after the renewal
	l, err := m.GetOpLease(ctx, ref)
	if err != nil || l.Left != 2*time.Second {
		t.Fatalf("renewed lease: %+v %v", l, err)
	}
	now = now.Add(2 * time.Second)
	if _, err := m.GetOpLease(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired lease: %v", err)
	}
	if lost, err := m.RenewOpLeases(ctx, []OpRef{ref}, "me", 10*time.Second); err != nil || len(lost) != 1 {
		t.Fatalf("renewing an expired lease: lost %v %v", lost, err)
	}
	// A sweep drops expired leases nobody reads again.
	if err := m.PutOpLease(ctx, OpRef{Tenant: "A", Scope: "S", N: 2}, "me", time.Second); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	m.lock()
	n := len(m.leases)
	m.unlock()
	if n != 0 {
		t.Fatalf("%d expired leases kept after a sweep", n)
	}
}

// On Redis the lease is a key with a PX expiry: Redis's clock ends it.
// The test waits for that by reading until the key is gone (a short TTL,
// no timing threshold: the test's own timeout bounds it).
func TestRedisOpLeaseExpiry(t *testing.T) {
	s, _, rdb := redisStore(t)
	ctx := context.Background()
	ref := OpRef{Tenant: "A", Scope: "S", N: 1}
	if err := s.PutOpLease(ctx, ref, "me", time.Hour); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, leaseKey(ref)).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("lease key PTTL %v, want an expiry of at most an hour", ttl)
	}
	if err := s.PutOpLease(ctx, ref, "me", 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := s.GetOpLease(ctx, ref)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if lost, err := s.RenewOpLeases(ctx, []OpRef{ref}, "me", time.Hour); err != nil || len(lost) != 1 {
		t.Fatalf("renewing an expired lease: lost %v %v", lost, err)
	}
	if n := rdb.Exists(ctx, leaseKey(ref)).Val(); n != 0 {
		t.Fatal("renewal brought an expired lease back")
	}
}
