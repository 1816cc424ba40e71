package core

import (
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// secretsFor returns, for a run over entries, tenant t's secrets as each
// catalog may see them (tenant.Tenant.SecretsFor: declared by the catalog
// and bound to it). Guest code names the secret of every request and
// hmac, so this scope is what keeps one catalog's module from reaching
// another catalog's token, or, for the anonymous tenant, any variable of
// the process environment. An entry outside the run resolves nothing.
func (r *Registry) secretsFor(t *tenant.Tenant, entries []string) func(entryID string) egress.Secrets {
	scopes := make(map[string]egress.Secrets, len(entries))
	for _, e := range entries {
		if c, ok := r.byID[e]; ok {
			scopes[e] = t.SecretsFor(c)
		}
	}
	return func(entryID string) egress.Secrets { return scopes[entryID] }
}
