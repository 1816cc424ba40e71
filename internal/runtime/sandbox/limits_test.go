package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// recorder is an Observer that keeps counts, for checking which events
// the sandbox reports.
type recorder struct {
	mu        sync.Mutex
	calls     map[string]int // result → count
	created   map[bool]int   // spare → count
	discarded map[string]int
	evicted   map[string]int
	busy      map[string]int
	waits     int
}

func newRecorder() *recorder {
	return &recorder{calls: map[string]int{}, created: map[bool]int{}, discarded: map[string]int{},
		evicted: map[string]int{}, busy: map[string]int{}}
}

func (r *recorder) CallDone(_, _, result string, _ time.Duration) {
	r.mu.Lock()
	r.calls[result]++
	r.mu.Unlock()
}
func (r *recorder) InstanceCreated(_ string, spare bool) {
	r.mu.Lock()
	r.created[spare]++
	r.mu.Unlock()
}
func (r *recorder) InstanceDiscarded(_, reason string) {
	r.mu.Lock()
	r.discarded[reason]++
	r.mu.Unlock()
}
func (r *recorder) InstanceEvicted(tenant string)      { r.mu.Lock(); r.evicted[tenant]++; r.mu.Unlock() }
func (r *recorder) Waited(string, time.Duration, bool) { r.mu.Lock(); r.waits++; r.mu.Unlock() }
func (r *recorder) Busy(_, reason string)              { r.mu.Lock(); r.busy[reason]++; r.mu.Unlock() }

func (r *recorder) get(f func(*recorder) int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return f(r)
}

// newTestHost makes a host of its own (sharing the compilation cache) with
// the engine registered, closed when the test ends.
func newTestHost(t testing.TB, cfg Config) (*Host, *Module) {
	t.Helper()
	h := newGuestHost(t, cfg)
	m, err := h.Module(context.Background(), enginewasm.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	return h, m
}

// newGuestHost is newTestHost without the engine, for tests that run only
// hostile guests: loading the engine into a new host re-validates its
// 7 MB of metered code, seconds of CPU under -race, for nothing such a
// test reads.
func newGuestHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	ctx := context.Background()
	cfg.CacheDir = testCacheDir
	if cfg.Meter == nil {
		cfg.Meter = MeterAll // the hostile guests run metered, to test the meter
	}
	h, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return h
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// occupy starts a call on a looping guest that holds one instance of tn
// until ctx ends (or its CallTimeout), and returns once the call has its
// instance.
func occupy(ctx context.Context, t *testing.T, tn *Tenant, busyBefore int) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := tn.Ping(ctx, []byte("hostile"))
		done <- err
	}()
	waitFor(t, "the looping call to take an instance", func() bool {
		s := tn.Stats()
		return s.Live-s.Idle > busyBefore
	})
	return done
}

func TestQueueBounds(t *testing.T) {
	needGuests(t)
	checkNoLeaks(t)
	loop := guestModule(t, "loop")
	ctx := context.Background()

	t.Run("queue full", func(t *testing.T) {
		// Deadlines no machine reaches: the looping call ends only when the
		// test cancels it, so nothing here depends on speed.
		tn := testHost.Tenant(t.Name(), TenantSpec{Module: loop, Limits: Limits{
			MaxInstances: 1, MaxQueue: 1, QueueTimeout: time.Hour, CallTimeout: time.Hour}})
		defer tn.Close()
		if _, err := tn.Ping(ctx, []byte("warm")); err != nil {
			t.Fatal(err)
		}
		loopCtx, endLoop := context.WithCancel(ctx)
		defer endLoop()
		done := occupy(loopCtx, t, tn, 0)
		// One caller fits in the queue…
		queued := make(chan error, 1)
		go func() { _, err := tn.Ping(ctx, []byte("warm")); queued <- err }()
		waitFor(t, "a queued caller", func() bool { return tn.Stats().Waiting == 1 })
		// …the next is refused, with a hint, without waiting: the only
		// instance is still looping and the first caller still queued.
		_, err := tn.Ping(ctx, []byte("warm"))
		var ce *CallError
		if !errors.Is(err, ErrBusy) || !errors.As(err, &ce) || ce.RetryAfter <= 0 {
			t.Fatalf("err = %#v, want ErrBusy with RetryAfter", err)
		}
		select {
		case err := <-done:
			t.Fatalf("the looping call ended (%v) before the full queue refused: the refusal waited", err)
		default:
		}
		if s := tn.Stats(); s.Waiting != 1 {
			t.Fatalf("stats %+v: the queued caller should still be waiting", s)
		}
		endLoop()
		if err := <-done; err == nil {
			t.Fatal("looping call returned without an error")
		}
		if err := <-queued; err != nil {
			t.Fatalf("queued call after the instance freed: %v", err)
		}
	})

	t.Run("queue timeout", func(t *testing.T) {
		tn := testHost.Tenant(t.Name(), TenantSpec{Module: loop, Limits: Limits{
			MaxInstances: 1, QueueTimeout: 50 * time.Millisecond, CallTimeout: time.Hour}})
		defer tn.Close()
		loopCtx, endLoop := context.WithCancel(ctx)
		defer endLoop()
		done := occupy(loopCtx, t, tn, 0)
		start := time.Now()
		_, err := tn.Ping(ctx, []byte("warm"))
		var ce *CallError
		if !errors.Is(err, ErrBusy) || !errors.As(err, &ce) || ce.RetryAfter < 100*time.Millisecond || ce.RetryAfter > time.Hour {
			t.Fatalf("err = %#v, want ErrBusy with a RetryAfter in [100ms, CallTimeout]", err)
		}
		// A queue timeout never fires early; how late it fires is the
		// machine's business, so only the lower bound is asserted.
		if took := time.Since(start); took < 50*time.Millisecond {
			t.Fatalf("refused after %v, before the 50ms QueueTimeout", took)
		}
		endLoop()
		<-done
	})
}

