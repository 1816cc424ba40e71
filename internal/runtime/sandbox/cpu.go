package sandbox

import (
	"context"
	"errors"
	"sync"
	"time"
)

// cpuGate bounds the guest calls running at once across the host (by
// default one per core) and shares those slots fairly among owners
// (tenants): when a slot frees, the waiting owner with the fewest calls
// running gets it, ties going to the owner whose oldest waiter came first.
// Per-tenant instance pools alone let a tenant with several looping calls
// take every core; with the gate a tenant gets its share of the cores when
// others want them and all of them when nobody does.
//
// An owner counts as active for cpuLinger after its last call ends: a
// steady tenant has short gaps between calls, and handing its slot to a
// looping tenant in such a gap would cost it a whole long call. While an
// owner lingers, the others get at most their share (slots / active
// owners) and a slot may stay free until the linger ends.
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
	linger  time.Duration
	now     func() time.Time
	// after schedules f after d (time.AfterFunc; tests use a fake clock).
	after func(d time.Duration, f func())
	// wake is when a dispatch is already scheduled (zero: none).
	wake time.Time
}

// cpuLinger is how long an owner stays active after its last call ended.
const cpuLinger = 5 * time.Millisecond

type owner struct {
	running  int
	waiters  []*cpuWaiter
	lastDone time.Time
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
	return &cpuGate{slots: slots, owners: map[string]*owner{}, linger: cpuLinger, now: time.Now,
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
	share, lingering, _ := g.shareLocked(g.now()) // before owner: it forgets idle owners
	o := g.owner(id)
	if g.running < g.slots && !g.anyWaitingLocked() && (o.running < share || !lingering) {
		g.running++
		o.running++
		g.mu.Unlock()
		return nil
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
	g.forgetLocked(id)
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
	o.running--
	g.running--
	o.lastDone = g.now()
	g.dispatchLocked()
}

// dispatchLocked grants free slots, one at a time, to the waiting owner
// with the fewest running calls (ties: the earliest waiter). An owner at
// its share gets no more while another owner lingers below its share; the
// slot then waits for the linger to end.
func (g *cpuGate) dispatchLocked() {
	now := g.now()
	for g.running < g.slots {
		share, lingering, wake := g.shareLocked(now)
		var best *owner
		for _, o := range g.owners {
			if len(o.waiters) == 0 {
				continue
			}
			if best == nil || o.running < best.running ||
				o.running == best.running && o.waiters[0].seq < best.waiters[0].seq {
				best = o
			}
		}
		if best == nil {
			return
		}
		if best.running >= share && lingering {
			g.wakeAtLocked(wake)
			return
		}
		w := best.waiters[0]
		best.waiters = best.waiters[1:]
		best.running++
		g.running++
		w.granted = true
		close(w.ready)
	}
}

// shareLocked returns each active owner's share of the slots, whether an
// owner is lingering (active with nothing running or waiting) and when the
// first linger ends. Owners past their linger are forgotten.
func (g *cpuGate) shareLocked(now time.Time) (share int, lingering bool, wake time.Time) {
	active := 0
	for id, o := range g.owners {
		switch {
		case o.running > 0 || len(o.waiters) > 0:
			active++
		case now.Sub(o.lastDone) < g.linger:
			active++
			lingering = true
			if end := o.lastDone.Add(g.linger); wake.IsZero() || end.Before(wake) {
				wake = end
			}
		default:
			delete(g.owners, id)
		}
	}
	return max(1, g.slots/max(active, 1)), lingering, wake
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

// forgetLocked drops an owner with nothing running or waiting that is not
// lingering, so the map holds only active tenants.
func (g *cpuGate) forgetLocked(id string) {
	if o := g.owners[id]; o != nil && o.running == 0 && len(o.waiters) == 0 && g.now().Sub(o.lastDone) >= g.linger {
		delete(g.owners, id)
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
}

func (g *cpuGate) stats() cpuStats {
	s := cpuStats{Waiting: map[string]int{}, ByOwner: map[string]int{}}
	if g == nil {
		return s
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s.Running = g.running
	for id, o := range g.owners {
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

// yield releases the slot around f (a blocking host call) and takes it
// back afterwards; the guest cannot run meanwhile, so the core is free
// for other tenants' calls.
func yieldCPU(ctx context.Context, f func()) {
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
