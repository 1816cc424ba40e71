// Package core is plasmd's transport-independent heart: the registry of
// catalogs, logical and execute sessions, teaching waves, planning and runs
// for a tenant, and vendor-module checks. The HTTP and MCP surfaces in
// package server are thin adapters over a Service; nothing here knows about
// echo or the MCP SDK (imports_test.go keeps it that way).
package core

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/credstore"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
	"github.com/plasmd/plasmd/server/internal/tracing"
)

// planCacheSize bounds remembered plans across all tenants (a few KiB each).
const planCacheSize = 4096

// Options are what a Service is built from. The caller owns the sandbox
// host and its engine module; Close releases the host.
type Options struct {
	Logger   *slog.Logger
	Catalogs []*catalog.Catalog
	Host     *sandbox.Host
	Engine   *sandbox.Module
	// Sender performs backend calls (the egress client, usually wrapped
	// for metrics); vendor hooks use it too.
	Sender sandbox.Sender
	Exec   *executor.Executor
	Store  session.Store
	Limits sandbox.Limits
	// Modules holds module.wasm by entry id for catalogs with a vendor module.
	Modules map[string][]byte
	// Journal, if set, remembers recent runs (the console); Tracer traces
	// them (nil: no spans, runs still carry their session's trace id).
	Journal *activity.Journal
	Tracer  *tracing.Tracer
	// Credentials holds per-principal upstream credentials (nil = none).
	Credentials credstore.Store
	// Audit records mutations and review-gated runs (nil = an in-memory
	// ring of the last AuditRingSize records).
	Audit audit.Log
	// Limiter enforces tenants' rate_limits (nil = one per process, on Clock).
	Limiter ratelimit.Limiter
	Clock   func() time.Time
	// Exchange obtains a person's upstream token for a catalog by RFC 8693
	// token exchange (nil = catalogs configured for it answer an error).
	Exchange TokenExchanger
	// Bus, if set, hears the rows each run's mutations changed.
	Bus *bus.Bus
	// Metrics, if set, receives the long-operation metrics.
	Metrics prometheus.Registerer
	// OperationTimeout bounds one long operation (0 = 10 minutes);
	// OperationWait is how long wait(…) holds for an unfinished one
	// (0 = 10 seconds). See operations.go.
	OperationTimeout, OperationWait time.Duration
}

// TokenExchanger exchanges the caller's access token for an upstream
// token of the same person, as the tenant's token_exchange for entryID
// says.
type TokenExchanger func(ctx context.Context, t *tenant.Tenant, entryID string) (string, error)

// New checks and compiles vendor modules (a catalog whose module is refused
// is left out, the rest serve) and indexes the catalogs.
func New(ctx context.Context, o Options) (*Service, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	reg, err := NewRegistry(o.Catalogs)
	if err != nil {
		return nil, err
	}
	kept, vend := loadVendors(ctx, o.Logger, o.Host, o.Sender, o.Catalogs, o.Modules)
	if len(kept) != len(o.Catalogs) {
		// A subset of a valid registry is valid.
		reg, _ = NewRegistry(kept)
	}
	if o.Audit == nil {
		o.Audit = audit.NewRing(AuditRingSize)
	}
	if o.Limiter == nil {
		o.Limiter = ratelimit.NewMemory(o.Clock)
	}
	return &Service{
		creds:     o.Credentials,
		audit:     o.Audit,
		limiter:   o.Limiter,
		exchange:  o.Exchange,
		log:       o.Logger,
		registry:  reg,
		host:      o.Host,
		engine:    o.Engine,
		exec:      o.Exec,
		store:     o.Store,
		limits:    o.Limits,
		sandboxes: map[string]*sandbox.Engine{},
		vendors:   vend,
		plans:     newPlanCache(planCacheSize),
		journal:   o.Journal,
		tracer:    o.Tracer,
		bus:       o.Bus,
		symbols:   newSymbolCache(symbolCacheSize),
		ops:       newOpRunner(o.Metrics, o.Store, o.Logger, o.OperationTimeout, o.OperationWait),
	}, nil
}

// Store is the session store the service keeps its state in.
func (s *Service) Store() session.Store { return s.store }

// Close stops long operations and releases the sandbox host.
func (s *Service) Close(ctx context.Context) {
	s.ops.close()
	s.host.Close(ctx)
}

// Health is what operators see of the service.
type Health struct {
	Catalogs int       `json:"catalogs"`
	Engine   string    `json:"engine"`
	Store    string    `json:"store"`
	Refused  []Refusal `json:"refused"`
}

// Health reports the loaded catalogs, engine digest, store kind and
// refused vendor modules.
func (s *Service) Health() Health {
	return Health{Catalogs: len(s.registry.IDs()), Engine: s.engine.Digest, Store: storeKind(s.store), Refused: s.vendors.Refused()}
}

// storeKind names the store for operators; a store can say what it is.
func storeKind(st session.Store) string {
	if k, ok := st.(interface{ Kind() string }); ok {
		return k.Kind()
	}
	return fmt.Sprintf("%T", st)
}

// CatalogSummary is one catalog as the registry lists it.
type CatalogSummary struct {
	EntryID     string   `json:"entry_id"`
	Description string   `json:"description,omitempty"`
	Aliases     []string `json:"registry_aliases,omitempty"`
	Digest      string   `json:"digest"`
	Entities    []string `json:"entities"`
	Transport   string   `json:"transport"`
	Auth        string   `json:"auth"`
	Module      string   `json:"module_sha256,omitempty"`
}

// CapabilityInfo is one capability as the registry lists it.
type CapabilityInfo struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Entity      string `json:"entity"`
	Description string `json:"description,omitempty"`
}

// Catalogs lists the catalogs the tenant may see.
func (s *Service) Catalogs(t *tenant.Tenant) []CatalogSummary {
	var out []CatalogSummary
	for _, c := range s.registry.Visible(t.Allows) {
		out = append(out, summarize(c))
	}
	return out
}

// Catalog describes one catalog the tenant may see, by entry id or alias.
func (s *Service) Catalog(t *tenant.Tenant, entry string) (CatalogSummary, []CapabilityInfo, error) {
	c, ok := s.registry.Resolve(entry)
	if !ok || !t.Allows(c.EntryID) {
		return CatalogSummary{}, nil, problem.NotFound("catalog %q is not in this tenant's registry", entry)
	}
	return summarize(c), capabilityList(c), nil
}

// EffectiveLimits are the tenant's sandbox limits after defaults, as shown
// to the tenant (no secrets).
func (s *Service) EffectiveLimits(t *tenant.Tenant) sandbox.LimitsView {
	return s.host.EffectiveLimits(t.Limits.Apply(s.limits)).View()
}

func summarize(c *catalog.Catalog) CatalogSummary {
	transport := "http"
	for _, m := range c.Mappings {
		if m.Transport == "graphql" {
			transport = "graphql"
			break
		}
	}
	e := CatalogSummary{EntryID: c.EntryID, Description: c.Description, Aliases: c.RegistryAliases, Digest: c.Digest,
		Entities: exposedEntities(c), Transport: transport, Auth: c.Auth.Scheme}
	if e.Auth == "" {
		e.Auth = "none"
	}
	if c.Module != nil {
		e.Module = c.Module.SHA256
	}
	return e
}

func capabilityList(c *catalog.Catalog) []CapabilityInfo {
	var out []CapabilityInfo
	for _, cp := range c.Capabilities {
		out = append(out, CapabilityInfo{Name: cp.Name, Kind: cp.Kind, Entity: cp.Entity, Description: cp.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
