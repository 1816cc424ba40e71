package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHostileNeighbour runs a tenant whose every call spins until its short
// deadline beside a well-behaved tenant pinging the engine. The
// well-behaved tenant must see no errors. Latency is logged, not asserted:
// on a shared 2-core machine under -race the hostile tenant competes for
// the CPU, and a bound tight enough to mean something would be flaky.
func TestHostileNeighbour(t *testing.T) {
	needGuests(t)
	checkNoLeaks(t)
	ctx := context.Background()
	well := testHost.Tenant(t.Name()+"-well", TenantSpec{Module: testEngine})
	defer well.Close()
	hostile := testHost.Tenant(t.Name()+"-hostile", TenantSpec{Module: guestModule(t, "loop"),
		Limits: Limits{CallTimeout: 50 * time.Millisecond, MaxInstances: 2}})
	defer hostile.Close()

	// At least this many calls over at least this long, so the measured
	// window overlaps many hostile deadlines.
	const calls, window = 300, 500 * time.Millisecond
	measure := func() []time.Duration {
		msg := []byte("well-behaved")
		lat := make([]time.Duration, 0, calls)
		for began := time.Now(); len(lat) < calls || time.Since(began) < window; {
			start := time.Now()
			got, err := well.Ping(ctx, msg)
			lat = append(lat, time.Since(start))
			if err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("well-behaved tenant saw %q, %v", got, err)
			}
		}
		slices.Sort(lat)
		return lat
	}
	measure() // warm the well-behaved tenant's instance
	alone := measure()

	stop := make(chan struct{})
	var hostileCalls atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := hostile.Ping(ctx, []byte("hostile"))
				if !errors.Is(err, ErrDeadline) {
					t.Errorf("hostile call: %v, want ErrDeadline", err)
					return
				}
				hostileCalls.Add(1)
			}
		})
	}
	// Let the hostile tenant get going before measuring.
	for hostileCalls.Load() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	beside := measure()
	close(stop)
	wg.Wait()

	pct := func(l []time.Duration, p int) time.Duration { return l[(len(l)-1)*p/100] }
	t.Logf("well-behaved ping alone:            p50 %v  p99 %v  (%d calls)", pct(alone, 50), pct(alone, 99), len(alone))
	t.Logf("well-behaved ping beside a spinner: p50 %v  p99 %v  (%d calls; %d hostile calls, each stopped at its deadline)",
		pct(beside, 50), pct(beside, 99), len(beside), hostileCalls.Load())
	// A deadline can also strike while a replacement instance is being
	// made (instantiation runs under CallTimeout too), so there may be
	// fewer discards than failed calls, but nothing may be left alive.
	if s := hostile.Stats(); s.Live != 0 || s.Discarded == 0 || s.Discarded > uint64(hostileCalls.Load()) {
		t.Errorf("hostile stats %+v after %d overruns: every overrun instance must be discarded", s, hostileCalls.Load())
	}
	if s := well.Stats(); s.Discarded != 0 || s.Created != 1 {
		t.Errorf("well-behaved stats %+v: its instance must be untouched", s)
	}
}

// hostileCase is one misbehaviour and the limits that make it fail fast.
type hostileCase struct {
	guest  string
	limits Limits
	msg    string
}

var pingHostileCases = []hostileCase{
	{guest: "loop", limits: Limits{CallTimeout: 50 * time.Millisecond}, msg: "hostile"},
	{guest: "panic", msg: "hostile"},
	{guest: "grow", limits: Limits{MemoryBytes: 16 << 20}, msg: "hostile"},
	{guest: "recurse", limits: Limits{MemoryBytes: 16 << 20}, msg: "hostile"},
	{guest: "badptr", msg: "hostile"},
	{guest: "huge", limits: Limits{MaxOutput: 1 << 20}, msg: "hostile"},
}

