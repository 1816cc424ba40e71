package server

import (
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// tenantByID returns the tenant an id names: the anonymous tenant, or one
// of the tenants file.
func (a *App) tenantByID(id string) *tenant.Tenant {
	if id == tenant.Anonymous || a.tenants == nil {
		return a.anonymous
	}
	if t, ok := a.tenants.Get(id); ok {
		return t
	}
	return nil
}

// sessionBudget maps a tenant's limits onto its session store budget;
// zero fields fall back to session.DefaultBudget in the store.
func (a *App) sessionBudget(id string) session.Budget {
	t := a.tenantByID(id)
	if t == nil {
		return session.Budget{}
	}
	l := t.Limits
	return session.Budget{RunBytes: l.MaxRunBytes, Runs: l.MaxRuns, Pages: l.MaxPages,
		Executes: l.MaxExecuteSessions, Logicals: l.MaxLogicalSessions}
}

// usage reports per-tenant budget use for /metrics (plasmd_tenant_usage):
// live MCP sessions, guest calls running and waiting for a host CPU slot,
// pools quarantined for spinning to their deadline and, when the store
// keeps budgets, session state.
func (a *App) usage() map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	put := func(t, res string, v float64) {
		if out[t] == nil {
			out[t] = map[string]float64{}
		}
		out[t][res] = v
	}
	a.mcpOwners.prune(a.liveMCPSessions())
	for t, n := range a.mcpOwners.counts() {
		put(t, "mcp_sessions", float64(n))
	}
	running, waiting := a.host.CPUUse()
	for t, n := range running {
		put(t, "cpu_running", float64(n))
	}
	for t, n := range waiting {
		put(t, "cpu_waiting", float64(n))
	}
	for t, n := range a.host.CPUQuarantined() {
		put(t, "cpu_quarantined", float64(n))
	}
	if b, ok := a.svc.Store().(session.Budgeter); ok {
		for t, u := range b.Usage() {
			put(t, "run_bytes", float64(u.RunBytes))
			put(t, "runs", float64(u.Runs))
			put(t, "pages", float64(u.Pages))
			put(t, "execute_sessions", float64(u.Executes))
			put(t, "logical_sessions", float64(u.Logicals))
		}
	}
	return out
}
