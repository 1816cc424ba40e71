package server

import (
	"context"
	"time"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/console"
	"github.com/plasmd/plasmd/server/internal/metrics"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// faultTee passes sandbox events to metrics and records failed calls in
// the journal (the console's recent sandbox errors).
type faultTee struct {
	*metrics.Metrics
	j *activity.Journal
}

// CallDone implements sandbox.Observer. Guest errors (a program's syntax
// error) and cancellations are the caller's business, not sandbox faults.
func (f faultTee) CallDone(tenantID, export, result string, d time.Duration) {
	f.Metrics.CallDone(tenantID, export, result, d)
	switch result {
	case sandbox.ResultOK, sandbox.ResultGuestError, sandbox.ResultCanceled:
		return
	}
	f.j.AddFault(activity.Fault{Tenant: tenantID, Kind: "sandbox", What: export, Result: result})
}

var _ sandbox.Observer = faultTee{}

// egressDenied counts a denial and records it for operators (the egress
// client does not know the tenant, so only the all-tenant view shows it).
func egressDenied(m *metrics.Metrics, j *activity.Journal) func(string) {
	return func(reason string) {
		m.EgressDenied(reason)
		j.AddFault(activity.Fault{Kind: "egress", What: reason})
	}
}

// consoleBackend is the server as the console sees it.
type consoleBackend struct{ a *App }

var _ console.Backend = consoleBackend{}

func (b consoleBackend) tenant(id string) (*tenant.Tenant, bool) {
	if b.a.tenants == nil {
		return b.a.anonymous, id == tenant.Anonymous
	}
	return b.a.tenants.Get(id)
}

func (b consoleBackend) Catalogs(id string) []*catalog.Catalog {
	if id == "" {
		return b.a.svc.VisibleCatalogs(func(string) bool { return true })
	}
	t, ok := b.tenant(id)
	if !ok {
		return nil
	}
	return b.a.svc.VisibleCatalogs(t.Allows)
}

func (b consoleBackend) Refused() map[string]string {
	out := map[string]string{}
	for _, r := range b.a.svc.Health().Refused {
		out[r.EntryID] = r.Error
	}
	return out
}

func (b consoleBackend) Execute(ctx context.Context, tenantID, ph, id string) (session.Execute, error) {
	return b.a.svc.Store().GetExecute(ctx, tenantID, ph, id)
}

func (b consoleBackend) Logical(ctx context.Context, tenantID, id string) (session.Logical, error) {
	return b.a.svc.Store().GetLogical(ctx, tenantID, id)
}

func (b consoleBackend) Tenants(id string) []console.TenantInfo {
	var ts []*tenant.Tenant
	switch {
	case id != "":
		if t, ok := b.tenant(id); ok {
			ts = append(ts, t)
		}
	case b.a.tenants == nil:
		ts = append(ts, b.a.anonymous)
	default:
		ts = b.a.tenants.All()
	}
	pools := b.a.svc.PoolStats()
	var out []console.TenantInfo
	for _, t := range ts {
		pool, active := pools[t.ID]
		out = append(out, console.TenantInfo{ID: t.ID, Catalogs: t.Catalogs, Pool: pool, Active: active,
			Limits: b.a.svc.EffectiveLimits(t)})
	}
	return out
}

func (b consoleBackend) Authenticate(token string) (string, bool) {
	if b.a.tenants == nil {
		return "", false
	}
	t, err := b.a.tenants.Authenticate(token)
	if err != nil {
		return "", false
	}
	return t.ID, true
}
