// Package tenant owns tenant identity: the tenants file that maps bearer
// tokens (stored only as sha256) to tenant ids, each tenant's allowed
// catalogs, secrets and sandbox limits, and the anonymous tenant used when
// auth is off.
package tenant

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/oauthconfig"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
)

// Anonymous is the tenant id used when auth is off.
const Anonymous = "anonymous"

// ErrUnauthorized means the credential matches no tenant.
var ErrUnauthorized = errors.New("unauthorized")

// Limits override sandbox limits for a tenant. A zero field inherits: a
// tenant's limits fall back to the file's defaults, and those to the
// server's (sandbox.DefaultLimits unless configured otherwise). Durations
// are written like "2s" or "500ms".
type Limits struct {
	MemoryMiB      int           `yaml:"memory_mib" json:"memory_mib,omitempty"`
	CallTimeout    time.Duration `yaml:"call_timeout" json:"call_timeout,omitempty"`
	MaxInstances   int           `yaml:"max_instances" json:"max_instances,omitempty"`
	MaxQueue       int           `yaml:"max_queue" json:"max_queue,omitempty"`
	QueueTimeout   time.Duration `yaml:"queue_timeout" json:"queue_timeout,omitempty"`
	MaxInputBytes  int           `yaml:"max_input_bytes" json:"max_input_bytes,omitempty"`
	MaxOutputBytes int           `yaml:"max_output_bytes" json:"max_output_bytes,omitempty"`
	// ReadPages and ReadRows are the run budget: backend read calls and
	// rows one run may read (executor.DefaultBudget when zero).
	ReadPages int `yaml:"read_pages" json:"read_pages,omitempty"`
	ReadRows  int `yaml:"read_rows" json:"read_rows,omitempty"`
	// MaxMCPSessions caps the tenant's live MCP (Streamable HTTP) sessions;
	// zero means DefaultMaxMCPSessions.
	MaxMCPSessions int `yaml:"max_mcp_sessions" json:"max_mcp_sessions,omitempty"`
	// Catalog bounds (zero: none): the catalogs a tenant may use must fit,
	// checked when the server loads them. Bytes are the catalog's encoded
	// size, which is what each of the tenant's instances installs.
	MaxCatalogBytes        int `yaml:"max_catalog_bytes" json:"max_catalog_bytes,omitempty"`
	MaxCatalogEntities     int `yaml:"max_catalog_entities" json:"max_catalog_entities,omitempty"`
	MaxCatalogCapabilities int `yaml:"max_catalog_capabilities" json:"max_catalog_capabilities,omitempty"`
	// Session state budgets (zero: session.DefaultBudget): bytes of stored
	// run results, and counts of runs, paging handles, execute and logical
	// sessions. At a budget the tenant's oldest state is evicted.
	MaxRunBytes        int64 `yaml:"max_run_bytes" json:"max_run_bytes,omitempty"`
	MaxRuns            int   `yaml:"max_runs" json:"max_runs,omitempty"`
	MaxPages           int   `yaml:"max_pages" json:"max_pages,omitempty"`
	MaxExecuteSessions int   `yaml:"max_execute_sessions" json:"max_execute_sessions,omitempty"`
	MaxLogicalSessions int   `yaml:"max_logical_sessions" json:"max_logical_sessions,omitempty"`
}

// DefaultMaxMCPSessions is the live MCP session cap of a tenant that sets
// none: enough for many agents at once, far below what would cost the host
// (each session holds two goroutines and its buffers until it closes).
const DefaultMaxMCPSessions = 64

// MCPSessions returns the tenant's live MCP session cap.
func (l Limits) MCPSessions() int {
	if l.MaxMCPSessions > 0 {
		return l.MaxMCPSessions
	}
	return DefaultMaxMCPSessions
}

// maxMemoryMiB is the most a wasm32 guest can address.
const maxMemoryMiB = 4 << 10

