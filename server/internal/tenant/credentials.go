package tenant

import "slices"

// Delegates reports whether catalog entryID's auth is resolved per
// principal for this caller: the tenant lists it under
// principal_credentials (or token_exchange) and the caller acts for a
// principal.
func (t *Tenant) Delegates(entryID string) bool {
	if t.Principal == "" {
		return false
	}
	_, x := t.TokenExchange[entryID]
	return x || slices.Contains(t.PrincipalCredentials, entryID)
}