func TestGlobalCapEvictsLeastRecentlyUsed(t *testing.T) {
	checkNoLeaks(t)
	rec := newRecorder()
	h, engine := newTestHost(t, Config{MaxInstances: 2, Spares: -1, Observer: rec})
	ctx := context.Background()
	ping := func(tn *Tenant) {
		t.Helper()
		if got, err := tn.Ping(ctx, []byte(tn.ID())); err != nil || string(got) != tn.ID() {
			t.Fatalf("%s: %q, %v", tn.ID(), got, err)
		}
	}
	a := h.Tenant("a", TenantSpec{Module: engine})
	b := h.Tenant("b", TenantSpec{Module: engine})
	c := h.Tenant("c", TenantSpec{Module: engine})
	ping(a)
	ping(b)
	ping(a) // b is now the least recently used
	ping(c)
	s := h.Stats()
	if s.Live != 2 || s.Evicted != 1 || s.Tenants["b"].Evicted != 1 || s.Tenants["b"].Live != 0 || s.Tenants["a"].Live != 1 {
		t.Fatalf("after c's first call: %+v", s)
	}
	// The evicted tenant simply gets a new instance, evicting the next LRU (a).
	ping(b)
	s = h.Stats()
	if s.Live != 2 || s.Evicted != 2 || s.Tenants["a"].Live != 0 || s.Tenants["c"].Live != 1 {
		t.Fatalf("after b's next call: %+v", s)
	}
	if got := rec.get(func(r *recorder) int { return r.evicted["a"] + r.evicted["b"] }); got != 2 {
		t.Fatalf("observer saw %d evictions", got)
	}
}