func (l Limits) validate() error {
	switch {
	case l.MemoryMiB < 0 || l.MemoryMiB > maxMemoryMiB:
		return fmt.Errorf("memory_mib %d outside 0..%d", l.MemoryMiB, maxMemoryMiB)
	case l.CallTimeout < 0:
		return fmt.Errorf("call_timeout %v is negative", l.CallTimeout)
	case l.MaxInstances < 0:
		return fmt.Errorf("max_instances %d is negative", l.MaxInstances)
	case l.MaxQueue < 0:
		return fmt.Errorf("max_queue %d is negative", l.MaxQueue)
	case l.QueueTimeout < 0:
		return fmt.Errorf("queue_timeout %v is negative", l.QueueTimeout)
	case l.MaxInputBytes < 0:
		return fmt.Errorf("max_input_bytes %d is negative", l.MaxInputBytes)
	case l.MaxOutputBytes < 0:
		return fmt.Errorf("max_output_bytes %d is negative", l.MaxOutputBytes)
	case l.ReadPages < 0:
		return fmt.Errorf("read_pages %d is negative", l.ReadPages)
	case l.ReadRows < 0:
		return fmt.Errorf("read_rows %d is negative", l.ReadRows)
	case l.MaxMCPSessions < 0:
		return fmt.Errorf("max_mcp_sessions %d is negative", l.MaxMCPSessions)
	case l.MaxRunBytes < 0 || l.MaxRuns < 0 || l.MaxPages < 0 || l.MaxExecuteSessions < 0 || l.MaxLogicalSessions < 0:
		return errors.New("max_run_bytes, max_runs, max_pages, max_execute_sessions and max_logical_sessions may not be negative")
	case l.MaxCatalogBytes < 0 || l.MaxCatalogEntities < 0 || l.MaxCatalogCapabilities < 0:
		return errors.New("max_catalog_bytes, max_catalog_entities and max_catalog_capabilities may not be negative")
	}
	return nil
}

// Over returns l with its zero fields taken from base.
func (l Limits) Over(base Limits) Limits {
	pick := func(v, b int) int {
		if v != 0 {
			return v
		}
		return b
	}
	pickI64 := func(v, b int64) int64 {
		if v != 0 {
			return v
		}
		return b
	}
	pickD := func(v, b time.Duration) time.Duration {
		if v != 0 {
			return v
		}
		return b
	}
	return Limits{
		MemoryMiB:      pick(l.MemoryMiB, base.MemoryMiB),
		CallTimeout:    pickD(l.CallTimeout, base.CallTimeout),
		MaxInstances:   pick(l.MaxInstances, base.MaxInstances),
		MaxQueue:       pick(l.MaxQueue, base.MaxQueue),
		QueueTimeout:   pickD(l.QueueTimeout, base.QueueTimeout),
		MaxInputBytes:  pick(l.MaxInputBytes, base.MaxInputBytes),
		MaxOutputBytes: pick(l.MaxOutputBytes, base.MaxOutputBytes),
		ReadPages:      pick(l.ReadPages, base.ReadPages),
		ReadRows:       pick(l.ReadRows, base.ReadRows),
		MaxMCPSessions: pick(l.MaxMCPSessions, base.MaxMCPSessions),

		MaxCatalogBytes:        pick(l.MaxCatalogBytes, base.MaxCatalogBytes),
		MaxCatalogEntities:     pick(l.MaxCatalogEntities, base.MaxCatalogEntities),
		MaxCatalogCapabilities: pick(l.MaxCatalogCapabilities, base.MaxCatalogCapabilities),

		MaxRunBytes:        pickI64(l.MaxRunBytes, base.MaxRunBytes),
		MaxRuns:            pick(l.MaxRuns, base.MaxRuns),
		MaxPages:           pick(l.MaxPages, base.MaxPages),
		MaxExecuteSessions: pick(l.MaxExecuteSessions, base.MaxExecuteSessions),
		MaxLogicalSessions: pick(l.MaxLogicalSessions, base.MaxLogicalSessions),
	}
}

