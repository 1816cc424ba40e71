package core

import "github.com/plasmd/plasmd/internal/runtime/egress"

// secretsFor returns, for a run over entries, the tenant secrets src as
// each catalog may see them: only the names that catalog declares (its
// auth's env names and its module's secrets). Guest code names the secret
// of every request and hmac, so this scope is what keeps one catalog's
// module from reaching another catalog's token, or, for the anonymous
// tenant, any variable of the process environment. An entry outside the
// run resolves nothing.
func (r *Registry) secretsFor(src egress.Secrets, entries []string) func(entryID string) egress.Secrets {
	scopes := make(map[string]egress.Secrets, len(entries))
	for _, e := range entries {
		if c, ok := r.byID[e]; ok {
			scopes[e] = egress.ScopeSecrets(src, e, c.SecretNames())
		}
	}
	return func(entryID string) egress.Secrets { return scopes[entryID] }
}
