package sandbox

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// TestQuarantineStrikes: three calls to the deadline within a minute start
// a quarantine; it doubles each time the pool is caught again and starts
// over after a calm spell. Times are given, not measured.
func TestQuarantineStrikes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type step struct {
		at      time.Duration
		started bool
		d       time.Duration
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"two hits are not enough", []step{{0, false, 0}, {time.Second, false, 0}}},
		{"three hits within a minute", []step{{0, false, 0}, {10 * time.Second, false, 0}, {20 * time.Second, true, quarantineBase}}},
		{"three hits spread over more than a minute", []step{{0, false, 0}, {40 * time.Second, false, 0}, {80 * time.Second, false, 0}}},
		{"hits during a quarantine do not restart it; caught again it doubles", []step{
			{0, false, 0}, {time.Second, false, 0}, {2 * time.Second, true, quarantineBase},
			{3 * time.Second, false, 0}, {4 * time.Second, false, 0}, {5 * time.Second, false, 0}, // quarantined meanwhile
			{33 * time.Second, true, 2 * quarantineBase}, // ended at 32 s; the last three hits are within a minute
		}},
		{"calm for quarantineMax starts over", []step{
			{0, false, 0}, {time.Second, false, 0}, {2 * time.Second, true, quarantineBase},
			{2*time.Second + quarantineBase + quarantineMax, false, 0},
			{3*time.Second + quarantineBase + quarantineMax, false, 0},
			{4*time.Second + quarantineBase + quarantineMax, true, quarantineBase},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q quarantine
			for i, s := range tc.steps {
				d, started := q.strike(at(s.at))
				if started != s.started || d != s.d {
					t.Fatalf("step %d (at %v): started=%v for %v; want started=%v for %v", i, s.at, started, d, s.started, s.d)
				}
				if started && (!q.active(at(s.at)) || !q.active(at(s.at+d-time.Nanosecond)) || q.active(at(s.at+d))) {
					t.Fatalf("step %d: quarantine not active exactly for %v", i, d)
				}
			}
		})
	}
}

// TestQuarantineBackoffCap: a pool that keeps spinning is quarantined for
// ever longer spells, never longer than quarantineMax.
func TestQuarantineBackoffCap(t *testing.T) {
	var q quarantine
	now := time.Unix(1000, 0)
	var got []time.Duration
	for len(got) < 8 {
		now = now.Add(time.Second)
		if q.active(now) {
			continue
		}
		if d, ok := q.strike(now); ok {
			got = append(got, d)
			now = now.Add(d - time.Second)
		}
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, quarantineMax, quarantineMax, quarantineMax}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("spells %v, want %v", got, want)
		}
	}
}

// TestSpinnerQuarantined: a pool whose calls spin to their deadline is
// quarantined after quarantineStrikes of them and shows in CPUQuarantined
// under its owner; its calls then run at low priority and still end as
// before (ErrDeadline when they spin, an answer when they do not), and a
// neighbour pool is neither quarantined nor disturbed. Quarantine reads a
// fake clock and each spinning call is ended by its caller once the
// clock has passed its call timeout (spinToDeadline); no real timeout is
// ever reached, so exactly quarantineStrikes calls quarantine the pool on
// any machine.
func TestSpinnerQuarantined(t *testing.T) {
	needGuests(t)
	var logs bytes.Buffer // written only by the calls below, one at a time
	fc := &fakeTimers{t: time.Unix(1000, 0)}
	var reads atomic.Int64
	h, engine := newTestHost(t, Config{Spares: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		now: func() time.Time { reads.Add(1); return fc.Now() }})
	ctx := context.Background()
	loop, err := h.Module(ctx, guestWasm["loop"])
	if err != nil {
		t.Fatal(err)
	}
	// Long enough that no call reaches it on the real clock, short enough
	// that quarantineStrikes calls fit in quarantineWindow on the fake one.
	const limit = quarantineWindow / quarantineStrikes
	spec := TenantSpec{Module: loop, Owner: "acme", Limits: Limits{CallTimeout: limit}}
	spinner := h.Tenant("spinner-vendor", spec)
	steady := h.Tenant("steady", TenantSpec{Module: engine, Limits: Limits{CallTimeout: time.Hour}})
	for i := range quarantineStrikes {
		if q := h.CPUQuarantined(); q["acme"] != 0 {
			t.Fatalf("quarantined after %d calls, want %d strikes", i, quarantineStrikes)
		}
		if err := spinToDeadline(h, spinner, fc, &reads, limit); !errors.Is(err, ErrDeadline) {
			t.Fatalf("call %d: %v, want ErrDeadline", i, err)
		}
		if out, err := steady.Ping(ctx, []byte("hello")); err != nil || string(out) != "hello" {
			t.Fatalf("neighbour: %q, %v", out, err)
		}
	}
	if q := h.CPUQuarantined(); q["acme"] != 1 {
		t.Fatalf("a pool spinning to its deadline %d times was not quarantined: %v", quarantineStrikes, q)
	}
	low := lowPriorityRuns.Load()
	// The spell (quarantineBase) outlasts this call's limit on the fake clock.
	if err := spinToDeadline(h, spinner, fc, &reads, limit); !errors.Is(err, ErrDeadline) {
		t.Fatalf("quarantined spinning call: %v, want ErrDeadline", err)
	}
	// An ordinary call of the quarantined pool, with a timeout nothing
	// reaches (the quarantine is the pool's, so it survives the new limits).
	spec.Limits.CallTimeout = time.Hour
	spinner = h.Tenant("spinner-vendor", spec)
	if out, err := spinner.Ping(ctx, []byte("fine")); err != nil || string(out) != "fine" {
		t.Fatalf("quarantined pool's ordinary call: %q, %v", out, err)
	}
	if n := lowPriorityRuns.Load() - low; n < 2 {
		t.Fatalf("%d of the quarantined pool's 2 calls ran at low priority", n)
	}
	if out, err := steady.Ping(ctx, []byte("hello")); err != nil || string(out) != "hello" {
		t.Fatalf("neighbour: %q, %v", out, err)
	}
	if q := h.CPUQuarantined(); len(q) != 1 || q["acme"] != 1 {
		t.Fatalf("quarantined: %v, want only acme's pool", q)
	}
	if n := strings.Count(logs.String(), "pool quarantined"); n != 1 ||
		!strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "tenant=spinner-vendor owner=acme for=30s") {
		t.Fatalf("want one WARN line naming the pool, owner and spell; logged %d:\n%s", n, logs.String())
	}
}

