package sandbox

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitUntil polls cond; the test's own timeout bounds it, so no timing
// threshold is involved.
func waitUntil(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// gateScript drives a cpuGate deterministically: each waiter is started
// and seen queued before the next, so arrival order is fixed.
type gateScript struct {
	t     *testing.T
	g     *cpuGate
	clock *fakeTimers
	wg    sync.WaitGroup
	errs  chan error
}

func newGateScript(t *testing.T, slots int) *gateScript {
	g := newCPUGate(slots)
	fc := &fakeTimers{t: time.Unix(1000, 0)}
	g.now, g.after = fc.Now, fc.AfterFunc
	return &gateScript{t: t, g: g, clock: fc, errs: make(chan error, 64)}
}

// fakeTimers is a clock whose timers fire only when Advance passes them.
type fakeTimers struct {
	mu     sync.Mutex
	t      time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func (c *fakeTimers) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeTimers) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, fakeTimer{at: c.t.Add(d), f: f})
}

// Advance moves time and runs the timers it passes (outside the lock).
func (c *fakeTimers) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	var due []func()
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if !tm.at.After(c.t) {
			due = append(due, tm.f)
		} else {
			kept = append(kept, tm)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

func (s *gateScript) take(owner string) {
	s.t.Helper()
	if err := s.g.acquire(context.Background(), owner, 0); err != nil {
		s.t.Fatal(err)
	}
}

// queue starts a waiter for owner and returns once it is queued.
func (s *gateScript) queue(owner string) {
	before := s.g.stats().Waiting[owner]
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.errs <- s.g.acquire(context.Background(), owner, 0)
	}()
	waitUntil(func() bool { return s.g.stats().Waiting[owner] == before+1 })
}

func (s *gateScript) want(running, waiting map[string]int) {
	s.t.Helper()
	st := s.g.stats()
	if !maps.Equal(st.ByOwner, running) || !maps.Equal(st.Waiting, waiting) {
		s.t.Fatalf("running %v waiting %v; want running %v waiting %v", st.ByOwner, st.Waiting, running, waiting)
	}
}

// TestCPUGateFairShare: a tenant holding every slot with more calls
// queued does not get the next slot while a neighbour with nothing
// running waits; once both hold one, each keeps its share.
func TestCPUGateFairShare(t *testing.T) {
	s := newGateScript(t, 2)
	s.take("loop")
	s.take("loop")
	s.queue("loop")
	s.queue("loop")
	s.queue("loop")
	s.queue("steady")
	s.want(map[string]int{"loop": 2}, map[string]int{"loop": 3, "steady": 1})

	s.g.release("loop") // steady has fewer running, though it came last
	s.want(map[string]int{"loop": 1, "steady": 1}, map[string]int{"loop": 3})

	s.queue("steady")
	s.g.release("loop") // loop now runs 0, steady 1 → loop
	s.want(map[string]int{"loop": 1, "steady": 1}, map[string]int{"loop": 2, "steady": 1})

	s.g.release("steady") // steady 0 < loop 1 → steady
	s.want(map[string]int{"loop": 1, "steady": 1}, map[string]int{"loop": 2})

	// Drain: each release hands the slot on until nobody waits (past
	// every linger, so no slot is held back).
	for st := s.g.stats(); st.Running > 0 || len(st.Waiting) > 0; st = s.g.stats() {
		s.clock.Advance(time.Second)
		for o := range st.ByOwner {
			s.g.release(o)
			break
		}
	}
	s.wg.Wait()
	close(s.errs)
	for err := range s.errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s.want(map[string]int{}, map[string]int{})
}

// TestCPUGateLinger: a steady tenant between two calls keeps its share:
// the slot it freed is not handed to the looping tenant (already at its
// share) until its linger ends, and its next call takes it at once.
func TestCPUGateLinger(t *testing.T) {
	s := newGateScript(t, 2)
	s.take("loop")
	s.take("steady")
	s.queue("loop")
	s.g.release("steady") // loop is at its share (1 of 2) while steady lingers
	s.want(map[string]int{"loop": 1}, map[string]int{"loop": 1})
	s.take("steady") // the next steady call does not wait
	s.want(map[string]int{"loop": 1, "steady": 1}, map[string]int{"loop": 1})

	s.g.release("steady")
	s.clock.Advance(cpuMaxLinger) // steady went quiet: loop may use every slot
	s.want(map[string]int{"loop": 2}, map[string]int{})
	s.g.release("loop")
	s.g.release("loop")
	s.wg.Wait()
}

