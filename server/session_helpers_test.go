package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// fakeClock is a settable clock for idle-TTL tests: time moves only when a
// test says so.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Bearer tokens of the two-tenant fixture.
const (
	tokenA = "token-tenant-a"
	tokenB = "token-tenant-b"
)

// newFixtureFor is newFixture with a config that may depend on the running
// demo backend (e.g. a tenants file holding its secrets).
func newFixtureFor(t testing.TB, mk func(b *demo.Server) server.Config, extra ...*catalog.Catalog) *fixture {
	t.Helper()
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cats, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	cats = append(cats, extra...)
	cfg := mk(backend)
	useTestStore(t, &cfg)
	if cfg.CacheDir == "" {
		cfg.CacheDir = testCacheDir()
	}
	if cfg.AnonymousSecrets == nil {
		cfg.AnonymousSecrets = tenant.Bind(backend.Backend().Secrets(), demo.SecretCatalogs())
	}
	if cfg.Limits == (server.Limits{}) {
		cfg.Limits = patientLimits()
	}
	app, err := server.New(ctx, cfg, cats)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		app.Close(context.Background())
		_ = backend.Close()
	})
	return &fixture{app: app, srv: srv, backend: backend}
}

// newTenantsFixture serves the demo with auth on: tenants "a" and "b", each
// with its own token and the demo's secrets.
func newTenantsFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureFor(t, func(backend *demo.Server) server.Config {
		var b strings.Builder
		b.WriteString("tenants:\n")
		for _, tn := range []struct{ id, tok string }{{"a", tokenA}, {"b", tokenB}} {
			b.WriteString("  - id: " + tn.id + "\n    token_sha256: [" + tenant.Digest(tn.tok) + "]\n    secrets:\n")
			for k, v := range backend.Backend().Secrets() {
				cats := strings.Join(demo.SecretCatalogs()[k], ", ")
				b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + cats + "]}\n")
			}
		}
		set, err := tenant.Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("tenants file: %v\n%s", err, b.String())
		}
		return server.Config{Tenants: set}
	})
}

// mcpClientAs connects with a bearer token on every HTTP request.
func (f *fixture) mcpClientAs(t testing.TB, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "session-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func seedList(pairs ...string) []any {
	var out []any
	for _, p := range pairs {
		api, entity, _ := strings.Cut(p, ":")
		out = append(out, map[string]any{"api": api, "entity": entity})
	}
	return out
}

// contextCall calls plasm_context and fails the test on a tool error.
func contextCall(t testing.TB, cs *mcp.ClientSession, intent string, seeds ...string) toolOut {
	t.Helper()
	return mustOK(t, call(t, cs, "plasm_context", map[string]any{"intent": intent, "seeds": seedList(seeds...)}))
}

func runCall(t testing.TB, cs *mcp.ClientSession, ref, program string) toolOut {
	t.Helper()
	return call(t, cs, "plasm_run", map[string]any{"logical_session_ref": ref, "program": program})
}

// unchangedText is the whole plasm_context answer when nothing is new: the
// ref line, then the unchanged line saying how to get the table again.
func unchangedText(ref string, n int) string {
	return "`" + ref + "`\n\n_Session unchanged (`e1`…`e" + strconv.Itoa(n) + "`). Use `plasm` / `plasm_run` with this logical_session_ref." +
		" Lost the table? Call `plasm_context` with `refresh: true`, or read `plasm://session/" + ref + "/teaching`._"
}

func refOf(o toolOut) string {
	ref, _ := o.meta["logical_session_ref"].(string)
	return ref
}

// patientLimits are the default limits with deadlines no loaded CI machine
// reaches: these tests are about behaviour, and a guest call that is merely
// slow under -race must not fail them. Tests about deadlines set their own.
func patientLimits() server.Limits {
	l := server.DefaultLimits()
	l.CallTimeout = time.Minute
	l.QueueTimeout = time.Minute
	return l
}