// spinToDeadline makes one Ping of tn (whose guest spins) end as a call
// that spun to its deadline, without reaching any real timeout: once the
// call has started (read the clock) and its guest runs (the meter ticked
// since), the fake clock passes limit while it spins, then the caller's
// context ends the call.
func spinToDeadline(h *Host, tn *Tenant, fc *fakeTimers, reads *atomic.Int64, limit time.Duration) error {
	caller := newExpiring()
	ended := make(chan struct{})
	spun := make(chan struct{})
	r0 := reads.Load()
	go func() {
		defer close(spun)
		defer caller.expire()
		waitUntil(func() bool { return reads.Load() > r0 || chanClosed(ended) })
		ticks := h.meterTicks.Load()
		waitUntil(func() bool { return h.meterTicks.Load() > ticks || chanClosed(ended) })
		fc.Advance(limit)
	}()
	_, err := tn.Ping(caller, []byte("hostile"))
	close(ended)
	<-spun
	return err
}

// TestQuarantineSpunToDeadline: only a call that missed its deadline after
// running the guest for nearly all of its call timeout is a strike; time
// away from the guest (a blocking host call, getting the CPU slot back)
// does not count. Durations are given, not measured.
func TestQuarantineSpunToDeadline(t *testing.T) {
	const limit = 100 * time.Millisecond
	deadline := &failure{kind: ErrDeadline}
	for _, tc := range []struct {
		name          string
		f             *failure
		elapsed, away time.Duration
		want          bool
	}{
		{"spun the whole timeout", deadline, limit, 0, true},
		{"spun 90% of it", deadline, limit, limit / 10, true},
		{"blocked on the backend the whole timeout", deadline, limit, limit, false},
		{"blocked a fifth of it", deadline, limit, limit / 5, false},
		{"waited for its slot back, then spun briefly", deadline, limit, 95 * time.Millisecond, false},
		{"caller's context ended early", deadline, limit / 2, 0, false},
		{"answered", nil, limit, 0, false},
		{"other failure", &failure{kind: ErrMemoryLimit}, limit, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := spunToDeadline(tc.f, limit, tc.elapsed, tc.away); got != tc.want {
				t.Fatalf("spunToDeadline(elapsed %v, away %v) = %v, want %v", tc.elapsed, tc.away, got, tc.want)
			}
		})
	}
}

// TestQuarantineGuestClock: yieldCPU counts as time away from the guest
// both the blocking host call and the wait for the CPU slot it gave up,
// on a fake clock.
func TestQuarantineGuestClock(t *testing.T) {
	fc := &fakeTimers{t: time.Unix(1000, 0)}
	g := newCPUGate(1)
	g.now, g.after = fc.Now, fc.AfterFunc
	if err := g.acquire(context.Background(), "victim", 0); err != nil {
		t.Fatal(err)
	}
	slot := &cpuSlot{g: g, owner: "victim", held: true}
	clock := &guestClock{now: fc.Now}
	ctx := context.WithValue(context.WithValue(context.Background(), cpuSlotKey{}, slot), guestClockKey{}, clock)

	hogDone := make(chan struct{})
	yieldCPU(ctx, func() {
		fc.Advance(70 * time.Millisecond) // the backend answers slowly
		// Meanwhile another owner took the freed slot; it keeps it 25 ms
		// more, so the guest waits that long to resume.
		if err := g.acquire(context.Background(), "hog", 0); err != nil {
			t.Error(err)
		}
		go func() {
			defer close(hogDone)
			waitUntil(func() bool { return g.stats().Waiting["victim"] == 1 })
			fc.Advance(25 * time.Millisecond)
			g.release("hog")
		}()
	})
	<-hogDone
	if !slot.held {
		t.Fatal("the guest resumed without its slot")
	}
	slot.done()
	if got, want := time.Duration(clock.away.Load()), 95*time.Millisecond; got != want {
		t.Fatalf("away from the guest %v, want %v", got, want)
	}
	// Without a clock in the context (quarantine off) yieldCPU just runs f.
	ran := false
	yieldCPU(context.Background(), func() { ran = true })
	if !ran {
		t.Fatal("f not run")
	}
}

