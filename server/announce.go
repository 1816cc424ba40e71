package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// digestSwapper is a store shared across processes that remembers what the
// last replica to start served (session.Redis).
type digestSwapper interface {
	SwapDigests(ctx context.Context, name string, cur map[string]string) (map[string]string, error)
}

// announceDeploy compares the catalogs and tenant configuration this
// process serves with what the previous replica to start recorded in the
// shared store, and publishes catalog_updated / tenant_updated for every
// difference, so sessions on the replicas still running learn that a
// rolling deploy changed a catalog (new digest), added or removed one, or
// changed a tenant's configuration. With a store of its own (memory) a
// process has nothing to compare with, and nothing is announced. Failures
// are logged: announcing is best effort and never blocks start-up.
func (a *App) announceDeploy(ctx context.Context) {
	sw, ok := a.svc.Store().(digestSwapper)
	if !ok {
		return
	}
	cats := map[string]string{}
	// Every catalog served (a refused vendor module's catalog is not).
	for _, c := range a.svc.Catalogs(&tenant.Tenant{ID: "all"}) {
		d := c.Digest
		if c.Module != "" {
			d += "+" + c.Module
		}
		cats[c.EntryID] = d
	}
	tenants := a.allTenants()
	tdig := map[string]string{}
	for _, t := range tenants {
		tdig[t.ID] = tenantDigest(t)
	}
	oldCats, err := sw.SwapDigests(ctx, "catalogs", cats)
	if err != nil {
		a.log.Warn("deploy announcement skipped", "err", err)
		return
	}
	oldTenants, err := sw.SwapDigests(ctx, "tenants", tdig)
	if err != nil {
		a.log.Warn("deploy announcement skipped", "err", err)
		return
	}
	// The very first replica has nothing to compare with.
	if len(oldCats) > 0 {
		for _, ch := range diffDigests(oldCats, cats) {
			for _, t := range tenants {
				if t.Allows(ch.id) {
					a.bus.Publish(bus.Event{Kind: bus.KindCatalog, Reason: ch.reason, Tenant: t.ID, EntryID: ch.id, Digest: ch.digest})
				}
			}
		}
	}
	if len(oldTenants) > 0 {
		for _, ch := range diffDigests(oldTenants, tdig) {
			a.bus.Publish(bus.Event{Kind: bus.KindTenant, Reason: ch.reason, Tenant: ch.id})
		}
	}
}

func (a *App) allTenants() []*tenant.Tenant {
	if a.tenants == nil {
		return []*tenant.Tenant{a.anonymous}
	}
	return a.tenants.All()
}

// tenantDigest fingerprints a tenant's configuration (tokens, catalogs,
// secrets, limits); only the hash is stored.
func tenantDigest(t *tenant.Tenant) string {
	b, _ := json.Marshal(t)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

type digestChange struct{ id, reason, digest string }

// diffDigests lists what changed from old to cur, in id order.
func diffDigests(old, cur map[string]string) []digestChange {
	var out []digestChange
	ids := slices.Sorted(maps.Keys(cur))
	for _, id := range ids {
		switch o, ok := old[id]; {
		case !ok:
			out = append(out, digestChange{id, "added", cur[id]})
		case o != cur[id]:
			out = append(out, digestChange{id, "changed", cur[id]})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(old)) {
		if _, ok := cur[id]; !ok {
			out = append(out, digestChange{id, "removed", old[id]})
		}
	}
	return out
}
