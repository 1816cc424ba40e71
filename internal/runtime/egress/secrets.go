package egress

import (
	"fmt"
	"slices"
)

// SecretResolver is a Secrets that can say why a name does not resolve.
// Do and the host imports prefer it, so a refusal reaches the caller with
// its reason rather than as a bare "not configured".
type SecretResolver interface {
	Secrets
	// Resolve returns the value of name, or an error that wraps ErrSecret.
	Resolve(name string) (string, error)
}

// UndeclaredSecretError is the refusal of a secret name the catalog on
// whose behalf it was asked for does not declare. It matches ErrSecret
// under errors.Is: to the guest it is exactly a missing secret.
type UndeclaredSecretError struct {
	Catalog string
	Name    string
}

func (e *UndeclaredSecretError) Error() string {
	return fmt.Sprintf("%v: catalog %s does not declare secret %s", ErrSecret, e.Catalog, e.Name)
}

// Is makes the refusal indistinguishable from a missing secret for callers
// that branch on the ErrSecret sentinel.
func (e *UndeclaredSecretError) Is(target error) bool { return target == ErrSecret }

// CatalogSecrets is a tenant's secrets seen through one catalog: only the
// names the catalog declares resolve. Guest code chooses the secret name of
// every request it compiles or sends and of every hmac it asks for, so
// without this scope a catalog's module could name another catalog's token,
// or (for the anonymous tenant, whose secrets fall back to the process
// environment) any environment variable, and send it to its own origin.
type CatalogSecrets struct {
	catalog string
	src     Secrets
	allowed []string
}

// ScopeSecrets returns src restricted to names, on behalf of catalog (an
// entry id, used in refusals). A nil src resolves nothing.
func ScopeSecrets(src Secrets, catalog string, names []string) *CatalogSecrets {
	allowed := slices.Clone(names)
	slices.Sort(allowed)
	return &CatalogSecrets{catalog: catalog, src: src, allowed: slices.Compact(allowed)}
}

// Declares reports whether the catalog declares name.
func (s *CatalogSecrets) Declares(name string) bool {
	_, ok := slices.BinarySearch(s.allowed, name)
	return ok
}

// Secret resolves name if the catalog declares it and it is configured.
func (s *CatalogSecrets) Secret(name string) (string, bool) {
	v, err := s.Resolve(name)
	return v, err == nil
}

// Resolve resolves name; an undeclared name is an *UndeclaredSecretError
// and the source is not consulted for it at all.
func (s *CatalogSecrets) Resolve(name string) (string, error) {
	if !s.Declares(name) {
		return "", &UndeclaredSecretError{Catalog: s.catalog, Name: name}
	}
	if s.src != nil {
		if v, ok := s.src.Secret(name); ok && v != "" {
			return v, nil
		}
	}
	return "", missingSecret(name)
}

func missingSecret(name string) error {
	return fmt.Errorf("%w: %s (bind it to the catalog in the tenant's secrets; with auth off, name it PLASMD_* or pass --env-allow)", ErrSecret, name)
}

// resolveSecret resolves name through secrets, with the reason when it
// cannot.
func resolveSecret(secrets Secrets, name string) (string, error) {
	if r, ok := secrets.(SecretResolver); ok {
		return r.Resolve(name)
	}
	if secrets != nil {
		if v, ok := secrets.Secret(name); ok && v != "" {
			return v, nil
		}
	}
	return "", missingSecret(name)
}
