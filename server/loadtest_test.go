//go:build loadtest

package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server"
)

// TestLoadAttacks replays each row of issue 10's table as an attack
// against a loopback server and prints what the defence did. It is run by
// `make loadtest` (build tag loadtest); every attack is bounded in count
// and time. Figures are printed, not asserted against timings; only the
// outcomes (status codes, leaks, bounds) are checked.
func TestLoadAttacks(t *testing.T) {
	report := func(row, format string, args ...any) {
		t.Logf("%-34s %s", row, fmt.Sprintf(format, args...))
	}

	t.Run("large catalog", func(t *testing.T) {
		f := newFixtureFor(t, func(*demo.Server) server.Config { return server.Config{} }, hugeCatalog(5000))
		path := f.open(t, "tracker", "Issue")
		var worst time.Duration
		fails := 0
		for range 50 {
			start := time.Now()
			r := f.do(t, "POST", path, "text/plain", `Issue`, "Accept", "application/json")
			worst = max(worst, time.Since(start))
			if r.status != http.StatusOK {
				fails++
			}
		}
		report("large catalog (5,000 entities)", "50 tracker calls beside it: %d failed, slowest %v, huge installed %d times",
			fails, worst.Round(time.Millisecond), f.app.CatalogLoads("anonymous")["huge"])
		if fails > 0 {
			t.Error("calls on another catalog failed")
		}
	})

	t.Run("session memory", func(t *testing.T) {
		const budget = 1 << 20
		f := newBudgetFixture(t, fmt.Sprintf("max_run_bytes: %d, max_logical_sessions: 32, max_execute_sessions: 32", budget))
		before := heapInUse()
		for i := range 300 {
			body, _ := json.Marshal(map[string]any{"entry_id": "tracker", "entities": []string{"Issue"}, "intent": fmt.Sprint("intent ", i)})
			r := f.do(t, "POST", "/execute", "application/json", string(body), "Authorization", "Bearer "+tokenA)
			if r.status != http.StatusSeeOther {
				t.Fatalf("open: %d %s", r.status, r.body)
			}
			f.do(t, "POST", r.header.Get("Location"), "text/plain", `Issue`, "Authorization", "Bearer "+tokenA, "Accept", "application/json")
		}
		report("session memory (300 intents+runs)", "run bytes held %.0f (budget %d), execute sessions %.0f (budget 32), heap +%d KiB",
			usageOf(t, f, "a", "run_bytes"), budget, usageOf(t, f, "a", "execute_sessions"), (heapInUse()-before)>>10)
	})

	t.Run("secret of another catalog", func(t *testing.T) {
		f := newVendorFixture(t, "", func(ledger *catalog.Catalog) ([]*catalog.Catalog, map[string][]byte) {
			cats, err := demo.LoadCatalogs(strings.TrimSuffix(ledger.HTTPBackend, demo.LedgerPrefix))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cats {
				if c.EntryID == "tracker" {
					c.EntryID = "copycat"
					return []*catalog.Catalog{c}, nil
				}
			}
			return nil, nil
		})
		r := f.do(t, "POST", f.open(t, "copycat", "Issue"), "text/plain", `Issue`, "Accept", "application/json")
		leaked := strings.Contains(r.body, f.backend.Backend().TrackerToken())
		report("catalog borrowing TRACKER_TOKEN", "status %d, token leaked: %v", r.status, leaked)
		if r.status == http.StatusOK || leaked {
			t.Error("the copycat catalog used the tracker's token")
		}
	})

	t.Run("MCP sessions per tenant", func(t *testing.T) {
		f, _ := newMCPGuardFixture(t, 64)
		g0 := runtime.NumGoroutine()
		ok, refused := 0, 0
		for range 3000 {
			r := f.mcpPost(t, tokenA, "", mcpInitialize)
			switch r.status {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				refused++
			}
		}
		report("MCP initialize ×3000", "opened %d, refused 429 %d, goroutines +%d", ok, refused, runtime.NumGoroutine()-g0)
		if ok > 64 {
			t.Errorf("%d sessions opened past the cap of 64", ok)
		}
	})

	t.Run("MCP session of another tenant", func(t *testing.T) {
		f, _ := newMCPGuardFixture(t, 8)
		id := f.mcpOpen(t, tokenA)
		var got []string
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			body := ""
			if m == http.MethodPost {
				body = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
			}
			got = append(got, fmt.Sprintf("%s %d", m, f.mcpRaw(t, m, tokenB, id, body).status))
		}
		report("MCP session id used by tenant b", "%s", strings.Join(got, ", "))
	})

	t.Run("log flooding", func(t *testing.T) {
		f, logs := newMCPGuardFixture(t, 8)
		before := problemLines(logs.String())
		msg := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		batch := "[" + strings.TrimSuffix(strings.Repeat(msg+",", 17000), ",") + "]"
		r := f.mcpPost(t, tokenA, "", batch)
		lines := problemLines(logs.String()) - before
		report("0.9 MB JSON-RPC batch", "%d bytes: status %d, %d log line(s)", len(batch), r.status, lines)
		if lines > 1 {
			t.Errorf("%d log lines", lines)
		}
	})

	t.Run("DNS to loopback", func(t *testing.T) {
		f := newNamedBackendFixture(t, nil)
		r := f.do(t, "POST", f.open(t, "named", "Issue"), "text/plain", `Issue`, "Accept", "application/json")
		report("name resolving to 127.0.0.1", "status %d (demo's IP-literal origin still served)", r.status)
		if r.status == http.StatusOK {
			t.Error("served")
		}
	})

	t.Run("memory per active tenant", func(t *testing.T) {
		m := activeTenantMemory(t, 64, 10)
		report("64 active tenants", "heap %d → %d MiB, RSS %d → %d MiB: %.1f MiB heap, %.1f MiB RSS per active tenant",
			m.idleHeap>>20, m.activeHeap>>20, m.idleRSS>>20, m.activeRSS>>20,
			float64(m.activeHeap-m.idleHeap)/64/(1<<20), float64(m.activeRSS-m.idleRSS)/64/(1<<20))
	})
}
