package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// BenchmarkNewTenantFirstCall is a brand-new tenant's first Ping: with the
// spare pool the instance is already initialised and only the call runs
// on the request path; without it, instantiation (the Go runtime's start)
// does too. Between iterations the timer stops while the pool refills, so
// /spare measures the steady state of a pool that keeps up.
func BenchmarkNewTenantFirstCall(b *testing.B) {
	for _, tc := range []struct {
		name   string
		spares int
	}{{"spare", 2}, {"nospare", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			h, m := newTestHost(b, Config{Spares: tc.spares})
			ctx := context.Background()
			ready := func() {
				if tc.spares > 0 {
					waitFor(b, "spares", func() bool { return h.Stats().Spares == tc.spares })
				}
			}
			ready()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tn := h.Tenant("t"+strconv.Itoa(i), TenantSpec{Module: m})
				if _, err := tn.Ping(ctx, benchMsg); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				tn.Close()
				ready()
				b.StartTimer()
			}
			b.StopTimer()
			if s := h.Stats(); tc.spares > 0 && s.SpareTaken < uint64(b.N) {
				b.Fatalf("only %d of %d first calls took a spare", s.SpareTaken, b.N)
			}
		})
	}
}

// BenchmarkStart measures what a restart pays before serving: Host.New
// plus registering the engine module, against an empty compilation cache
// directory (cold: full compilation) and a populated one (warm: machine
// code read back from --cache-dir).
func BenchmarkStart(b *testing.B) {
	ctx := context.Background()
	start := func(b *testing.B, dir string) {
		h, err := New(ctx, Config{CacheDir: dir, Spares: -1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Module(ctx, enginewasm.Wasm); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			start(b, dir)
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		start(b, dir) // populate
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start(b, dir)
		}
	})
}

// BenchmarkIdleTenantMemory creates 1,000 tenants with one warm idle
// instance each and reports the process's resident-set growth per tenant.
// It runs once whatever b.N is: the figure is a size, not a rate.
func BenchmarkIdleTenantMemory(b *testing.B) {
	if testing.Short() || raceEnabled {
		b.Skip("RSS measurement: skipped under -short and -race")
	}
	const tenants = 1000
	h, m := newTestHost(b, Config{Spares: -1})
	ctx := context.Background()
	// Warm one tenant first so one-off costs (the host's call-path
	// allocations, first-touch of shared code) are not attributed per
	// tenant.
	warm := h.Tenant("warm", TenantSpec{Module: m})
	if _, err := warm.Ping(ctx, benchMsg); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	before := rssBytes(b)
	b.ResetTimer()
	for i := range tenants {
		tn := h.Tenant(fmt.Sprint("idle-", i), TenantSpec{Module: m})
		if _, err := tn.Ping(ctx, benchMsg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	debug.FreeOSMemory()
	after := rssBytes(b)
	if s := h.Stats(); s.Live != tenants+1 {
		b.Fatalf("live instances %d", s.Live)
	}
	b.ReportMetric(float64(after-before)/tenants, "B/tenant")
	b.ReportMetric(float64(m.minMemory), "B-initial-linear-memory")
}

func rssBytes(tb testing.TB) int64 {
	tb.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Skip("VmRSS not found")
	return 0
}

// BenchmarkThroughput runs warm Pings from parallel callers spread over n
// tenants (each with its default MaxInstances) and reports calls/s.
func BenchmarkThroughput(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprint("tenants=", n), func(b *testing.B) {
			h, m := newTestHost(b, Config{Spares: -1})
			ctx := context.Background()
			ts := make([]*Tenant, n)
			for i := range ts {
				ts[i] = h.Tenant(fmt.Sprint("tp-", i), TenantSpec{Module: m})
				if _, err := ts[i].Ping(ctx, benchMsg); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					tn := ts[next.Add(1)%uint64(n)]
					out, err := tn.Ping(ctx, benchMsg)
					if err != nil || !bytes.Equal(out, benchMsg) {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
	}
}
