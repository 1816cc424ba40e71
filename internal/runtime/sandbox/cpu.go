package sandbox

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// cpuGate bounds the guest calls running at once across the host (by
// default one per core) and shares those slots fairly among owners
// (tenants): when a slot frees, it goes to the waiting owner with the
// fewest calls running, then the one that used the least slot time
// recently (cpuUsage), then the one whose oldest waiter came first.
// Per-tenant instance pools alone let a tenant with several looping calls
// take every core; with the gate a tenant gets its share of the cores when
// others want them and all of them when nobody does.
//
// A slot cannot be taken back from a running call, so lending an owner
// more than its share (slots / active owners) costs any other owner that
// comes back meanwhile up to one of the borrower's calls of waiting. An
// owner therefore counts as active for a while after its last call ended
// (it lingers), and how long depends on who would borrow: cpuLingerFactor
// times the borrower's recent mean call length (cpuUsage.callLen), between
// cpuLinger and cpuMaxLinger. A tenant with short calls borrows a slot
// 5 ms after the others went quiet; one whose calls run to a 100 ms
// deadline waits a second, so a steady neighbour's gaps between calls
// (scheduling noise, its own I/O) never hand that tenant the neighbour's
// slot. The decision and figures are in docs/decisions.md.
//
// Waiting for a slot is bounded by the caller's context and a timeout
// (the tenant's QueueTimeout), so a saturated host answers busy instead of
// piling up calls.
type cpuGate struct {
	mu      sync.Mutex
	slots   int
	running int
	owners  map[string]*owner
	seq     uint64 // arrival order of waiters, for ties
	now     func() time.Time
	// after schedules f after d (time.AfterFunc; tests use a fake clock).
	after func(d time.Duration, f func())
	// wake is when a dispatch is already scheduled (zero: none).
	wake time.Time
}

const (
	// cpuLinger is the shortest time an owner stays active after its
	// last call ended: the linger a borrower with short calls sees.
	cpuLinger = 5 * time.Millisecond
	// cpuMaxLinger bounds the linger, so a tenant alone on the host
	// gets every slot at most this long after the others went quiet.
	cpuMaxLinger = time.Second
	// cpuLingerFactor scales a borrower's mean call length into the
	// linger it sees: others must have been quiet ten of its calls long
	// before one of its calls may take their share.
	cpuLingerFactor = 10
	// cpuForget is how long an idle owner's usage is remembered, so a
	// tenant whose calls run long is still known as such when it comes
	// back after a pause.
	cpuForget = 10 * time.Second
)

type owner struct {
	running  int
	waiters  []*cpuWaiter
	lastDone time.Time
	usage    cpuUsage
}

type cpuWaiter struct {
	seq     uint64
	ready   chan struct{} // closed when granted
	granted bool
}

// errCPUWait is a wait for a slot that ended unanswered (timeout).
var errCPUWait = errors.New("no CPU slot free in time")

// newCPUGate returns a gate with slots slots; slots <= 0 means no bound
// (nil gate).
func newCPUGate(slots int) *cpuGate {
	if slots <= 0 {
		return nil
	}
	return &cpuGate{slots: slots, owners: map[string]*owner{}, now: time.Now,
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// acquire takes a slot for owner id, waiting at most timeout (0: only the
// context bounds the wait). Every successful acquire is paired with one
// release.
func (g *cpuGate) acquire(ctx context.Context, id string, timeout time.Duration) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	now := g.now()
	g.pruneLocked(now)
	o := g.owner(id)
	if g.running < g.slots && !g.anyWaitingLocked() {
		if ok, _ := g.mayRunLocked(o, now); ok {
			g.grantLocked(o, now)
			g.mu.Unlock()
			return nil
		}
	}
	g.seq++
	w := &cpuWaiter{seq: g.seq, ready: make(chan struct{})}
	o.waiters = append(o.waiters, w)
	g.dispatchLocked()
	g.mu.Unlock()

	var expire <-chan time.Time
	if timeout > 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		expire = tm.C
	}
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expire:
		err = errCPUWait
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.granted {
		// Granted while giving up: hand the slot on.
		g.releaseLocked(id)
		return err
	}
	o.waiters = removeWaiter(o.waiters, w)
	return err
}

// release returns owner id's slot and grants it to the fairest waiter.
func (g *cpuGate) release(id string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked(id)
}

func (g *cpuGate) releaseLocked(id string) {
	o := g.owners[id]
	if o == nil || o.running == 0 {
		return // unpaired release: a bug elsewhere must not corrupt counts
	}
	now := g.now()
	o.usage.callEnded(now, o.running)
	o.running--
	g.running--
	o.lastDone = now
	g.dispatchLocked()
}

func (g *cpuGate) grantLocked(o *owner, now time.Time) {
	o.usage.advance(now, o.running)
	o.running++
	g.running++
}

// dispatchLocked grants free slots, one at a time, to the fairest waiting
// owner that may run (mayRunLocked); when every waiting owner is held
// back by a lingering one, it schedules itself for when the first linger
// ends.
func (g *cpuGate) dispatchLocked() {
	now := g.now()
	var cands []*owner
	for g.running < g.slots {
		cands = cands[:0]
		for _, o := range g.owners {
			if len(o.waiters) > 0 {
				o.usage.advance(now, o.running)
				cands = append(cands, o)
			}
		}
		if len(cands) == 0 {
			return
		}
		slices.SortFunc(cands, fairer)
		var wake time.Time
		granted := false
		for _, o := range cands {
			ok, end := g.mayRunLocked(o, now)
			if !ok {
				if wake.IsZero() || end.Before(wake) {
					wake = end
				}
				continue
			}
			w := o.waiters[0]
			o.waiters = o.waiters[1:]
			g.grantLocked(o, now)
			w.granted = true
			close(w.ready)
			granted = true
			break
		}
		if !granted {
			g.wakeAtLocked(wake)
			return
		}
	}
}

