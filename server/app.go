// Package server is plasmd's front: the echo HTTP app (health, registry,
// execute routes), the MCP server (Streamable HTTP at /mcp and stdio), and
// the Service both call for sessions, teaching, planning and runs.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/authz"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/console"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/credstore"
	"github.com/plasmd/plasmd/server/internal/logthrottle"
	"github.com/plasmd/plasmd/server/internal/metrics"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
	"github.com/plasmd/plasmd/server/internal/tracing"
)

// Version is the server version reported to MCP clients.
const Version = "0.1.0"

// Config configures an App.
type Config struct {
	// MaxBody caps request bodies (echo size syntax, e.g. "1M").
	MaxBody string
	// SessionIdleTTL expires execute sessions unused for this long.
	SessionIdleTTL time.Duration
	// SessionStore holds session state; nil means an in-memory store with
	// SessionIdleTTL (a shared store carries its own TTL).
	SessionStore session.Store
	// Clock, if set, is the in-memory session store's clock (tests of idle
	// expiry); ignored when SessionStore is set.
	Clock func() time.Time
	// CacheDir persists compiled modules across restarts ("" = memory only).
	CacheDir string
	// CacheMaxBytes bounds CacheDir, least recently used entries first
	// (0 = sandbox.DefaultCacheMaxBytes, negative = no size bound).
	CacheMaxBytes int64
	// Limits are the default sandbox limits per tenant.
	Limits sandbox.Limits
	// Egress bounds backend calls.
	Egress egress.Limits
	// EgressAllowPrivate are ranges of the host's own networks (loopback,
	// private, CGNAT, unique-local) a catalog's host name may resolve to,
	// or an IP literal it declares other than its http_backend's or
	// auth.token_url's may be in; an entry no wider than a link-local
	// range, or naming a metadata address, opens that too. New refuses a
	// catalog declaring a literal these ranges leave undialable.
	EgressAllowPrivate []netip.Prefix
	// EgressResolver, if set, replaces DNS for backend host names (tests
	// simulate hostile answers with it).
	EgressResolver func(ctx context.Context, host string) ([]netip.Addr, error)
	// Tenants enables auth; nil means auth off (anonymous tenant).
	Tenants *tenant.Set
	// AnonymousSecrets are secrets of the anonymous tenant (e.g. the
	// demo's), each bound to the catalogs allowed to use it.
	AnonymousSecrets map[string]Secret
	// AnonymousEnv is what the anonymous tenant may read from the process
	// environment (nil: nothing).
	AnonymousEnv *EnvPolicy
	Logger       *slog.Logger
	// MaxInstances caps sandbox instances across all tenants (0 = no cap);
	// idle instances of other tenants are evicted least recently used first.
	MaxInstances int
	// Spares is how many tenant-neutral instances to keep ready per module
	// (0 = default, negative = none).
	Spares int
	// MaxRunning bounds guest calls running at once across all tenants,
	// shared fairly among them (0 = one per usable core, negative = no
	// bound).
	MaxRunning int
	// Modules holds module.wasm by entry id for catalogs that declare a
	// vendor module (catalogdir.ReadModules); see vendor.go.
	Modules map[string][]byte
	// MeteredModules lists, by the sha256 (hex) of their bytes, vendor
	// modules the operator trusts to run metered like the engine, two to
	// three times faster than with wazero's check at every loop
	// (sandbox.TrustModules says what the trust covers). Empty: only the
	// embedded engine is metered.
	MeteredModules []string
	// TracerProvider receives run spans (nil: tracing off); see
	// server/internal/tracing.
	TracerProvider trace.TracerProvider
	// Credentials stores per-principal upstream credentials for catalogs a
	// tenant lists under principal_credentials (nil = none can be stored).
	Credentials credstore.Store
	// Audit records mutations and review-gated runs; nil keeps the last
	// records in memory only (GET /v1/audit still works).
	Audit audit.Log
	// CredentialsFile, when Credentials is nil, opens an encrypted
	// per-principal credential file; its key is read from the environment
	// (credstore.KeyEnv, PLASMD_CREDENTIALS_KEY).
	CredentialsFile string
	// AuditFile, when Audit is nil, appends audit records as JSON lines.
	AuditFile string
	// RateLimiter enforces tenants' rate_limits; replicas that share one
	// (a Redis-backed limiter) share the limits. nil = one per process,
	// on Clock when set.
	RateLimiter ratelimit.Limiter
	// AuthClient fetches authorization servers' JWKS and metadata when the
	// tenants file configures oauth (nil = a client with a 10s timeout).
	AuthClient *http.Client
	// NotifyWindow is how long invalidation bursts are collected before
	// one coalesced notification is sent (0 = 50ms, negative = none).
	NotifyWindow time.Duration
	// StoreURL, if set (redis://…), keeps session state in Redis and fans
	// invalidations out to the other replicas sharing it; ignored when
	// SessionStore is set.
	StoreURL string
	// MCPStateless serves MCP without transport sessions (the go-sdk's
	// stateless mode): intent comes from each request's _meta and
	// plasm_context answers canonical refs any replica resolves.
	MCPStateless bool
	// OperationTimeout bounds one long operation (0 = 10 minutes);
	// OperationWait is how long wait(…) holds for an unfinished one
	// (0 = 10 seconds).
	OperationTimeout, OperationWait time.Duration
}

