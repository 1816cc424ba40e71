package tenant

import "slices"

// Delegates reports whether catalog entryID's auth is resolved per
// principal for this caller: the tenant lists it under
// principal_credentials and the caller acts for a principal.
func (t *Tenant) Delegates(entryID string) bool {
	return t.Principal != "" && slices.Contains(t.PrincipalCredentials, entryID)
}
