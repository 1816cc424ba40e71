package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// value returns the sample of series (name plus exact label set) or -1.
func value(body, series string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	return -1
}

func TestSandboxMetrics(t *testing.T) {
	ctx := context.Background()
	// Share the sandbox tests' compilation cache so the engine compiles
	// once per machine, not once per package.
	cache := sandboxtest.CacheDir()
	m := New(Options{})
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: cache, Observer: m, Spares: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close(ctx)
	if err := m.WatchHost(host); err != nil {
		t.Fatal(err)
	}
	engine, err := host.Module(ctx, enginewasm.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	tn := host.Tenant("acme", sandbox.TenantSpec{Module: engine, Limits: sandbox.Limits{MaxInput: 16}})

	before := scrape(t, m)
	for _, name := range []string{"plasmd_sandbox_spare_instances", "plasmd_sandbox_host_instances", "go_goroutines"} {
		if !strings.Contains(before, name) {
			t.Errorf("scrape lacks %s", name)
		}
	}
	for range 3 {
		if _, err := tn.Ping(ctx, []byte("hi")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tn.Ping(ctx, make([]byte, 17)); !errors.Is(err, sandbox.ErrInputTooLarge) {
		t.Fatalf("oversized ping: %v", err)
	}
	m.EgressDenied("origin")
	m.BackendRequest("github", 404, nil)
	m.BackendRequest("github", 0, errors.New("reset"))

	after := scrape(t, m)
	for _, tc := range []struct {
		series string
		want   float64
	}{
		{`plasmd_sandbox_calls_total{export="plasm_ping",result="ok",tenant="acme"}`, 3},
		{`plasmd_sandbox_calls_total{export="plasm_ping",result="too_large",tenant="acme"}`, 1},
		{`plasmd_sandbox_errors_total{tenant="acme",type="too_large"}`, 1},
		{`plasmd_sandbox_instances_live{tenant="acme"}`, 1},
		{`plasmd_sandbox_instances_idle{tenant="acme"}`, 1},
		{`plasmd_sandbox_host_instances`, 1},
		{`plasmd_sandbox_modules{mode="metered"}`, 1},
		{`plasmd_sandbox_modules{mode="checked"}`, 0},
		{`plasmd_sandbox_call_duration_seconds_count{export="plasm_ping"}`, 4},
		{`plasmd_egress_denied_total{reason="origin"}`, 1},
		{`plasmd_backend_requests_total{entry_id="github",status_class="4xx"}`, 1},
		{`plasmd_backend_requests_total{entry_id="github",status_class="error"}`, 1},
	} {
		if got := value(after, tc.series); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.series, got, tc.want)
		}
	}
	// The engine's start-up alone runs out of fuel at least once.
	if got := value(after, `plasmd_sandbox_meter_ticks_total`); got < 1 {
		t.Errorf("plasmd_sandbox_meter_ticks_total = %v, want at least 1", got)
	}
	// The single instance came from the spare pool or was instantiated;
	// either way exactly one creation was counted.
	spare := value(after, `plasmd_sandbox_instances_created_total{source="spare",tenant="acme"}`)
	fresh := value(after, `plasmd_sandbox_instances_created_total{source="new",tenant="acme"}`)
	if max(spare, 0)+max(fresh, 0) != 1 {
		t.Errorf("created: spare %v new %v\n%s", spare, fresh, after)
	}
}

func TestObserverEvents(t *testing.T) {
	m := New(Options{})
	m.CallDone("t", "plasm_plan", sandbox.ResultDeadline, 0)
	m.CallDone("t", "plasm_plan", sandbox.ResultGuestError, 0)
	m.InstanceDiscarded("t", sandbox.DiscardFailure)
	m.InstanceEvicted("t")
	m.Busy("t", sandbox.BusyQueueFull)
	m.Waited("t", 0, false)
	body := scrape(t, m)
	for _, tc := range []struct {
		series string
		want   float64
	}{
		{`plasmd_sandbox_deadline_hits_total{tenant="t"}`, 1},
		{`plasmd_sandbox_errors_total{tenant="t",type="deadline"}`, 1},
		{`plasmd_sandbox_calls_total{export="plasm_plan",result="guest_error",tenant="t"}`, 1},
		{`plasmd_sandbox_instances_discarded_total{reason="failure",tenant="t"}`, 1},
		{`plasmd_sandbox_instances_evicted_total{tenant="t"}`, 1},
		{`plasmd_sandbox_busy_total{reason="queue_full",tenant="t"}`, 1},
		{`plasmd_sandbox_wait_seconds_count{outcome="busy"}`, 1},
	} {
		if got := value(body, tc.series); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.series, got, tc.want)
		}
	}
	if strings.Contains(body, `type="guest_error"`) {
		t.Error("guest errors counted as sandbox errors")
	}
}

func TestTenantLabelsBounded(t *testing.T) {
	m := New(Options{MaxTenants: 2})
	for _, id := range []string{"a", "b", "c", "d", "a"} {
		m.Busy(id, sandbox.BusyQueueFull)
	}
	body := scrape(t, m)
	for _, tc := range []struct {
		tenant string
		want   float64
	}{{"a", 2}, {"b", 1}, {Overflow, 2}, {"c", -1}} {
		series := fmt.Sprintf(`plasmd_sandbox_busy_total{reason="queue_full",tenant=%q}`, tc.tenant)
		if got := value(body, series); got != tc.want {
			t.Errorf("%s = %v, want %v", series, got, tc.want)
		}
	}
}

func TestBackendCallsCounted(t *testing.T) {
	m := New(Options{})
	for _, call := range []struct {
		entry  string
		status int
		err    error
	}{
		{"github", 200, nil},
		{"github", 503, nil},
		{"github", 0, egress.ErrDenied},
		{"", 200, nil},
	} {
		m.BackendCall(call.entry, call.status, call.err)
	}
	body := scrape(t, m)
	for series, want := range map[string]float64{
		`plasmd_backend_requests_total{entry_id="github",status_class="2xx"}`:   1,
		`plasmd_backend_requests_total{entry_id="github",status_class="5xx"}`:   1,
		`plasmd_backend_requests_total{entry_id="github",status_class="error"}`: 1,
		`plasmd_backend_requests_total{entry_id="_unknown",status_class="2xx"}`: 1,
	} {
		if got := value(body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
