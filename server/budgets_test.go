package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/redistest"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// newBudgetFixture serves the demo to tenants a (with the given limits)
// and b (defaults), each with the demo's secrets.
func newBudgetFixture(t *testing.T, limits string) *fixture {
	t.Helper()
	return newFixtureFor(t, func(backend *demo.Server) server.Config {
		var b strings.Builder
		b.WriteString("tenants:\n")
		for _, tn := range []struct{ id, tok, limits string }{{"a", tokenA, limits}, {"b", tokenB, ""}} {
			fmt.Fprintf(&b, "  - id: %s\n    token_sha256: [%s]\n    limits: {%s}\n    secrets:\n", tn.id, tenant.Digest(tn.tok), tn.limits)
			for k, v := range backend.Backend().Secrets() {
				fmt.Fprintf(&b, "      %s: {value: %q, catalogs: [%s]}\n", k, v, strings.Join(demo.SecretCatalogs()[k], ", "))
			}
		}
		set, err := tenant.Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		return server.Config{Tenants: set}
	})
}

func (f *fixture) openAs(t *testing.T, token, entry, entity string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"entry_id": entry, "entities": []string{entity}})
	r := f.do(t, "POST", "/execute", "application/json", string(body), "Authorization", "Bearer "+token)
	if r.status != http.StatusSeeOther {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	return r.header.Get("Location")
}

func usageOf(t *testing.T, f *fixture, tenantID, resource string) float64 {
	t.Helper()
	m := f.do(t, "GET", "/metrics", "", "").body
	re := regexp.MustCompile(`plasmd_tenant_usage\{resource="` + resource + `",tenant="` + tenantID + `"\} (\S+)`)
	sub := re.FindStringSubmatch(m)
	if sub == nil {
		return 0
	}
	v, err := strconv.ParseFloat(sub[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRunBudgetHostileLoop: tenant a loops on runs in fresh sessions; its
// stored run bytes and execute sessions never pass its budgets (oldest
// evicted, figures in /metrics), its first run's artifact is gone, and
// tenant b's state is untouched. A budget smaller than one run answers 429
// quota-exceeded. The same holds on the shared Redis store with the loop
// spread over two replicas: one budget for both, and each one's /metrics
// shows it.
func TestRunBudgetHostileLoop(t *testing.T) {
	const runBytes = 24 << 10
	limits := fmt.Sprintf("max_run_bytes: %d, max_execute_sessions: 4", runBytes)
	t.Run("memory", func(t *testing.T) {
		hostileRunLoop(t, []*fixture{newBudgetFixture(t, limits)}, runBytes)
		runOverBudget(t, newBudgetFixture(t, "max_run_bytes: 200"))
	})
	t.Run("redis replicas", func(t *testing.T) {
		url := redistest.Start(t).URL()
		backend := startBackend(t)
		tenants := tenantsYAML(backend, "    limits: {"+limits+"}\n")
		hostileRunLoop(t, []*fixture{replicaApp(t, url, backend, tenants, nil), replicaApp(t, url, backend, tenants, nil)}, runBytes)
		tiny := tenantsYAML(backend, "    limits: {max_run_bytes: 200}\n")
		runOverBudget(t, replicaApp(t, redistest.Start(t).URL(), backend, tiny, nil))
	})
}

// hostileRunLoop has tenant a open 30 sessions and run in each, turn by
// turn on each of fs, checking the budgets on the next one's /metrics.
func hostileRunLoop(t *testing.T, fs []*fixture, runBytes float64) {
	t.Helper()
	bPath := fs[0].openAs(t, tokenB, "tracker", "Issue")
	if r := fs[0].do(t, "POST", bPath, "text/plain", `Issue`, "Authorization", "Bearer "+tokenB, "Accept", "application/json"); r.status != http.StatusOK {
		t.Fatalf("b: %d %s", r.status, r.body)
	}
	var first string
	for i := range 30 {
		f, next := fs[i%len(fs)], fs[(i+1)%len(fs)]
		body, _ := json.Marshal(map[string]any{"entry_id": "tracker", "entities": []string{"Issue", "User"}[:1+i%2], "intent": fmt.Sprint("loop ", i)})
		r := f.do(t, "POST", "/execute", "application/json", string(body), "Authorization", "Bearer "+tokenA)
		if r.status != http.StatusSeeOther {
			t.Fatalf("open %d: %d %s", i, r.status, r.body)
		}
		path := r.header.Get("Location")
		r = f.do(t, "POST", path, "text/plain", `Issue`, "Authorization", "Bearer "+tokenA, "Accept", "application/json")
		if r.status != http.StatusOK {
			t.Fatalf("run %d: %d %s", i, r.status, r.body)
		}
		if i == 0 {
			first = path + "/runs"
		}
		if got := usageOf(t, next, "a", "run_bytes"); got > runBytes || got <= 0 {
			t.Fatalf("after %d runs tenant a holds %v run bytes, budget %v", i+1, got, runBytes)
		}
		if got := usageOf(t, next, "a", "execute_sessions"); got > 4 || got < 1 {
			t.Fatalf("after %d opens tenant a holds %v execute sessions, budget 4", i+1, got)
		}
	}
	last := fs[len(fs)-1]
	if r := last.do(t, "GET", first, "", "", "Authorization", "Bearer "+tokenA); r.status == http.StatusOK && (strings.Contains(r.body, `"n":1,`) || strings.Count(r.body, `"run_id"`) >= 30) {
		t.Fatalf("the first session's runs are still stored: %s", r.body)
	}
	if r := last.do(t, "GET", bPath+"/runs", "", "", "Authorization", "Bearer "+tokenB); r.status != http.StatusOK || !strings.Contains(r.body, "run") {
		t.Fatalf("tenant b lost its run: %d %s", r.status, r.body)
	}
	if got := usageOf(t, last, "b", "runs"); got != 1 {
		t.Fatalf("tenant b's runs in /metrics: %v", got)
	}
}

// runOverBudget: a run larger than tenant a's whole run budget is 429
// quota-exceeded.
func runOverBudget(t *testing.T, f *fixture) {
	t.Helper()
	path := f.openAs(t, tokenA, "tracker", "Issue")
	r := f.do(t, "POST", path, "text/plain", `Issue`, "Authorization", "Bearer "+tokenA, "Accept", "application/json")
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.body, "quota-exceeded") {
		t.Fatalf("a run over the whole budget: %d %s", r.status, r.body)
	}
}
