// Command plasmd serves catalogs to AI agents over MCP and HTTP, running all
// catalog logic in per-tenant WebAssembly sandboxes.
//
//	plasmd serve [--demo] [--catalogs DIR]… [--addr 127.0.0.1:8787] [--tenants FILE]
//	plasmd stdio [--demo] [--catalogs DIR]… [--tenant ID] [--tenants FILE]
//	plasmd catalog check [--json] DIR|FILE…
//	plasmd run [--demo] [--catalogs DIR]… --seed api:Entity… [--plan] PROGRAM|-
//	plasmd module check FILE.wasm…
//	plasmd version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server"
)

const usage = `plasmd — safe, cheap API access for AI agents

Usage:
  plasmd serve   [flags]        serve HTTP (/execute, /v1/…) and MCP (/mcp)
  plasmd stdio   [flags]        serve MCP over stdin/stdout
  plasmd run --seed api:Entity… PROGRAM
                                open a session and run one program (--plan: dry run)
  plasmd catalog check [--json] PATH…
                                validate catalog directories or .cgs.yaml files
  plasmd module check FILE.wasm inspect a vendor module: exports, ABI version, sha256, problems
  plasmd version

Run "plasmd serve -h" for flags.
`

func main() {
	reserveHostProc()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "stdio":
		return stdio(args[1:], stderr)
	case "catalog":
		if len(args) < 2 || args[1] != "check" {
			fmt.Fprintln(stderr, "usage: plasmd catalog check [--json] PATH…")
			return 2
		}
		return checkCatalogs(args[2:], stdout, stderr)
	case "module":
		return moduleCommand(args[1:], stdout, stderr)
	case "run":
		return runProgram(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "plasmd", server.Version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "plasmd: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// common holds the flags serve and stdio share.
type common struct {
	demo        bool
	catalogs    multiFlag
	tenantsFile string
	idleTTL     time.Duration
	cacheDir    string
	cacheMaxMiB int64
	maxInst     int
	spares      int
	logLevel    string
	logFormat   string
	otlp        string
	credentials string
	auditLog    string
	store       string
	stateless   bool
	envAllow    multiFlag
	allowPriv   multiFlag
	maxRunning  int
	metered     multiFlag
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func (c *common) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.demo, "demo", false, "start the embedded demo backend and serve its catalogs (tracker, kanban, ledger)")
	fs.Var(&c.catalogs, "catalogs", "a directory of catalog directories, or one catalog directory (repeatable)")
	fs.StringVar(&c.tenantsFile, "tenants", "", "tenants file (YAML): bearer token digests, catalogs, secrets, limits; without it auth is off and only loopback is allowed")
	fs.DurationVar(&c.idleTTL, "session-idle-ttl", 30*time.Minute, "expire execute sessions idle this long")
	fs.StringVar(&c.cacheDir, "cache-dir", defaultCacheDir(), "keep compiled Wasm modules here across restarts and processes (shared safely by this user's processes; entries keyed by wazero version and module digest; refused, with a warning, if another user owns it or group or others can write it); \"off\" keeps them in memory only")
	fs.Int64Var(&c.cacheMaxMiB, "cache-max-mib", sandbox.DefaultCacheMaxBytes>>20, "bound the --cache-dir to this many MiB, least recently used modules removed first (those used in the last hour stay); modules unused for 30 days go whatever the size; -1 = no size bound")
	fs.IntVar(&c.maxInst, "max-instances", 0, "cap on sandbox instances across all tenants (0 = no cap); idle tenants are evicted least recently used first")
	fs.IntVar(&c.spares, "spares", 0, "ready, tenant-neutral instances kept per module so a new tenant's first call is warm (0 = default 2, -1 = none)")
	fs.Var(&c.envAllow, "env-allow", "with auth off, also read this environment variable: NAME for a catalog auth block that names it (PLASMD_* names need no flag), or NAME=catalog[,catalog] for any use those catalogs declare (repeatable)")
	fs.IntVar(&c.maxRunning, "max-running", 0, "guest calls running at once across all tenants, shared fairly among them (0 = one per usable core: GOMAXPROCS as Go sets it, which follows a CPU quota; -1 = no bound)")
	fs.Var(&c.metered, "metered-module", "run the vendor module whose `SHA256` (as plasmd module check prints it) is this metered, like the engine: 2-3x faster guest code, for modules you trust as much as your own code (repeatable)")
	fs.Var(&c.allowPriv, "egress-allow-private", "let catalogs' host names, and IP literals other than http_backend's (and auth.token_url's, for the token fetch), reach this range of the host's own networks (loopback, private, CGNAT, unique-local), e.g. 10.0.0.0/8; a range no wider than 169.254.0.0/16, or a metadata address itself, opens that too (repeatable)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "text, or json: one object a line with tenant, logical session, run id and problem type")
	fs.StringVar(&c.otlp, "otlp-endpoint", "", "export run traces over OTLP/HTTP to this collector (e.g. http://127.0.0.1:4318); off when empty")
	fs.StringVar(&c.credentials, "credentials", "", "per-principal upstream credentials file, AES-GCM encrypted under the base64 32-byte key in $PLASMD_CREDENTIALS_KEY")
	fs.StringVar(&c.auditLog, "audit-log", "", "append audit records (mutations, review-gated runs, credential changes) to this JSON lines file")
	fs.BoolVar(&c.stateless, "mcp-stateless", false, "serve MCP without transport sessions (any replica serves any request; intent from each request's _meta; refs sN shared by every replica; no notifications)")
	fs.StringVar(&c.store, "store", "", "session store: empty keeps sessions in memory; redis://host:port/db shares them (and invalidations) with every replica on that Redis")
}

// setup loads catalogs (and starts the demo backend) and builds the app.
func (c *common) setup(ctx context.Context, logOut io.Writer) (*server.App, func(), error) {
	log, err := newLogger(logOut, c.logLevel, c.logFormat)
	if err != nil {
		return nil, nil, err
	}
	tp, cleanup, err := newTracerProvider(ctx, c.otlp, log)
	if err != nil {
		return nil, nil, err
	}
	var cats []*catalog.Catalog
	var secrets map[string]server.Secret
	modules := map[string][]byte{}
	if c.demo {
		srv, err := demo.Start(ctx, demo.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("demo backend: %w", err)
		}
		stopTracing := cleanup
		cleanup = func() { _ = srv.Close(); stopTracing() }
		dc, err := demo.LoadCatalogs(srv.URL())
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		if err := addModules(modules, demo.Catalogs, "catalogs", dc); err != nil {
			cleanup()
			return nil, nil, err
		}
		cats = append(cats, dc...)
		secrets = server.BindSecrets(srv.Backend().Secrets(), demo.SecretCatalogs())
		log.Info("demo backend started", "url", srv.URL())
	}
	for _, dir := range c.catalogs {
		loaded, err := loadCatalogs(dir, log)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		if err := addDirModules(modules, dir, loaded); err != nil {
			cleanup()
			return nil, nil, err
		}
		cats = append(cats, loaded...)
	}
	if len(cats) == 0 {
		cleanup()
		return nil, nil, errors.New("no catalogs: pass --demo or --catalogs DIR")
	}
	var tenants *server.Tenants
	if c.tenantsFile != "" {
		var err error
		if tenants, err = server.LoadTenants(c.tenantsFile); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	env, err := server.ParseEnvAllow(c.envAllow)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	allowPriv, err := egress.ParsePrefixes(c.allowPriv)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("--egress-allow-private: %w", err)
	}
	app, err := server.New(ctx, server.Config{
		SessionIdleTTL: c.idleTTL, CacheDir: resolveCacheDir(c.cacheDir, log), CacheMaxBytes: cacheMaxBytes(c.cacheMaxMiB), Tenants: tenants, StoreURL: c.store, MCPStateless: c.stateless,
		MaxInstances: c.maxInst, Spares: c.spares, MaxRunning: runningSlots(c.maxRunning, usableCores), MeteredModules: c.metered,
		AnonymousSecrets: secrets, AnonymousEnv: env, Logger: log, Modules: modules, TracerProvider: tp,
		CredentialsFile: c.credentials, AuditFile: c.auditLog,
		EgressAllowPrivate: allowPriv,
	}, cats)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return app, func() { app.Close(context.Background()); cleanup() }, nil
}

// loadCatalogs accepts one catalog (a directory with domain.yaml, or a
// .cgs.yaml file) or a directory of catalog directories. Warnings (an
// IP-literal origin, a key Plasm tolerates) are logged, as `plasmd
// catalog check` prints them, at most maxLoggedWarnings per catalog.
func loadCatalogs(path string, log *slog.Logger) ([]*catalog.Catalog, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--catalogs: %w", err)
	}
	var loaded []catalogdir.Loaded
	if !st.IsDir() || fileExists(path+"/domain.yaml") {
		l, err := catalogdir.LoadPathReport(path)
		if err != nil {
			return nil, err
		}
		loaded = []catalogdir.Loaded{l}
	} else if loaded, err = catalogdir.LoadAllReport(os.DirFS(path), "."); err != nil {
		return nil, err
	}
	cats := make([]*catalog.Catalog, len(loaded))
	for i, l := range loaded {
		cats[i] = l.Catalog
		for j, w := range l.Warnings {
			if j == maxLoggedWarnings {
				log.Warn("catalog has more warnings; run plasmd catalog check", "catalog", l.Catalog.EntryID, "warnings", len(l.Warnings))
				break
			}
			log.Warn("catalog warning", "catalog", l.Catalog.EntryID, "warning", w.Error())
		}
	}
	return cats, nil
}

// maxLoggedWarnings bounds the warnings logged per catalog at start.
const maxLoggedWarnings = 20

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	addr := fs.String("addr", "127.0.0.1:8787", "listen address")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.tenantsFile == "" && !loopback(*addr) {
		fmt.Fprintf(stderr, "plasmd: refusing to listen on %s without --tenants: auth is off, so only loopback addresses are allowed\n", *addr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app, cleanup, err := c.setup(ctx, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return 1
	}
	defer cleanup()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return 1
	}
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "plasmd listening on http://%s (MCP at /mcp)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(stderr, "plasmd:", err)
			return 1
		}
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return 0
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func stdio(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	tenantID := fs.String("tenant", "", "tenant to act as (requires --tenants)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// Every signal is also counted for the drain after serving (drain.go),
	// registered now so none falls between the two to the default action.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// stdout carries MCP; logs go to stderr only.
	app, cleanup, err := c.setup(ctx, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return 1
	}
	defer cleanup()
	if *tenantID != "" {
		if err := app.SetStdioTenant(*tenantID); err != nil {
			fmt.Fprintln(stderr, "plasmd:", err)
			return 2
		}
	}
	if err := app.ServeStdio(ctx, server.GuardedStdio(os.Stdin, os.Stdout)); err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return 1
	}
	drainStdio(app, stderr, sigs)
	return 0
}
