package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// newManyTenantsFixture serves the demo to tenants t0…t(n-1), whose
// bearer tokens are token-0…token-(n-1).
func newManyTenantsFixture(t testing.TB, n int) *fixture {
	t.Helper()
	return newFixtureFor(t, func(backend *demo.Server) server.Config {
		var b strings.Builder
		b.WriteString("tenants:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - id: t%d\n    token_sha256: [%s]\n    secrets:\n", i, tenant.Digest(fmt.Sprint("token-", i)))
			for k, v := range backend.Backend().Secrets() {
				fmt.Fprintf(&b, "      %s: {value: %q, catalogs: [%s]}\n", k, v, strings.Join(demo.SecretCatalogs()[k], ", "))
			}
		}
		set, err := tenant.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return server.Config{Tenants: set}
	})
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// rss is the process's resident set (0 where /proc is missing).
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

type tenantMemory struct {
	idleHeap, activeHeap, idleRSS, activeRSS int64
	failed                                   int64 // tenants whose mix saw an error
}

// activeTenantMemory serves the demo to n tenants, measures heap and RSS,
// then has every tenant run a steady mix (tracker and kanban sessions and
// runs, four intents) rounds times, all tenants at once, and measures
// again. RSS includes the tenants' sandbox instances (wasm linear memory
// is not Go heap).
func activeTenantMemory(t testing.TB, n, rounds int) tenantMemory {
	f := newManyTenantsFixture(t, n)
	var m tenantMemory
	m.idleHeap, m.idleRSS = heapInUse(), rss()
	// Eight clients at a time over all tenants: a steady load, not an
	// overload (the host answers 429 busy past its CPU slots' queue).
	work := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if !tenantMix(t, f, fmt.Sprint("token-", i), rounds) {
					failed.Add(1)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	m.activeHeap, m.activeRSS = heapInUse(), rss()
	m.failed = failed.Load()
	return m
}

// tenantMix runs one tenant's steady mix; false if a call failed (busy or
// deadline on a loaded machine: counted, not fatal, for a memory figure).
func tenantMix(t testing.TB, f *fixture, tok string, rounds int) bool {
	for r := range rounds {
		for _, p := range []struct{ entry, entity, program string }{
			{"tracker", "Issue", `Issue`}, {"kanban", "Team", `Team("team-1")`},
		} {
			body, _ := json.Marshal(map[string]any{"entry_id": p.entry, "entities": []string{p.entity}, "intent": fmt.Sprint("mix ", r%4)})
			res := f.do(t, "POST", "/execute", "application/json", string(body), "Authorization", "Bearer "+tok)
			if res.status != http.StatusSeeOther {
				return false
			}
			if res = f.do(t, "POST", res.header.Get("Location"), "text/plain", p.program, "Authorization", "Bearer "+tok, "Accept", "application/json"); res.status != http.StatusOK {
				return false
			}
		}
	}
	return true
}

// BenchmarkActiveTenantMemory reports the memory 64 tenants running a
// steady mix add over the same server idle (the baseline of the same
// run): Go heap and RSS per active tenant. Run with -benchtime=1x; each
// iteration is a fresh server.
func BenchmarkActiveTenantMemory(b *testing.B) {
	const n = 64
	for range b.N {
		m := activeTenantMemory(b, n, 5)
		b.ReportMetric(float64(m.idleHeap)/(1<<20), "idle-heap-MiB")
		b.ReportMetric(float64(m.idleRSS)/(1<<20), "idle-RSS-MiB")
		b.ReportMetric(float64(m.activeHeap-m.idleHeap)/n/(1<<20), "heap-MiB/active-tenant")
		b.ReportMetric(float64(m.activeRSS-m.idleRSS)/n/(1<<20), "RSS-MiB/active-tenant")
		b.ReportMetric(float64(m.failed), "tenants-with-errors")
	}
}
