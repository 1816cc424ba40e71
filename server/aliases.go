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
)

// LoadTenants reads and validates a tenants file.
func LoadTenants(path string) (*Tenants, error) { return tenant.Load(path) }

// DefaultLimits are the sandbox limits a tenant gets when the tenants file
// sets none.
func DefaultLimits() Limits { return sandbox.DefaultLimits() }