// TestCPUGateLingerScalesWithCallLength: how long an owner must find the
// others quiet before it may run beyond its share grows with its own
// recent call length (cpuLingerFactor times, between cpuLinger and
// cpuMaxLinger), so a tenant whose calls run to their deadline cannot take
// a steady neighbour's slot in a short gap between the neighbour's calls.
func TestCPUGateLingerScalesWithCallLength(t *testing.T) {
	for _, tc := range []struct {
		name    string
		callLen time.Duration // of the borrower's earlier calls
		calls   int
		want    time.Duration // the linger it sees
	}{
		{"short calls", 100 * time.Microsecond, 50, cpuLinger},
		{"10 ms calls", 10 * time.Millisecond, 50, 100 * time.Millisecond},
		{"calls to a 100 ms deadline", 100 * time.Millisecond, 20, cpuMaxLinger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newGateScript(t, 2)
			for range tc.calls {
				s.take("b")
				s.clock.Advance(tc.callLen)
				s.g.release("b")
			}
			s.take("b")
			s.take("steady")
			s.queue("b")
			s.g.release("steady") // b is at its share while steady lingers
			const step = time.Millisecond
			var waited time.Duration
			for s.g.stats().ByOwner["b"] < 2 {
				if waited > 2*cpuMaxLinger {
					t.Fatalf("b still held back after %v", waited)
				}
				s.clock.Advance(step)
				waited += step
			}
			// b's running call ages meanwhile and lengthens its mean a
			// little, so the linger may come out somewhat above want.
			if waited < tc.want || waited > tc.want*3/2+step {
				t.Fatalf("b borrowed the slot after %v; want about %v", waited, tc.want)
			}
			s.g.release("b")
			s.g.release("b")
			s.wg.Wait()
		})
	}
}

// TestCPUGateHogNeverBorrowsFromSteady: a tenant spinning to a 100 ms
// deadline on every call, beside a neighbour whose calls are 50 µs long
// with 20 ms gaps between them (longer than cpuLinger), never runs more
// than its one slot of two while the neighbour keeps calling, and the
// neighbour never waits for a slot.
func TestCPUGateHogNeverBorrowsFromSteady(t *testing.T) {
	s := newGateScript(t, 2)
	s.take("steady") // the neighbour was there first
	s.g.release("steady")
	s.take("hog")
	s.queue("hog")
	s.queue("hog")
	steadyCalls, hogCalls := 0, 0
	for elapsed := time.Duration(0); elapsed < 3*time.Second; elapsed += 20 * time.Millisecond {
		if elapsed > 0 && elapsed%(100*time.Millisecond) == 0 {
			s.g.release("hog") // a hog call hit its deadline; the next takes the slot
			hogCalls++
			s.queue("hog")
		}
		if st := s.g.stats(); st.ByOwner["hog"] > 1 {
			t.Fatalf("at %v the hog runs %d calls while the neighbour is active", elapsed, st.ByOwner["hog"])
		}
		s.take("steady") // must not wait: take fails the test on error
		s.clock.Advance(50 * time.Microsecond)
		s.g.release("steady")
		steadyCalls++
		s.clock.Advance(20*time.Millisecond - 50*time.Microsecond)
	}
	if hogCalls == 0 || steadyCalls == 0 {
		t.Fatalf("hog %d calls, steady %d", hogCalls, steadyCalls)
	}
	// The neighbour goes away: after at most cpuMaxLinger the hog may use
	// both slots.
	s.clock.Advance(cpuMaxLinger)
	s.want(map[string]int{"hog": 2}, map[string]int{"hog": 1})
	s.g.release("hog")
	s.g.release("hog")
	s.g.release("hog")
	s.wg.Wait()
}

// TestCPUGateLeastUsageFirst: between owners running the same number of
// calls, the slot goes to the one that used less slot time recently,
// though it queued later; with equal use, to the earlier waiter.
func TestCPUGateLeastUsageFirst(t *testing.T) {
	s := newGateScript(t, 1)
	s.take("heavy")
	s.clock.Advance(200 * time.Millisecond)
	s.g.release("heavy")
	s.take("light")
	s.clock.Advance(time.Millisecond)
	s.g.release("light")
	s.take("x")
	s.queue("heavy")
	s.queue("light")
	s.g.release("x")
	s.want(map[string]int{"light": 1}, map[string]int{"heavy": 1})
	s.g.release("light")
	s.want(map[string]int{"heavy": 1}, map[string]int{})
	s.g.release("heavy")
	s.wg.Wait()
}

// TestCPUUsageCallLen: the mean call length follows recent calls, counts a
// running call at once, and survives decay (a pause changes it little).
func TestCPUUsageCallLen(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var u cpuUsage
	u.advance(t0, 0)
	if got := u.callLen(0); got != 0 {
		t.Fatalf("no calls: %v", got)
	}
	now := t0
	for range 10 {
		now = now.Add(100 * time.Millisecond)
		u.callEnded(now, 1)
	}
	near := func(got, want time.Duration) bool { return got > want*9/10 && got < want*11/10 }
	if got := u.callLen(0); !near(got, 100*time.Millisecond) {
		t.Fatalf("ten 100 ms calls: mean %v", got)
	}
	u.advance(now.Add(5*time.Second), 0)
	if got := u.callLen(0); !near(got, 100*time.Millisecond) {
		t.Fatalf("after a 5 s pause: mean %v", got)
	}
	if got := u.linger(0); got < cpuMaxLinger*9/10 || got > cpuMaxLinger {
		t.Fatalf("linger %v, want about the cap %v", got, cpuMaxLinger)
	}
	var short cpuUsage
	short.advance(t0, 0)
	for i := range 100 {
		short.callEnded(t0.Add(time.Duration(i+1)*50*time.Microsecond), 1)
	}
	if got := short.linger(0); got != cpuLinger {
		t.Fatalf("50 µs calls: linger %v, want the floor %v", got, cpuLinger)
	}
	var fresh cpuUsage
	fresh.advance(t0, 0)
	fresh.advance(t0.Add(50*time.Millisecond), 1) // a first call, still running
	if got := fresh.callLen(1); !near(got, 50*time.Millisecond) {
		t.Fatalf("first call running 50 ms: mean %v", got)
	}
}

