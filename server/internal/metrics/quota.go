package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// quotaMetrics are the per-tenant budget figures: refusals at a budget and
// the current use of each budgeted resource.
type quotaMetrics struct {
	exceeded *prometheus.CounterVec
}

func newQuotaMetrics() quotaMetrics {
	return quotaMetrics{exceeded: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "plasmd_quota_exceeded_total", Help: "Requests refused because the tenant was at a budget, by resource.",
	}, []string{"tenant", "resource"})}
}

// QuotaExceeded counts one refusal of tenant at its resource budget.
func (m *Metrics) QuotaExceeded(tenant, resource string) {
	m.quota.exceeded.WithLabelValues(m.tenant(tenant), resource).Inc()
}

// WatchUsage exports use() as the gauge plasmd_tenant_usage{tenant,
// resource}: use maps tenant id → resource → amount and is read at each
// scrape, so the figure is never stale and costs nothing between scrapes.
func (m *Metrics) WatchUsage(use func() map[string]map[string]float64) error {
	return m.reg.Register(&usageCollector{m: m, use: use})
}

var usageDesc = prometheus.NewDesc("plasmd_tenant_usage", "Current use of a per-tenant budget (sessions, bytes), by resource.", []string{"tenant", "resource"}, nil)

type usageCollector struct {
	m   *Metrics
	use func() map[string]map[string]float64
}

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) { ch <- usageDesc }

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	// Tenants past the label bound fold into one series per resource.
	sums := map[[2]string]float64{}
	for tenant, res := range c.use() {
		t := c.m.tenant(tenant)
		for r, v := range res {
			sums[[2]string{t, r}] += v
		}
	}
	for k, v := range sums {
		ch <- prometheus.MustNewConstMetric(usageDesc, prometheus.GaugeValue, v, k[0], k[1])
	}
}