// fairer orders waiting owners: fewest calls running, then least slot
// time used recently, then the oldest waiter.
func fairer(a, b *owner) int {
	if c := cmp.Compare(a.running, b.running); c != 0 {
		return c
	}
	if c := cmp.Compare(a.usage.slotTime, b.usage.slotTime); c != 0 {
		return c
	}
	return cmp.Compare(a.waiters[0].seq, b.waiters[0].seq)
}

// mayRunLocked says whether owner o may start one more call now: it may
// while it runs fewer than its share of the slots, or when no other owner
// lingers (active recently with nothing running or waiting) as seen by o.
// When o is held back, until is when the first such linger ends.
func (g *cpuGate) mayRunLocked(o *owner, now time.Time) (ok bool, until time.Time) {
	o.usage.advance(now, o.running)
	linger := o.usage.linger(o.running)
	active := 0
	lingering := false
	for _, p := range g.owners {
		switch {
		case p == o || p.running > 0 || len(p.waiters) > 0:
			active++
		case now.Sub(p.lastDone) < linger:
			active++
			lingering = true
			if end := p.lastDone.Add(linger); until.IsZero() || end.Before(until) {
				until = end
			}
		}
	}
	share := max(1, g.slots/active)
	return o.running < share || !lingering, until
}

// wakeAtLocked schedules a dispatch at t unless one comes sooner.
func (g *cpuGate) wakeAtLocked(t time.Time) {
	if !g.wake.IsZero() && !g.wake.After(t) {
		return
	}
	g.wake = t
	g.after(t.Sub(g.now()), func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.wake.Equal(t) {
			g.wake = time.Time{}
		}
		g.dispatchLocked()
	})
}

func (g *cpuGate) owner(id string) *owner {
	o := g.owners[id]
	if o == nil {
		o = &owner{}
		g.owners[id] = o
	}
	return o
}

// pruneLocked forgets owners idle for cpuForget, so the map holds only
// recently active tenants.
func (g *cpuGate) pruneLocked(now time.Time) {
	for id, o := range g.owners {
		if o.running == 0 && len(o.waiters) == 0 && now.Sub(o.lastDone) >= cpuForget {
			delete(g.owners, id)
		}
	}
}

func (g *cpuGate) anyWaitingLocked() bool {
	for _, o := range g.owners {
		if len(o.waiters) > 0 {
			return true
		}
	}
	return false
}

func removeWaiter(ws []*cpuWaiter, w *cpuWaiter) []*cpuWaiter {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}

// cpuStats is the gate's state, for tests and metrics.
type cpuStats struct {
	Running int
	Waiting map[string]int
	ByOwner map[string]int
	// CallLen is each remembered owner's recent mean call length.
	CallLen map[string]time.Duration
}

func (g *cpuGate) stats() cpuStats {
	s := cpuStats{Waiting: map[string]int{}, ByOwner: map[string]int{}, CallLen: map[string]time.Duration{}}
	if g == nil {
		return s
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s.Running = g.running
	now := g.now()
	for id, o := range g.owners {
		o.usage.advance(now, o.running)
		s.CallLen[id] = o.usage.callLen(o.running)
		if o.running > 0 {
			s.ByOwner[id] = o.running
		}
		if len(o.waiters) > 0 {
			s.Waiting[id] = len(o.waiters)
		}
	}
	return s
}

// cpuSlotKey carries the slot a guest call holds, so a host import that
// blocks on I/O (http) can give the core back while it waits.
type cpuSlotKey struct{}

type cpuSlot struct {
	g     *cpuGate
	owner string
	mu    sync.Mutex
	held  bool
}

// yieldCPU releases the slot around f (a blocking host call) and takes it
// back afterwards; the guest cannot run meanwhile, so the core is free
// for other tenants' calls, and the time is not the guest's running time
// (guestClock).
func yieldCPU(ctx context.Context, f func()) {
	// The guest does not run until this returns: not a quarantine strike.
	defer awayFrom(ctx)()
	s, _ := ctx.Value(cpuSlotKey{}).(*cpuSlot)
	if s == nil || s.g == nil {
		f()
		return
	}
	s.mu.Lock()
	if s.held {
		s.g.release(s.owner)
		s.held = false
	}
	s.mu.Unlock()
	f()
	// The guest resumes only with a slot; if none comes (the call's
	// context ended), the guest is about to be stopped anyway.
	if s.g.acquire(ctx, s.owner, 0) == nil {
		s.mu.Lock()
		s.held = true
		s.mu.Unlock()
	}
}

// done releases the slot if the call still holds it.
func (s *cpuSlot) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		s.g.release(s.owner)
		s.held = false
	}
}

// CPUUse returns, per owner (tenant), the guest calls running and waiting
// for a host CPU slot (empty maps when calls are not bounded).
func (h *Host) CPUUse() (running, waiting map[string]int) {
	s := h.cpu.stats()
	return s.ByOwner, s.Waiting
}
