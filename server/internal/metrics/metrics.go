package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
)

// Overflow is the label value reported for tenants or entries past the
// cardinality bound.
const Overflow = "_other"

// Options tune a Metrics. Zero fields take defaults.
type Options struct {
	// MaxTenants bounds distinct tenant label values (default 1000).
	MaxTenants int
	// MaxEntries bounds distinct entry_id label values (default 1000).
	MaxEntries int
}

// Metrics is plasmd's metric set. It implements sandbox.Observer; pass it
// as sandbox.Config.Observer, then WatchHost the host it observes.
type Metrics struct {
	reg *prometheus.Registry

	tenants, entries *boundedLabels

	calls        *prometheus.CounterVec
	callDuration *prometheus.HistogramVec
	errors       *prometheus.CounterVec
	deadline     *prometheus.CounterVec
	created      *prometheus.CounterVec
	evicted      *prometheus.CounterVec
	discarded    *prometheus.CounterVec
	wait         *prometheus.HistogramVec
	busy         *prometheus.CounterVec
	egressDenied *prometheus.CounterVec
	backend      *prometheus.CounterVec
	quota        quotaMetrics
}

var _ sandbox.Observer = (*Metrics)(nil)

// New creates the metric set on its own registry, with the Go runtime and
// process collectors.
func New(opts Options) *Metrics {
	if opts.MaxTenants <= 0 {
		opts.MaxTenants = 1000
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 1000
	}
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		tenants: newBoundedLabels(opts.MaxTenants),
		entries: newBoundedLabels(opts.MaxEntries),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_calls_total", Help: "Ops run in a tenant's sandbox, by result.",
		}, []string{"tenant", "export", "result"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "plasmd_sandbox_call_duration_seconds", Help: "Sandbox op latency, waiting for an instance included.",
			// From a warm ping (microseconds) to a deadline (seconds).
			Buckets: prometheus.ExponentialBuckets(5e-6, 4, 12),
		}, []string{"export"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_errors_total", Help: "Failed sandbox ops by error type.",
		}, []string{"tenant", "type"}),
		deadline: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_deadline_hits_total", Help: "Sandbox ops stopped at their deadline.",
		}, []string{"tenant"}),
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_instances_created_total", Help: "Instances created for a tenant, from the spare pool or new.",
		}, []string{"tenant", "source"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_instances_evicted_total", Help: "Idle instances closed to stay under the global instance cap.",
		}, []string{"tenant"}),
		discarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_instances_discarded_total", Help: "Instances closed, by reason.",
		}, []string{"tenant", "reason"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "plasmd_sandbox_wait_seconds", Help: "Time calls waited for an instance (tenant queue or global cap).",
			Buckets: prometheus.ExponentialBuckets(1e-4, 4, 10),
		}, []string{"outcome"}),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_sandbox_busy_total", Help: "Calls refused because no instance was free in time.",
		}, []string{"tenant", "reason"}),
		egressDenied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_egress_denied_total", Help: "Backend requests refused by the egress policy.",
		}, []string{"reason"}),
		backend: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plasmd_backend_requests_total", Help: "Backend requests sent, by catalog and status class.",
		}, []string{"entry_id", "status_class"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.callDuration, m.errors, m.deadline, m.created, m.evicted, m.discarded,
		m.wait, m.busy, m.egressDenied, m.backend,
	)
	m.quota = newQuotaMetrics()
	m.reg.MustRegister(m.quota.exceeded)
	return m
}

// Registry returns the private registry, e.g. to add collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// WatchHost registers the pool gauges read from host at scrape time. Call
// it once per host.
func (m *Metrics) WatchHost(host *sandbox.Host) error {
	return m.reg.Register(&poolCollector{host: host, tenants: m.tenants})
}

func (m *Metrics) tenant(id string) string { return m.tenants.get(id) }

// CallDone implements sandbox.Observer.
func (m *Metrics) CallDone(tenant, export, result string, d time.Duration) {
	t := m.tenant(tenant)
	m.calls.WithLabelValues(t, export, result).Inc()
	m.callDuration.WithLabelValues(export).Observe(d.Seconds())
	switch result {
	case sandbox.ResultOK, sandbox.ResultGuestError:
		return
	case sandbox.ResultDeadline:
		m.deadline.WithLabelValues(t).Inc()
	}
	m.errors.WithLabelValues(t, result).Inc()
}

// InstanceCreated implements sandbox.Observer.
func (m *Metrics) InstanceCreated(tenant string, spare bool) {
	source := "new"
	if spare {
		source = "spare"
	}
	m.created.WithLabelValues(m.tenant(tenant), source).Inc()
}

// InstanceDiscarded implements sandbox.Observer.
func (m *Metrics) InstanceDiscarded(tenant, reason string) {
	m.discarded.WithLabelValues(m.tenant(tenant), reason).Inc()
}

// InstanceEvicted implements sandbox.Observer.
func (m *Metrics) InstanceEvicted(tenant string) {
	m.evicted.WithLabelValues(m.tenant(tenant)).Inc()
}