// TestCPUGateTies: equal running counts go to the earliest waiter.
func TestCPUGateTies(t *testing.T) {
	s := newGateScript(t, 1)
	s.take("x")
	s.queue("b")
	s.queue("a")
	s.queue("b")
	s.g.release("x")
	s.want(map[string]int{"b": 1}, map[string]int{"a": 1, "b": 1})
	s.g.release("b") // a and b both 0 running; a's waiter is older
	s.want(map[string]int{"a": 1}, map[string]int{"b": 1})
	s.g.release("a")
	s.g.release("b")
	s.wg.Wait()
}

// TestCPUGateWorkConserving: alone, a tenant uses every slot.
func TestCPUGateWorkConserving(t *testing.T) {
	s := newGateScript(t, 3)
	for range 3 {
		s.take("solo")
	}
	s.want(map[string]int{"solo": 3}, map[string]int{})
}

// TestCPUGateGivingUp: a waiter whose timeout or context ends leaves the
// queue with errCPUWait or the context's error, and holds nothing.
func TestCPUGateGivingUp(t *testing.T) {
	g := newCPUGate(1)
	if err := g.acquire(context.Background(), "busy", 0); err != nil {
		t.Fatal(err)
	}
	if err := g.acquire(context.Background(), "w", time.Nanosecond); !errors.Is(err, errCPUWait) {
		t.Fatalf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.acquire(ctx, "w", 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	if st := g.stats(); st.Running != 1 || len(st.Waiting) != 0 || st.ByOwner["w"] != 0 {
		t.Fatalf("state after giving up: %+v", st)
	}
	g.release("w") // unpaired: ignored
	g.release("busy")
	if st := g.stats(); st.Running != 0 || len(st.ByOwner) != 0 {
		t.Fatalf("state after release: %+v", st)
	}
	var nilGate *cpuGate
	if err := nilGate.acquire(ctx, "x", 0); err != nil {
		t.Fatal("a nil gate bounds nothing")
	}
	nilGate.release("x")
}

// TestCPUGateNeverOversubscribes: many owners hammering the gate never
// run more than its slots at once, and everyone finishes.
func TestCPUGateNeverOversubscribes(t *testing.T) {
	const slots = 3
	g := newCPUGate(slots)
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for o := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if err := g.acquire(context.Background(), string(rune('a'+o)), 0); err != nil {
					t.Error(err)
					return
				}
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				running.Add(-1)
				g.release(string(rune('a' + o)))
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > slots {
		t.Fatalf("%d calls ran at once, gate %d", p, slots)
	}
	if st := g.stats(); st.Running != 0 || len(st.ByOwner) != 0 || len(st.Waiting) != 0 {
		t.Fatalf("state left: %+v", st)
	}
}

// TestHostCPUUse: a call spinning in the guest shows as its owner's
// running call until its context ends.
func TestHostCPUUse(t *testing.T) {
	needGuests(t)
	h := newGuestHost(t, Config{Spares: -1, MaxRunning: 1})
	loop, err := h.Module(context.Background(), guestWasm["loop"])
	if err != nil {
		t.Fatal(err)
	}
	tn := h.Tenant("spinner-pool", TenantSpec{Module: loop, Owner: "acme", Limits: Limits{CallTimeout: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := tn.Ping(ctx, []byte("hostile")); done <- err }() // spins until ctx ends
	for r, _ := h.CPUUse(); r["acme"] != 1; r, _ = h.CPUUse() {
		select {
		case err := <-done:
			t.Fatalf("the spinning call ended before it was seen running: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the spinning call returned without error")
	}
	if r, w := h.CPUUse(); len(r) != 0 || len(w) != 0 {
		t.Fatalf("after the call: running %v waiting %v", r, w)
	}
}

// TestDefaultSlotsFollowGOMAXPROCS: with no MaxRunning the gate has one
// slot per core Go may use (GOMAXPROCS follows a container's CPU quota),
// not one per core of the machine (runtime.NumCPU, which ignores it).
func TestDefaultSlotsFollowGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(1) // as under a one-core quota
	defer runtime.GOMAXPROCS(prev)
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if h.cpu == nil || h.cpu.slots != 1 {
		t.Fatalf("default gate = %+v, want 1 slot", h.cpu)
	}
}