// Apply returns base (the server's sandbox limits) with l's non-zero
// fields applied.
func (l Limits) Apply(base sandbox.Limits) sandbox.Limits {
	if l.MemoryMiB > 0 {
		base.MemoryBytes = uint64(l.MemoryMiB) << 20
	}
	if l.CallTimeout > 0 {
		base.CallTimeout = l.CallTimeout
	}
	if l.MaxInstances > 0 {
		base.MaxInstances = l.MaxInstances
	}
	if l.MaxQueue > 0 {
		base.MaxQueue = l.MaxQueue
	}
	if l.QueueTimeout > 0 {
		base.QueueTimeout = l.QueueTimeout
	}
	if l.MaxInputBytes > 0 {
		base.MaxInput = l.MaxInputBytes
	}
	if l.MaxOutputBytes > 0 {
		base.MaxOutput = l.MaxOutputBytes
	}
	return base
}

// RunBudget is what one run of this tenant may read.
func (l Limits) RunBudget() executor.Budget {
	return executor.Budget{Pages: l.ReadPages, Rows: l.ReadRows}.Or(executor.DefaultBudget())
}

// Tenant is one isolation domain.
type Tenant struct {
	ID string `yaml:"id"`
	// TokenSHA256 are hex sha256 digests of the tenant's bearer tokens.
	TokenSHA256 []string `yaml:"token_sha256"`
	// Catalogs the tenant may use; empty means every loaded catalog.
	Catalogs []string `yaml:"catalogs"`
	// Secrets resolve the secret names catalogs declare, each only for the
	// catalogs it is bound to (see SecretsFor); they never leave the host.
	Secrets map[string]Secret `yaml:"secrets"`
	// Env is what the anonymous tenant may read from the process
	// environment; configured tenants never read it.
	Env *EnvPolicy `yaml:"-"`
	// Limits are the tenant's own, with the file's defaults already filled
	// into zero fields by Parse.
	Limits Limits `yaml:"limits"`
	// RateLimits are token buckets per tenant, principal and capability.
	RateLimits ratelimit.Config `yaml:"rate_limits"`
	// PrincipalCredentials are catalogs whose auth is resolved per
	// principal: a delegated caller's runs use the credential that person
	// stored (PUT /v1/credentials/{entry_id}), never the tenant's secrets.
	PrincipalCredentials []string `yaml:"principal_credentials"`
	// TokenExchange, by entry id, obtains a person's upstream token by
	// exchanging their access token (RFC 8693) instead of a stored one.
	TokenExchange map[string]oauthconfig.Exchange `yaml:"token_exchange"`
	// AccessToken is the caller's OAuth access token on the per-request
	// copy (the subject of a token exchange); never read from the file.
	AccessToken string `yaml:"-"`
	// Principal is set on the per-request copy a delegated credential
	// (an OAuth access token) yields: the person the agent acts for. It is
	// never read from the file.
	Principal string `yaml:"-"`
}

// Allows reports whether the tenant may use catalog entryID.
func (t *Tenant) Allows(entryID string) bool {
	return len(t.Catalogs) == 0 || slices.Contains(t.Catalogs, entryID)
}

// Set is the configured tenants. A nil *Set means auth is off.
type Set struct {
	byID     map[string]*Tenant
	byToken  map[[32]byte]*Tenant
	defaults Limits
	oauth    *oauthconfig.Config
}

type file struct {
	// Defaults apply to every tenant's zero limit fields.
	Defaults struct {
		Limits Limits `yaml:"limits"`
	} `yaml:"defaults"`
	Tenants []*Tenant `yaml:"tenants"`
	// OAuth makes plasmd an OAuth resource server (see oauthconfig.Config).
	OAuth *oauthconfig.Config `yaml:"oauth"`
}

// validID reports whether id is a safe tenant id: it is spliced into Redis
// key hash tags ({id}), so braces or separators could make two tenants
// share keys.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && (r == '.' || r == '_' || r == '-'):
		default:
			return false
		}
	}
	return true
}

// Load reads a tenants file (YAML or JSON).
func Load(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenants file: %w", err)
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tenants file %s: %w", path, err)
	}
	return s, nil
}