// Waited implements sandbox.Observer.
func (m *Metrics) Waited(_ string, d time.Duration, got bool) {
	outcome := "busy"
	if got {
		outcome = "acquired"
	}
	m.wait.WithLabelValues(outcome).Observe(d.Seconds())
}

// Busy implements sandbox.Observer.
func (m *Metrics) Busy(tenant, reason string) {
	m.busy.WithLabelValues(m.tenant(tenant), reason).Inc()
}

// EgressDenied counts a denial; assign it to egress.Client.OnDenied.
func (m *Metrics) EgressDenied(reason string) {
	m.egressDenied.WithLabelValues(reason).Inc()
}

// BackendRequest counts one backend request of catalog entryID: its HTTP
// status, or err when no response came back.
func (m *Metrics) BackendRequest(entryID string, status int, err error) {
	class := "error"
	if err == nil && status >= 100 && status <= 599 {
		class = strconv.Itoa(status/100) + "xx"
	}
	m.backend.WithLabelValues(m.entries.get(entryID), class).Inc()
}

var _ executor.Observer = (*Metrics)(nil)

// BackendCall implements executor.Observer: one backend request per call,
// labelled by catalog entry and status class.
func (m *Metrics) BackendCall(entry string, status int, err error) {
	if entry == "" {
		entry = "_unknown"
	}
	m.BackendRequest(entry, status, err)
}

// boundedLabels admits up to max distinct label values and maps the rest
// to Overflow, so a misconfigured caller cannot grow the series set
// without bound.
type boundedLabels struct {
	max  int
	mu   sync.RWMutex
	seen map[string]struct{}
}

func newBoundedLabels(max int) *boundedLabels {
	return &boundedLabels{max: max, seen: map[string]struct{}{}}
}

func (b *boundedLabels) get(v string) string {
	b.mu.RLock()
	_, ok := b.seen[v]
	b.mu.RUnlock()
	if ok {
		return v
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return Overflow
	}
	b.seen[v] = struct{}{}
	return v
}

// poolCollector reports the host's pool gauges from one Stats snapshot
// per scrape, so they never drift from the pools themselves.
type poolCollector struct {
	host    *sandbox.Host
	tenants *boundedLabels
}

var (
	descLive = prometheus.NewDesc("plasmd_sandbox_instances_live",
		"Instances in existence (idle + serving) per tenant.", []string{"tenant"}, nil)
	descIdle = prometheus.NewDesc("plasmd_sandbox_instances_idle",
		"Instances ready for a call per tenant.", []string{"tenant"}, nil)
	descWaiting = prometheus.NewDesc("plasmd_sandbox_queue_waiting",
		"Calls waiting for an instance per tenant.", []string{"tenant"}, nil)
	descHostLive = prometheus.NewDesc("plasmd_sandbox_host_instances",
		"Tenant instances across the host (what the global cap bounds).", nil, nil)
	descSpares = prometheus.NewDesc("plasmd_sandbox_spare_instances",
		"Ready spare instances across modules.", nil, nil)
	descModules = prometheus.NewDesc("plasmd_sandbox_modules",
		"Compiled modules by how a deadline stops them: metered (fuel checks) or checked (wazero's loop checks).", []string{"mode"}, nil)
	descTicks = prometheus.NewDesc("plasmd_sandbox_meter_ticks_total",
		"Times a metered guest ran out of fuel and the host checked its deadline.", nil, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLive
	ch <- descIdle
	ch <- descWaiting
	ch <- descHostLive
	ch <- descSpares
	ch <- descModules
	ch <- descTicks
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.host.Stats()
	type agg struct{ live, idle, waiting int }
	per := make(map[string]*agg, len(s.Tenants))
	for id, ts := range s.Tenants {
		label := c.tenants.get(id)
		a := per[label]
		if a == nil {
			a = &agg{}
			per[label] = a
		}
		a.live += ts.Live
		a.idle += ts.Idle
		a.waiting += ts.Waiting
	}
	for label, a := range per {
		ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, float64(a.live), label)
		ch <- prometheus.MustNewConstMetric(descIdle, prometheus.GaugeValue, float64(a.idle), label)
		ch <- prometheus.MustNewConstMetric(descWaiting, prometheus.GaugeValue, float64(a.waiting), label)
	}
	ch <- prometheus.MustNewConstMetric(descHostLive, prometheus.GaugeValue, float64(s.Live))
	ch <- prometheus.MustNewConstMetric(descSpares, prometheus.GaugeValue, float64(s.Spares))
	ch <- prometheus.MustNewConstMetric(descModules, prometheus.GaugeValue, float64(s.Metered), "metered")
	ch <- prometheus.MustNewConstMetric(descModules, prometheus.GaugeValue, float64(s.Checked), "checked")
	ch <- prometheus.MustNewConstMetric(descTicks, prometheus.CounterValue, float64(s.MeterTicks))
}
