package server

import (
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// The types a Config names live in internal packages; these aliases let an
// embedding host build a Config without importing anything internal.
type (
	// Tenants is a parsed tenants file: credentials, limits and secrets per tenant.
	Tenants = tenant.Set
	// Limits are per-tenant sandbox limits (memory, deadline, instances, queue, I/O caps).
	Limits = sandbox.Limits
	// EgressLimits bound backend calls (timeouts, body sizes, redirects).
	EgressLimits = egress.Limits
	// SessionStore holds session state (memory by default).
	SessionStore = session.Store
	// Secret is a secret value and the catalogs allowed to use it.
	Secret = tenant.Secret
	// EnvPolicy is what the anonymous tenant may read from the environment.
	EnvPolicy = tenant.EnvPolicy
)

// BindSecrets binds secret values to the catalogs allowed to use them
// (name → entry ids); an unbound name is left out.
func BindSecrets(values map[string]string, bindings map[string][]string) map[string]Secret {
	return tenant.Bind(values, bindings)
}

// ParseEnvAllow reads --env-allow entries (NAME or NAME=catalog[,catalog]).
func ParseEnvAllow(specs []string) (*EnvPolicy, error) { return tenant.ParseEnvAllow(specs) }

// LoadTenants reads and validates a tenants file.
func LoadTenants(path string) (*Tenants, error) { return tenant.Load(path) }

// DefaultLimits are the sandbox limits a tenant gets when the tenants file
// sets none.
func DefaultLimits() Limits { return sandbox.DefaultLimits() }
