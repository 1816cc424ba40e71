package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/plasmd/plasmd/server/internal/session"
)

// Whether an operation's owner is alive is judged on one clock: the shared
// store's. The owning process keeps a lease in the store for each of its
// running operations (session.OpLeases), renewing it every leaseEvery;
// the store ends a lease leaseTTL after its last renewal. A waiter in
// another process treats the operation as owned while the lease exists.
// Comparing the owner's deadline with the waiter's own clock (as before)
// failed live operations when two replicas' clocks disagreed by more than
// the grace, and kept dead ones "running" when the waiter's clock lagged.
const (
	// leaseEvery is how often the owner renews its leases.
	leaseEvery = 2 * time.Second
	// leaseTTL is five renewals: a process that is merely slow (a GC
	// pause, a loaded machine, one lost round trip) keeps its leases.
	leaseTTL = 5 * leaseEvery
)

// errLeaseLost stops a worker whose lease expired before its owner could
// renew it: a waiter elsewhere may already have recorded the operation
// failed, so going on would make calls nobody accounts for.
var errLeaseLost = errors.New("the plasmd process running it did not renew its lease in the shared store in time (it was paused or lost the store)")

// leaseStore is what the keeper needs of the store: the leases, and the
// record, read when a lease was found gone.
type leaseStore interface {
	session.OpLeases
	GetOperation(ctx context.Context, tenant, scope string, n int) (session.Operation, error)
}

// leaseKeeper holds this process's operation leases and renews them.
type leaseKeeper struct {
	store      leaseStore
	owner      string
	every, ttl time.Duration
	log        *slog.Logger
	// ticker is the renewal clock (tests drive it by hand).
	ticker func(d time.Duration) (<-chan time.Time, func())

	mu sync.Mutex
	// held maps each lease to the cancel of the worker it covers.
	held map[session.OpRef]context.CancelCauseFunc
	// loop is non-nil while the renewal goroutine runs; closing stop
	// ends it (close), and it ends by itself once no lease is held.
	loop    chan struct{}
	stop    chan struct{}
	failing bool
}

func newLeaseKeeper(store leaseStore, log *slog.Logger) *leaseKeeper {
	owner := ownerIdentity()
	if owner == "" {
		owner = fmt.Sprintf("pid %d", os.Getpid())
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &leaseKeeper{store: store, owner: owner, every: leaseEvery, ttl: leaseTTL, log: log,
		ticker: realTicker, held: map[session.OpRef]context.CancelCauseFunc{}, stop: make(chan struct{})}
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// take puts ref's lease and keeps renewing it until release; lost is
// called with errLeaseLost if a renewal finds the lease already gone.
func (k *leaseKeeper) take(ctx context.Context, ref session.OpRef, lost context.CancelCauseFunc) error {
	if err := k.store.PutOpLease(ctx, ref, k.owner, k.ttl); err != nil {
		return fmt.Errorf("operation lease: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held[ref] = lost
	if k.loop == nil {
		k.loop = make(chan struct{})
		go k.renewLoop(k.loop)
	}
	return nil
}

// release stops renewing ref's lease and deletes it. The worker calls it
// after recording the operation's end: dropped first, a waiter could find
// no lease beside a "running" record and call a finished run partial.
func (k *leaseKeeper) release(ctx context.Context, ref session.OpRef) {
	k.mu.Lock()
	delete(k.held, ref)
	k.mu.Unlock()
	if err := k.store.DropOpLease(ctx, ref); err != nil {
		k.log.Warn("drop operation lease", "n", ref.N, "err", err)
	}
}

// close ends the renewal goroutine and waits for it. Workers release
// their own leases as they end (opRunner.close waits for them first).
func (k *leaseKeeper) close() {
	k.mu.Lock()
	loop := k.loop
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	k.mu.Unlock()
	if loop != nil {
		<-loop
	}
}

func (k *leaseKeeper) renewLoop(done chan struct{}) {
	defer close(done)
	tick, stop := k.ticker(k.every)
	defer stop()
	for {
		select {
		case <-k.stop:
			k.ended()
			return
		case <-tick:
		}
		if !k.renew() {
			return
		}
	}
}

func (k *leaseKeeper) ended() {
	k.mu.Lock()
	k.loop = nil
	k.mu.Unlock()
}

// renew renews every held lease once and stops the workers whose lease
// was gone. It reports false, ending the loop, when no lease is held.
func (k *leaseKeeper) renew() bool {
	k.mu.Lock()
	if len(k.held) == 0 {
		k.loop = nil
		k.mu.Unlock()
		return false
	}
	refs := slices.Collect(maps.Keys(k.held))
	k.mu.Unlock()
	// A renewal may take what is left of the leases after this one was
	// due (a loaded or resharding store answers in seconds); the ticker
	// drops the ticks it misses, so renewals never pile up.
	ctx, cancel := context.WithTimeout(context.Background(), k.ttl-k.every)
	defer cancel()
	lost, err := k.store.RenewOpLeases(ctx, refs, k.owner, k.ttl)
	if err != nil {
		k.mu.Lock()
		if !k.failing {
			k.log.Warn("renew operation leases (operations whose lease expires are recorded failed by whoever waits on them)", "leases", len(refs), "err", err)
		}
		k.failing = true
		k.mu.Unlock()
		return true
	}
	lost = k.retake(ctx, lost)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failing = false
	for _, ref := range lost {
		if stop := k.held[ref]; stop != nil {
			stop(errLeaseLost)
		}
	}
	return true
}

// retake puts again the leases that expired while their operation is
// still running, and returns those whose operation a waiter has ended
// meanwhile (or that cannot be read): only those workers stop. A store
// outage or failover longer than the TTL would otherwise stop every live
// operation of every replica though nobody judged them gone. A waiter
// racing the retake still wins: a final state is never left, and the
// worker checks its record before each backend call.
func (k *leaseKeeper) retake(ctx context.Context, lost []session.OpRef) []session.OpRef {
	var gone []session.OpRef
	for _, ref := range lost {
		op, err := k.store.GetOperation(ctx, ref.Tenant, ref.Scope, ref.N)
		if err != nil || op.Final() || k.store.PutOpLease(ctx, ref, k.owner, k.ttl) != nil {
			gone = append(gone, ref)
			continue
		}
		// The worker may have ended and released its lease between the
		// read and the put: a lease nobody holds must not linger a TTL.
		k.mu.Lock()
		_, held := k.held[ref]
		k.mu.Unlock()
		if !held {
			_ = k.store.DropOpLease(ctx, ref)
		}
	}
	return gone
}
