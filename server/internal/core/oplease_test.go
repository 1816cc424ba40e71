package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server/internal/session"
)

// manualTicker is a renewal clock the test ticks by hand.
func manualTicker(k *leaseKeeper) chan time.Time {
	c := make(chan time.Time)
	k.ticker = func(time.Duration) (<-chan time.Time, func()) { return c, func() {} }
	return c
}

// The keeper's renewals keep a lease alive on the store's clock past its
// first TTL; a renewal that finds it gone stops the worker it covers with
// errLeaseLost; release deletes it; close ends the renewals.
func TestLeaseKeeper(t *testing.T) {
	m := session.NewMemory(time.Hour)
	clk := &storeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m.SetClock(clk.Now)
	k := newLeaseKeeper(m, nil)
	tick := manualTicker(k)
	ctx := context.Background()
	a, b := session.OpRef{Tenant: "A", Scope: "S", N: 1}, session.OpRef{Tenant: "A", Scope: "S", N: 2}
	actx, stopA := context.WithCancelCause(ctx)
	bctx, stopB := context.WithCancelCause(ctx)
	if err := k.take(ctx, a, stopA); err != nil {
		t.Fatal(err)
	}
	if err := k.take(ctx, b, stopB); err != nil {
		t.Fatal(err)
	}
	if l, err := m.GetOpLease(ctx, a); err != nil || l.Owner != k.owner || l.TTL != leaseTTL {
		t.Fatalf("lease after take: %+v %v", l, err)
	}

	// Renewed every leaseEvery of the store's clock, a lease outlives
	// many TTLs.
	for range 10 {
		clk.Add(leaseEvery)
		if !k.renew() {
			t.Fatal("renew found no lease held")
		}
	}
	if l, err := m.GetOpLease(ctx, a); err != nil || l.Left != leaseTTL {
		t.Fatalf("renewed lease: %+v %v", l, err)
	}

	// b's lease expires (its owner could not renew it in time): the next
	// renewal, here by the loop, stops b's worker and only b's.
	if err := m.DropOpLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	<-bctx.Done()
	if !errors.Is(context.Cause(bctx), errLeaseLost) {
		t.Fatalf("b stopped by %v, want errLeaseLost", context.Cause(bctx))
	}
	if actx.Err() != nil {
		t.Fatal("a's worker stopped with its lease alive")
	}

	k.release(ctx, a)
	k.release(ctx, b)
	if _, err := m.GetOpLease(ctx, a); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("released lease: %v", err)
	}
	if k.renew() {
		t.Error("renew with no lease held keeps the loop going")
	}
	k.close() // returns once the loop has ended
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loop != nil {
		t.Error("renewal loop still marked running after close")
	}
}

// A lease taken after every earlier one was released starts the renewals
// again; close while leases are held ends them too.
func TestLeaseKeeperRestarts(t *testing.T) {
	m := session.NewMemory(time.Hour)
	k := newLeaseKeeper(m, nil)
	tick := manualTicker(k)
	ctx := context.Background()
	ref := session.OpRef{Tenant: "A", Scope: "S", N: 1}
	_, stop := context.WithCancelCause(ctx)
	if err := k.take(ctx, ref, stop); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	first := k.loop
	k.mu.Unlock()
	k.release(ctx, ref)
	tick <- time.Time{} // the loop finds nothing held and ends
	<-first
	if err := k.take(ctx, ref, stop); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	second := k.loop
	k.mu.Unlock()
	if second == nil || second == first {
		t.Fatal("no new renewal loop for a lease taken after the last was released")
	}
	k.close()
	<-second
}
