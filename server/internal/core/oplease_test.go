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

// A lease that expired while its operation still runs (a store outage or
// failover longer than the TTL, with no waiter judging it) is taken again
// and its worker goes on; only a worker whose operation a waiter has
// ended stops (review finding: an outage stopped every live operation).
func TestLeaseKeeperRetakesRunning(t *testing.T) {
	m := session.NewMemory(time.Hour)
	k := newLeaseKeeper(m, nil)
	ctx := context.Background()
	running, ended := session.OpRef{Tenant: "A", Scope: "S", N: 1}, session.OpRef{Tenant: "A", Scope: "S", N: 2}
	stops := map[session.OpRef]context.Context{}
	for _, ref := range []session.OpRef{running, ended} {
		op := session.Operation{Tenant: ref.Tenant, Scope: ref.Scope, N: ref.N, Handle: "h", State: session.OpRunning, Leased: true}
		if err := m.StartOperation(ctx, op, maxRunningOps); err != nil {
			t.Fatal(err)
		}
		wctx, stop := context.WithCancelCause(ctx)
		stops[ref] = wctx
		if err := k.take(ctx, ref, stop); err != nil {
			t.Fatal(err)
		}
		if err := m.DropOpLease(ctx, ref); err != nil { // expired during the outage
			t.Fatal(err)
		}
	}
	op, _ := m.GetOperation(ctx, "A", "S", ended.N)
	op.State = session.OpFailed
	if err := m.UpdateOperation(ctx, op); err != nil { // a waiter judged it gone
		t.Fatal(err)
	}
	k.renew()
	if err := stops[running].Err(); err != nil {
		t.Errorf("a running operation's worker stopped after an outage: %v", context.Cause(stops[running]))
	}
	if _, err := m.GetOpLease(ctx, running); err != nil {
		t.Errorf("the running operation's lease was not taken again: %v", err)
	}
	if !errors.Is(context.Cause(stops[ended]), errLeaseLost) {
		t.Errorf("the ended operation's worker: %v, want stopped with errLeaseLost", context.Cause(stops[ended]))
	}
	k.release(ctx, running)
	k.release(ctx, ended)
	k.close()
}