// callerKey finds a call's expiring context from inside the call.
type callerKey struct{}

// expiring is a caller's context whose deadline the test decides: expire
// ends it with context.DeadlineExceeded, so the call fails with
// ErrDeadline at that point of the test and not when the real clock says.
type expiring struct {
	context.Context // context.Background: no deadline of its own
	once            sync.Once
	done            chan struct{}
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiring) Done() <-chan struct{} { return c.done }

func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *expiring) Value(key any) any {
	if key == (callerKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *expiring) expire() { c.once.Do(func() { close(c.done) }) }

// slowBackend keeps the guest waiting in the http import for the whole
// call timeout: it moves the fake clock on by that much, then the caller's
// deadline ends the call while the guest is still blocked.
type slowBackend struct {
	clock *fakeTimers
	wait  time.Duration
	calls atomic.Int32
}

func (b *slowBackend) Do(ctx context.Context, _ *abi.CompiledRequest, _ []egress.Origin, _ egress.Secrets) (*egress.Response, error) {
	b.calls.Add(1)
	b.clock.Advance(b.wait)
	ctx.Value(callerKey{}).(*expiring).expire()
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestQuarantineSlowBackendNotStruck: a pool whose calls run to their
// deadline blocked in the http import (its backend does not answer in
// time) uses no CPU meanwhile, so however many such calls it makes it is
// not quarantined as a spinner; a pool whose guest spins for the same
// time is struck on every call and quarantined after quarantineStrikes.
// Quarantine reads a fake clock, moved on by the call timeout either in
// the backend or while the guest spins, and the test ends each call with
// its deadline; the real call timeout is never reached, so machine speed
// does not decide the outcome.
func TestQuarantineSlowBackendNotStruck(t *testing.T) {
	needGuests(t)
	// Long enough that no call reaches it on the real clock, short enough
	// that quarantineStrikes calls fit in quarantineWindow on the fake one.
	const limit = quarantineWindow / quarantineStrikes
	fc := &fakeTimers{t: time.Unix(1000, 0)}
	var reads atomic.Int64 // clock reads: the first of a call is its start
	h := newGuestHost(t, Config{Spares: -1, now: func() time.Time { reads.Add(1); return fc.Now() }})
	module := func(name string) *Module {
		m, err := h.Module(context.Background(), guestWasm[name])
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	lim := Limits{CallTimeout: limit}

	t.Run("blocked on a slow backend", func(t *testing.T) {
		backend := &slowBackend{clock: fc, wait: limit}
		tn := h.Tenant("slow-backend", TenantSpec{Module: module("abuse"), Owner: "victim", Limits: lim})
		for i := range quarantineStrikes + 1 {
			ctx := WithHostEnv(newExpiring(), &HostEnv{Egress: backend})
			if _, err := tn.Ping(ctx, []byte("http ok")); !errors.Is(err, ErrDeadline) {
				t.Fatalf("call %d: %v, want ErrDeadline", i, err)
			}
			if n := backend.calls.Load(); n != int32(i+1) {
				t.Fatalf("call %d: the backend was called %d times, want %d", i, n, i+1)
			}
		}
		if q := h.CPUQuarantined(); q["victim"] != 0 {
			t.Fatalf("a pool blocked on a slow backend was quarantined as a spinner: %v", q)
		}
	})

	t.Run("spinning", func(t *testing.T) {
		tn := h.Tenant("spinner", TenantSpec{Module: module("loop"), Owner: "acme", Limits: lim})
		for i := range quarantineStrikes {
			if q := h.CPUQuarantined(); q["acme"] != 0 {
				t.Fatalf("quarantined after %d calls, want %d strikes", i, quarantineStrikes)
			}
			err := spinToDeadline(h, tn, fc, &reads, limit)
			if !errors.Is(err, ErrDeadline) {
				t.Fatalf("call %d: %v, want ErrDeadline", i, err)
			}
		}
		if q := h.CPUQuarantined(); q["acme"] != 1 {
			t.Fatalf("a pool spinning to its deadline %d times was not quarantined: %v", quarantineStrikes, q)
		}
	})
}

func chanClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
