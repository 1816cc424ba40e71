package sandbox

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A pool (tenant, module) whose calls keep running to their deadline is
// quarantined: while it is, its guest calls run on dedicated OS threads
// at a low CPU priority (nice 10 on Linux, priority_linux.go), so
// when the machine is short of CPU the kernel runs every other tenant's
// calls first. Nothing else changes: the calls keep their deadline, their
// slot in the CPU gate and their memory ceiling, and on an idle core they
// run as fast as before. The gate alone shares slots, but a slot is a
// thread the kernel schedules like any other: on a loaded machine a
// spinning guest's thread took as much CPU as the neighbour's
// (docs/decisions.md, "CPU is shared by the gate, then by the kernel").
const (
	// quarantineStrikes calls that run to their deadline within
	// quarantineWindow start a quarantine.
	quarantineStrikes = 3
	quarantineWindow  = time.Minute
	// A quarantine lasts quarantineBase, doubling each time the pool is
	// quarantined again (its calls still spin when it ends), up to
	// quarantineMax; a pool calm for quarantineMax starts over.
	quarantineBase = 30 * time.Second
	quarantineMax  = 10 * time.Minute
)

// quarantine is one pool's record of calls that ran to their deadline.
type quarantine struct {
	mu    sync.Mutex
	hits  [quarantineStrikes]time.Time // the latest deadline hits, a ring
	next  int
	until time.Time // end of the current or last quarantine
	level int       // quarantines in a row, for the backoff
}

// strike records a call that ran to its deadline at now. When it starts a
// quarantine, it returns how long that lasts.
func (q *quarantine) strike(now time.Time) (d time.Duration, started bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.hits[q.next] = now
	q.next = (q.next + 1) % quarantineStrikes
	oldest := q.hits[q.next]
	if now.Before(q.until) || oldest.IsZero() || now.Sub(oldest) > quarantineWindow {
		return 0, false
	}
	if !q.until.IsZero() && now.Sub(q.until) >= quarantineMax {
		q.level = 0 // calm since the last one: start over
	}
	d = min(quarantineBase<<q.level, quarantineMax)
	if d < quarantineMax {
		q.level++
	}
	q.until = now.Add(d)
	q.hits = [quarantineStrikes]time.Time{}
	return d, true
}

// active says whether the pool is quarantined at now.
func (q *quarantine) active(now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return now.Before(q.until)
}

// lowPriorityRuns counts runLowPriority calls, so tests can see that a
// quarantined pool's calls take that path.
var lowPriorityRuns atomic.Uint64

// runLowPriority runs f on an OS thread at a low CPU priority
// (lowerThreadPriority) and returns when f has. The threads belong to
// low-priority workers that are never handed back to Go's pool: each
// worker goroutine stays locked to its thread and, idle for lowIdle, ends
// locked, so Go ends the thread instead of reusing it at that priority (an
// unprivileged process cannot raise it again). An idle worker takes the
// next quarantined call, which saves a thread per call
// (BenchmarkRunLowPriority). A panic in f is passed on.
func runLowPriority(f func()) {
	lowPriorityRuns.Add(1)
	done := make(chan any, 1)
	task := func() {
		defer func() { done <- recover() }()
		f()
	}
	select {
	case lowTasks <- task: // an idle worker took it
	default:
		go lowWorker(task)
	}
	if p := <-done; p != nil {
		panic(p)
	}
}

// lowTasks hands quarantined calls to idle low-priority workers
// (unbuffered: a send succeeds only when one is waiting).
var lowTasks = make(chan func())

// lowIdle is how long a low-priority worker waits for another call
// before it ends with its thread.
const lowIdle = time.Second

func lowWorker(task func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the worker
	lowerThreadPriority()
	idle := time.NewTimer(lowIdle)
	defer idle.Stop()
	for {
		task()
		idle.Reset(lowIdle)
		select {
		case task = <-lowTasks:
		case <-idle.C:
			return
		}
	}
}

// CPUQuarantined returns, per owner (tenant), how many of its pools are
// quarantined (their calls keep running to the deadline and run at the
// low CPU priority).
func (h *Host) CPUQuarantined() map[string]int {
	h.mu.Lock()
	tenants := make([]*Tenant, 0, len(h.tenants))
	for _, t := range h.tenants {
		tenants = append(tenants, t)
	}
	h.mu.Unlock()
	now := h.now()
	out := map[string]int{}
	for _, t := range tenants {
		if t.quar.active(now) {
			t.mu.Lock()
			out[t.owner]++
			t.mu.Unlock()
		}
	}
	return out
}

// now reads quarantine's clock: a test's fake one (Config.now) or the
// real one.
func (h *Host) now() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return time.Now()
}

// quarantineRunShare is the share of its call timeout a call that missed
// its deadline must have spent running the guest to count as a strike
// (a tenth allows for instantiation, the loads and scheduling noise).
// Time blocked in a host import (yieldCPU: http) or waiting to get a CPU
// slot back is not running: a pool whose backend is slow, or that is
// starved by others, uses no CPU while it waits and must not be put at a
// low priority for it.
const quarantineRunShare = 0.9

// guestClock measures, for one guest call, the time spent away from the
// guest: inside yieldCPU, which covers a blocking host call and getting
// the CPU slot back afterwards. Elapsed time minus that is the guest's
// own running time (wall time, which is what the call timeout bounds).
type guestClock struct {
	now  func() time.Time
	away atomic.Int64 // nanoseconds
}

type guestClockKey struct{}

// from adds the time since t0 to the time away from the guest.
func (c *guestClock) from(t0 time.Time) {
	c.away.Add(int64(c.now().Sub(t0)))
}

// awayFrom starts timing a stretch away from the guest of ctx's call and
// returns the function that ends it (a no-op when ctx carries no clock).
func awayFrom(ctx context.Context) (end func()) {
	c, _ := ctx.Value(guestClockKey{}).(*guestClock)
	if c == nil {
		return func() {}
	}
	t0 := c.now()
	return func() { c.from(t0) }
}

// spunToDeadline says whether a call that ended with f after elapsed,
// away of it outside the guest, ran the guest to its deadline: a strike.
func spunToDeadline(f *failure, limit, elapsed, away time.Duration) bool {
	if f == nil || f.kind != ErrDeadline {
		return false
	}
	return float64(elapsed-away) >= quarantineRunShare*float64(limit)
}

// runGuest runs one guest call of t: at a low CPU priority while the
// pool is quarantined, and counting a call that missed its deadline after
// running the guest for nearly its whole call timeout (limit) as a strike.
func (t *Tenant) runGuest(ctx context.Context, limit time.Duration, call func(context.Context) *failure) *failure {
	if t.host.noQuar {
		return call(ctx)
	}
	clock := &guestClock{now: t.host.now}
	ctx = context.WithValue(ctx, guestClockKey{}, clock)
	start := t.host.now()
	var f *failure
	if t.quar.active(start) {
		runLowPriority(func() { f = call(ctx) })
	} else {
		f = call(ctx)
	}
	end := t.host.now()
	if !spunToDeadline(f, limit, end.Sub(start), time.Duration(clock.away.Load())) {
		return f
	}
	if d, started := t.quar.strike(end); started {
		t.mu.Lock()
		owner := t.owner
		t.mu.Unlock()
		t.host.log.Warn("sandbox: pool quarantined: its calls keep running to their deadline, so they run at a low CPU priority for a while",
			"tenant", t.id, "owner", owner, "for", d, "strikes", quarantineStrikes, "within", quarantineWindow)
	}
	return f
}