// App is a running plasmd: HTTP and MCP surfaces over one Service.
type App struct {
	cfg         Config
	log         *slog.Logger
	svc         *core.Service
	tenants     *tenant.Set
	anonymous   *tenant.Tenant
	stdioTenant *tenant.Tenant
	echo        *echo.Echo
	mcp         *mcp.Server
	mcpHTTP     http.Handler
	mcpIDs      mcpSessions
	mcpOwners   mcpOwners
	mcpLog      *slog.Logger // the SDK's, throttled (logthrottle)
	egress      *egress.Client
	host        *sandbox.Host // for CPU use in /metrics
	metrics     *metrics.Metrics
	console     *console.Console
	verifier    *authz.Verifier
	closeStores func()
	bus         *bus.Bus
	// notifyHandled counts notifications handed to sessions (sent or
	// filtered by the session's log level); tests synchronise on it.
	notifyHandled atomic.Int64
	closeStore    func()
	closeOnce     sync.Once
}

// discardLogger is the logger of an App configured without one. Its
// handler is disabled at every level, so a run's log lines are never built:
// a text handler writing to io.Discard formatted every line (the run line
// and the request line cost several µs per run) only to drop it.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// New builds an App serving catalogs.
func New(ctx context.Context, cfg Config, catalogs []*catalog.Catalog) (*App, error) {
	if cfg.MaxBody == "" {
		cfg.MaxBody = "1M"
	}
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	if cfg.Limits == (sandbox.Limits{}) {
		cfg.Limits = sandbox.DefaultLimits()
	}
	if err := checkCatalogLimits(cfg.Tenants, catalogs); err != nil {
		return nil, err
	}
	if err := checkDeclaredOrigins(catalogs, cfg.EgressAllowPrivate); err != nil {
		return nil, err
	}
	meter, err := sandbox.TrustModules(cfg.MeteredModules...)
	if err != nil {
		return nil, err
	}
	closeStores, err := openStores(&cfg)
	if err != nil {
		return nil, err
	}
	m := metrics.New(metrics.Options{})
	journal := activity.New(activity.Options{})
	tracer := tracing.New(cfg.TracerProvider)
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: cfg.CacheDir, CacheMaxBytes: cfg.CacheMaxBytes, MaxInstances: cfg.MaxInstances, Spares: cfg.Spares, Observer: faultTee{m, journal}, MaxRunning: cfg.MaxRunning, Logger: cfg.Logger, Meter: meter})
	if err != nil {
		closeStores()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	m.WatchHost(host)
	engine, err := host.Module(ctx, enginewasm.Module())
	if err != nil {
		host.Close(ctx)
		closeStores()
		return nil, fmt.Errorf("engine module: %w", err)
	}
	eg := egress.New(cfg.Egress)
	eg.OnDenied = egressDenied(m, journal)
	eg.AllowPrivate = cfg.EgressAllowPrivate
	if cfg.EgressResolver != nil {
		eg.SetResolver(cfg.EgressResolver)
	}
	events := bus.New(cfg.Logger)
	store, closeStore, err := openSessionStore(&cfg, events)
	if err != nil {
		host.Close(ctx)
		closeStores()
		return nil, err
	}
	svc, err := core.New(ctx, core.Options{
		Bus:              events,
		Logger:           cfg.Logger,
		Catalogs:         catalogs,
		Host:             host,
		Engine:           engine,
		Sender:           eg,
		Exec:             executor.New(&core.ProbeSender{Next: tracer.Sender(eg)}, executor.Limits{}, executor.WithObserver(m)),
		Store:            store,
		Limits:           cfg.Limits,
		Modules:          cfg.Modules,
		Journal:          journal,
		Tracer:           tracer,
		Credentials:      cfg.Credentials,
		Audit:            cfg.Audit,
		Limiter:          cfg.RateLimiter,
		Clock:            cfg.Clock,
		Exchange:         exchangeFor(cfg),
		Metrics:          m.Registry(),
		OperationTimeout: cfg.OperationTimeout,
		OperationWait:    cfg.OperationWait,
	})
	if err != nil {
		closeStore()
		host.Close(ctx)
		closeStores()
		return nil, err
	}
	a := &App{
		closeStore: closeStore,
		bus:        events,
		cfg:        cfg,
		log:        cfg.Logger,
		tenants:    cfg.Tenants,
		anonymous:  &tenant.Tenant{ID: tenant.Anonymous, Secrets: cfg.AnonymousSecrets, Env: cfg.AnonymousEnv},
		egress:     eg,
		host:       host,
		metrics:    m,
		svc:        svc,
	}
	a.closeStores = closeStores
	if err := a.wire(store); err != nil {
		a.Close(ctx)
		return nil, err
	}
	a.announceDeploy(ctx)
	return a, nil
}

