package sandbox

import (
	"context"
	"errors"
	"maps"
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
	s.clock.Advance(cpuLinger) // steady went quiet: loop may use every slot
	s.want(map[string]int{"loop": 2}, map[string]int{})
	s.g.release("loop")
	s.g.release("loop")
	s.wg.Wait()
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
	h, _ := newTestHost(t, Config{Spares: -1, MaxRunning: 1})
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