// TestHostileSuiteNoGrowth runs every hostile case (guest misbehaviour,
// malformed host-import use, hostile backends through a guest) several
// times over and checks that nothing accumulates: goroutines return to
// their baseline, the heap does not grow by more than a generous slack,
// and every discarded instance is gone from the host's books. The first
// round is a warm-up (compilation, connection pools, lazily built tables).
func TestHostileSuiteNoGrowth(t *testing.T) {
	needGuests(t)
	ctx := context.Background()
	invoker, err := testHost.Module(ctx, invokerWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	b := newHostileBackends(t)
	abuse := guestModule(t, "abuse")

	round := func(r int) {
		for _, hc := range pingHostileCases {
			id := fmt.Sprintf("growth-%d-%s", r, hc.guest)
			mod := guestModule(t, hc.guest)
			tn := testHost.Tenant(id, TenantSpec{Module: mod, Limits: hc.limits})
			if _, err := tn.Ping(ctx, []byte(hc.msg)); err == nil {
				t.Fatalf("%s: hostile call succeeded", id)
			}
			if hc.limits.CallTimeout != 0 {
				// The next call proves the tenant recovers, not that a
				// loaded machine pings within the hostile call's 50 ms.
				testHost.Tenant(id, TenantSpec{Module: mod, Limits: calm(hc.limits)})
			}
			if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
				t.Fatalf("%s: next call %q, %v", id, got, err)
			}
			tn.Close()
		}

		tn := testHost.Tenant(fmt.Sprintf("growth-%d-abuse", r), TenantSpec{Module: abuse})
		env := &HostEnv{Secrets: mapSecrets{"KEY": "k"}, Egress: cannedSender{}}
		for _, c := range []string{"hmac out wraps", "http request length -1", "read bad buffers"} {
			if _, err := tn.Ping(WithHostEnv(ctx, env), []byte(c)); err != nil {
				t.Fatalf("abuse %s: %v", c, err)
			}
		}
		tn.Close()

		for _, tc := range egressCases(b) {
			tn := testHost.Tenant(fmt.Sprintf("growth-%d-egress-%s", r, tc.name), TenantSpec{Module: invoker, Limits: tc.limits})
			env, done := b.env(t, tc.egress)
			runEgressCase(t, b, tn, invoker, env, tc)
			done()
			tn.Close()
		}
	}

	round(0)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	baseGoroutines := settleGoroutines(0, 0)
	baseHeap := heap()
	baseStats := testHost.Stats()

	const rounds = 3
	for r := 1; r <= rounds; r++ {
		round(r)
	}

	// The wait ends as soon as the count settles; only a leak waits it out
	// (five seconds were reachable under -race on a loaded machine, while
	// closed connections' goroutines were still winding down).
	const goroutineSlack = 4
	if n := settleGoroutines(baseGoroutines+goroutineSlack, 2*time.Minute); n > baseGoroutines+goroutineSlack {
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("goroutines: %d at baseline, %d after %d rounds\n%s", baseGoroutines, n, rounds, buf)
	}
	after := heap()
	growth := int64(after) - int64(baseHeap)
	t.Logf("heap in use: %d MiB at baseline, %d MiB after %d rounds (%+d KiB)", baseHeap>>20, after>>20, rounds, growth>>10)
	const heapSlack = 64 << 20
	if growth > heapSlack {
		t.Errorf("heap grew by %d MiB over %d hostile rounds", growth>>20, rounds)
	}

	s := testHost.Stats()
	if s.Live != baseStats.Live {
		t.Errorf("host has %d live instances, %d at baseline: discarded instances are still counted", s.Live, baseStats.Live)
	}
	for id := range s.Tenants {
		if len(id) > 7 && id[:7] == "growth-" {
			t.Errorf("closed tenant %q is still registered", id)
		}
	}
	// Each round discards one instance per ping case and one per
	// sandbox-level egress failure, plus the closed tenants' idle ones.
	if s.Discarded <= baseStats.Discarded {
		t.Errorf("discard count did not move: %d → %d", baseStats.Discarded, s.Discarded)
	}
}

// settleGoroutines waits up to wait for the goroutine count to drop to at
// most target and returns the last count; with wait 0 it waits for the
// count to stop falling, to take a baseline.
func settleGoroutines(target int, wait time.Duration) int {
	if wait == 0 {
		n := runtime.NumGoroutine()
		for range 20 {
			time.Sleep(20 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m >= n {
				return m
			}
			n = m
		}
		return n
	}
	deadline := time.Now().Add(wait)
	for {
		n := runtime.NumGoroutine()
		if n <= target || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}