func TestGlobalCapNeverEvictsBusy(t *testing.T) {
	needGuests(t)
	checkNoLeaks(t)
	rec := newRecorder()
	h := newGuestHost(t, Config{MaxInstances: 1, Spares: -1, Observer: rec})
	ctx := context.Background()
	loop, err := h.Module(ctx, guestWasm["loop"])
	if err != nil {
		t.Fatal(err)
	}
	busy := h.Tenant("busy", TenantSpec{Module: loop})
	loopCtx, endLoop := context.WithCancel(ctx)
	defer endLoop()
	done := occupy(loopCtx, t, busy, 0)
	other := h.Tenant("other", TenantSpec{Module: loop, Limits: Limits{QueueTimeout: 50 * time.Millisecond}})
	_, err = other.Ping(ctx, []byte("x"))
	var ce *CallError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &ce) || ce.RetryAfter <= 0 {
		t.Fatalf("err = %v, want ErrBusy with a hint", err)
	}
	if got := rec.get(func(r *recorder) int { return r.busy[BusyGlobalCap] }); got != 1 {
		t.Fatalf("busy[global_cap] = %d", got)
	}
	endLoop()
	if err := <-done; err == nil {
		t.Fatal("looping call returned without an error")
	}
	// With the slot free again, the other tenant gets it.
	if _, err := other.Ping(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if s := h.Stats(); s.Live != 1 || s.Evicted != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestGlobalCapConcurrent(t *testing.T) {
	checkNoLeaks(t)
	h, engine := newTestHost(t, Config{MaxInstances: 3, Spares: -1})
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 6 {
		tn := h.Tenant(fmt.Sprint("t", i), TenantSpec{Module: engine, Limits: Limits{MaxInstances: 2, QueueTimeout: 30 * time.Second}})
		for range 2 {
			wg.Go(func() {
				for range 10 {
					if _, err := tn.Ping(ctx, []byte("x")); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	s := h.Stats()
	live := 0
	for _, ts := range s.Tenants {
		live += ts.Live
	}
	if s.Live > 3 || live != s.Live {
		t.Fatalf("global live %d, tenants' %d, cap 3", s.Live, live)
	}
}

func TestSparePool(t *testing.T) {
	checkNoLeaks(t)
	rec := newRecorder()
	h, engine := newTestHost(t, Config{Spares: 2, Observer: rec})
	ctx := context.Background()
	waitFor(t, "the pool to fill", func() bool { return h.Stats().Spares == 2 })

	tn := h.Tenant("fresh", TenantSpec{Module: engine})
	if _, err := tn.Ping(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if s := tn.Stats(); s.Created != 1 || s.FromSpare != 1 {
		t.Fatalf("first call did not take a spare: %+v", s)
	}
	waitFor(t, "the pool to refill", func() bool { return h.Stats().Spares == 2 })
	if s := h.Stats(); s.SpareTaken != 1 || s.SpareFailed != 0 {
		t.Fatalf("host stats %+v", s)
	}
	if got := rec.get(func(r *recorder) int { return r.created[true] }); got != 1 {
		t.Fatalf("observer saw %d spare creations", got)
	}

	// A tenant with another memory ceiling never gets a spare.
	small := h.Tenant("small", TenantSpec{Module: engine, Limits: Limits{MemoryBytes: h.SpareLimits().MemoryBytes / 2}})
	if _, err := small.Ping(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if s := small.Stats(); s.Created != 1 || s.FromSpare != 0 {
		t.Fatalf("differently-limited tenant: %+v", s)
	}
}

func TestSparePoolDisabled(t *testing.T) {
	h, engine := newTestHost(t, Config{Spares: -1})
	tn := h.Tenant("x", TenantSpec{Module: engine})
	if _, err := tn.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if s := h.Stats(); s.Spares != 0 || s.SpareTaken != 0 || s.Tenants["x"].FromSpare != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestHostCloseStopsBackground(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	for range 3 {
		h, err := New(ctx, Config{CacheDir: testCacheDir, Spares: 3, MaxInstances: 4})
		if err != nil {
			t.Fatal(err)
		}
		m, err := h.Module(ctx, enginewasm.Wasm)
		if err != nil {
			t.Fatal(err)
		}
		tn := h.Tenant("a", TenantSpec{Module: m})
		if _, err := tn.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// Close while the pool is refilling.
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if s := h.Stats(); s.Spares != 0 {
			t.Fatalf("spares left after Close: %+v", s)
		}
	}
}

func TestLimitsDefaultsAndView(t *testing.T) {
	d := DefaultLimits()
	tests := []struct {
		name string
		in   Limits
		want Limits
	}{
		{"zero takes defaults", Limits{}, d},
		{"overrides kept", Limits{MaxQueue: 3, QueueTimeout: time.Second, MaxInstances: 1},
			func() Limits { l := d; l.MaxQueue, l.QueueTimeout, l.MaxInstances = 3, time.Second, 1; return l }()},
		{"memory rounded to pages", Limits{MemoryBytes: 1<<20 + 1},
			func() Limits { l := d; l.MemoryBytes = 1 << 20; return l }()},
		{"memory capped by host", Limits{MemoryBytes: 1 << 40},
			func() Limits { l := d; l.MemoryBytes = testHost.ceiling; return l }()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := testHost.EffectiveLimits(tc.in); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	v := d.View()
	if v.MemoryBytes != d.MemoryBytes || v.CallTimeoutMS != d.CallTimeout.Milliseconds() || v.MaxQueue != d.MaxQueue ||
		v.QueueTimeoutMS != d.QueueTimeout.Milliseconds() || v.MaxInputBytes != d.MaxInput || v.MaxOutputBytes != d.MaxOutput {
		t.Fatalf("view %+v of %+v", v, d)
	}
}

func TestResultClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ResultOK},
		{&CallError{Err: ErrDeadline}, ResultDeadline},
		{&CallError{Err: ErrTrap}, ResultTrap},
		{&CallError{Err: ErrMemoryLimit}, ResultMemory},
		{&CallError{Err: ErrBusy}, ResultBusy},
		{&CallError{Err: ErrABI}, ResultABI},
		{&CallError{Err: ErrInputTooLarge}, ResultTooLarge},
		{&CallError{Err: ErrOutputTooLarge}, ResultTooLarge},
		{&CallError{Err: ErrClosed}, ResultClosed},
		{&CallError{Err: context.Canceled}, ResultCanceled},
		{errors.New("?"), ResultOther},
	} {
		if got := Result(tc.err); got != tc.want {
			t.Errorf("Result(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