// Parse parses tenants-file content. Unknown keys are errors.
func Parse(b []byte) (*Set, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if err := f.Defaults.Limits.validate(); err != nil {
		return nil, fmt.Errorf("defaults.limits: %w", err)
	}
	s := &Set{byID: map[string]*Tenant{}, byToken: map[[32]byte]*Tenant{}, defaults: f.Defaults.Limits}
	for i, t := range f.Tenants {
		if t == nil || t.ID == "" {
			return nil, fmt.Errorf("tenants[%d]: id is required", i)
		}
		if t.ID == Anonymous {
			return nil, fmt.Errorf("tenants[%d]: id %q is reserved", i, Anonymous)
		}
		if !validID(t.ID) {
			return nil, fmt.Errorf("tenants[%d]: id %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (ids name Redis keys, metrics labels and log fields, so two ids must never read alike)", i, t.ID)
		}
		if _, dup := s.byID[t.ID]; dup {
			return nil, fmt.Errorf("tenants[%d]: duplicate id %q", i, t.ID)
		}
		if err := t.Limits.validate(); err != nil {
			return nil, fmt.Errorf("tenant %s: limits: %w", t.ID, err)
		}
		if err := t.RateLimits.Validate(); err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.ID, err)
		}
		for e, x := range t.TokenExchange {
			if err := x.Validate(); err != nil {
				return nil, fmt.Errorf("tenant %s: token_exchange %s: %w", t.ID, e, err)
			}
		}
		if err := t.validateSecrets(); err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.ID, err)
		}
		// Resolved once here, so every user of t.Limits sees the defaults.
		t.Limits = t.Limits.Over(f.Defaults.Limits)
		if len(t.TokenSHA256) == 0 && !oauthNames(f.OAuth, t.ID) {
			return nil, fmt.Errorf("tenant %s: token_sha256 needs at least one digest (or an oauth rule naming the tenant)", t.ID)
		}
		for _, h := range t.TokenSHA256 {
			raw, err := hex.DecodeString(strings.TrimSpace(h))
			if err != nil || len(raw) != sha256.Size {
				return nil, fmt.Errorf("tenant %s: token_sha256 %q is not a hex sha256 digest", t.ID, h)
			}
			var k [32]byte
			copy(k[:], raw)
			if other, dup := s.byToken[k]; dup {
				return nil, fmt.Errorf("tenant %s: a token digest is also used by tenant %s", t.ID, other.ID)
			}
			s.byToken[k] = t
		}
		s.byID[t.ID] = t
	}
	if err := s.setOAuth(f.OAuth); err != nil {
		return nil, err
	}
	return s, nil
}

// Authenticate maps a bearer token to its tenant.
func (s *Set) Authenticate(token string) (*Tenant, error) {
	if token == "" {
		return nil, ErrUnauthorized
	}
	sum := sha256.Sum256([]byte(token))
	t, ok := s.byToken[sum]
	if !ok {
		return nil, ErrUnauthorized
	}
	// The map lookup already selected by digest; compare again in constant
	// time so the decision does not depend on early-exit comparisons.
	for _, h := range t.TokenSHA256 {
		raw, _ := hex.DecodeString(strings.TrimSpace(h))
		if subtle.ConstantTimeCompare(raw, sum[:]) == 1 {
			return t, nil
		}
	}
	return nil, ErrUnauthorized
}

// Defaults returns the file's default limits (zero on a nil Set); they
// are already folded into every tenant's Limits.
func (s *Set) Defaults() Limits {
	if s == nil {
		return Limits{}
	}
	return s.defaults
}

// Get returns a tenant by id.
func (s *Set) Get(id string) (*Tenant, bool) {
	t, ok := s.byID[id]
	return t, ok
}

// All returns the tenants sorted by id.
func (s *Set) All() []*Tenant {
	out := make([]*Tenant, 0, len(s.byID))
	for _, t := range s.byID {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Tenant) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Digest returns the hex sha256 of a token, for writing tenants files.
func Digest(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}