// wire builds the surfaces over the service: the store's expiry and budget
// hooks, the MCP server and its transports, the console, metrics and the
// HTTP routes.
func (a *App) wire(store session.Store) error {
	cfg := a.cfg
	// Stores that can tell when an execute session expires feed the bus.
	if n, ok := store.(interface{ SetOnExpire(func(session.Execute)) }); ok {
		n.SetOnExpire(a.sessionExpired)
	}
	a.stdioTenant = a.anonymous
	a.verifier = newVerifier(cfg.Tenants, cfg)
	a.mcpLog = slog.New(logthrottle.New(cfg.Logger.Handler(), 10*time.Second, nil))
	a.mcp = a.newMCPServer()
	a.mcpHTTP = a.streamableHTTP()
	if err := a.newConsole(); err != nil {
		return err
	}
	a.mcpHTTP = a.bindMCPSessions(a.mcpHTTP)
	// Budgets live in the store (session.Budgeter): the memory store
	// bounds this process's state per tenant, the Redis store the state
	// all replicas share.
	if b, ok := store.(session.Budgeter); ok {
		b.SetBudgets(a.sessionBudget)
	}
	if err := a.metrics.WatchUsage(a.usage); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	a.echo = echo.New()
	a.echo.HideBanner = true
	a.echo.HidePort = true
	a.routes(a.echo)
	return nil
}

// Handler returns the HTTP handler (health, registry, execute, /mcp).
func (a *App) Handler() http.Handler { return a.echo }

// SetStdioTenant selects the tenant stdio MCP sessions act as.
func (a *App) SetStdioTenant(id string) error {
	if a.tenants == nil {
		if id != "" && id != tenant.Anonymous {
			return fmt.Errorf("tenant %q: no tenants file is loaded", id)
		}
		return nil
	}
	t, ok := a.tenants.Get(id)
	if !ok {
		return fmt.Errorf("tenant %q is not in the tenants file", id)
	}
	a.stdioTenant = t
	return nil
}

// ServeStdio serves MCP over the given reader/writer until ctx ends or the
// peer closes.
func (a *App) ServeStdio(ctx context.Context, t mcp.Transport) error {
	ss, err := a.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	// Returns only once the transport is forgotten (by this call or the
	// session's watcher), before the caller closes the store.
	defer a.endTransport(ss)
	err = ss.Wait()
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// RunningOperations is how many long operations this process is running.
func (a *App) RunningOperations() int { return a.svc.RunningOperations() }

// DrainOperations lets the long operations this process runs finish, each
// within its own time limit, until ctx ends, and returns how many still
// run. A process serving one client (stdio) calls it when the client goes,
// so an operation it accepted can end and be waited on from the shared
// store by the next process; Close stops the rest, recording them failed
// because the process ended, with the calls already made.
func (a *App) DrainOperations(ctx context.Context) int { return a.svc.DrainOperations(ctx) }

// Close releases the sandbox host and idle connections.
func (a *App) Close(ctx context.Context) {
	a.closeOnce.Do(func() {
		a.egress.Close()
		a.svc.Close(ctx)
		a.closeStores()
		a.closeStore()
	})
}

// idleTTL is the session idle timeout, defaulting like the session store.
func idleTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return 30 * time.Minute
	}
	return d
}

// openSessionStore is the store cfg asks for: the embedder's, Redis when
// StoreURL names it (which also brings a shared rate limiter, set in cfg),
// or memory. The returned func closes what was opened here.
func openSessionStore(cfg *Config, events *bus.Bus) (session.Store, func(), error) {
	if cfg.SessionStore != nil {
		return cfg.SessionStore, func() {}, nil
	}
	if cfg.StoreURL != "" {
		store, shared, closeStore, err := openSharedStore(*cfg, events)
		if err != nil {
			return nil, nil, err
		}
		cfg.RateLimiter = shared.limiter
		cfg.Audit = shared.audit
		return store, closeStore, nil
	}
	mem := session.NewMemory(cfg.SessionIdleTTL)
	if cfg.Clock != nil {
		mem.SetClock(cfg.Clock)
	}
	return mem, func() {}, nil
}

// streamableHTTP is the MCP Streamable HTTP handler over a.mcp.
func (a *App) streamableHTTP() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.mcp }, &mcp.StreamableHTTPOptions{
		Logger: a.mcpLog,
		// Auth (bearer tokens) and loopback-only binding are enforced by
		// plasmd itself; browsers reach /mcp only through those checks.
		DisableLocalhostProtection: a.cfg.Tenants != nil,
		// Idle transport sessions close like idle execute sessions do, so
		// abandoned connections do not accumulate.
		SessionTimeout: idleTTL(a.cfg.SessionIdleTTL),
		// Stateless: no Mcp-Session-Id, each request stands alone, so any
		// replica serves any request (refs are canonical, see stateless.go).
		Stateless:  a.cfg.MCPStateless,
		EventStore: mcp.NewMemoryEventStore(nil), // Last-Event-ID resumes a lost stream (bounded: 10 MiB)
	})
}
