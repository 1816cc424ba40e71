package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/graphql-go/graphql"
)

// DefaultTrackerToken is the tracker bearer token when Options.TrackerToken is empty.
const DefaultTrackerToken = "demo-tracker-token"

// TrackerTokenEnv is the secret name the tracker catalog's auth reads.
const TrackerTokenEnv = "TRACKER_TOKEN"

// Options configures a Backend. The zero value is the standard demo.
type Options struct {
	// Seed selects the generated dataset; 0 means DefaultSeed.
	Seed uint64
	// TrackerToken is the bearer token the tracker API accepts; "" means
	// DefaultTrackerToken.
	TrackerToken string
	// LedgerSigningKey is the key ledger request signatures must be made
	// with; "" means DefaultLedgerSigningKey.
	LedgerSigningKey string
	// Now stamps rows written through the APIs; nil means time.Now. Seeded
	// rows never depend on it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.TrackerToken == "" {
		o.TrackerToken = DefaultTrackerToken
	}
	if o.LedgerSigningKey == "" {
		o.LedgerSigningKey = DefaultLedgerSigningKey
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Backend serves the demo APIs. It is an http.Handler, safe for concurrent
// use; writes persist in memory for the life of the Backend.
type Backend struct {
	opts    Options
	token   []byte
	now     func() time.Time
	tracker *trackerStore
	kanban  *kanbanStore
	ledger  *ledgerStore
	schema  graphql.Schema
}

// NewBackend seeds a fresh dataset from opts.Seed.
func NewBackend(opts Options) *Backend {
	opts = opts.withDefaults()
	b := &Backend{
		opts:    opts,
		token:   []byte(opts.TrackerToken),
		now:     opts.Now,
		tracker: seedTracker(opts.Seed),
		kanban:  seedKanban(opts.Seed),
		ledger:  seedLedger(opts.Seed),
	}
	schema, err := newKanbanSchema(b.kanban, b.now)
	if err != nil {
		// The schema is a constant of this package; tests build it, so this
		// only fires if the package itself is broken.
		panic(fmt.Sprintf("demo: building the kanban GraphQL schema: %v", err))
	}
	b.schema = schema
	return b
}

// TrackerToken is the bearer token the tracker API accepts.
func (b *Backend) TrackerToken() string { return b.opts.TrackerToken }

// Secrets maps the secret names the demo catalogs read to their values, for
// handing to the tenant that uses the demo.
func (b *Backend) Secrets() map[string]string {
	return map[string]string{TrackerTokenEnv: b.opts.TrackerToken, LedgerSigningKeyEnv: b.opts.LedgerSigningKey}
}

// SecretCatalogs maps each of Secrets' names to the demo catalogs (entry
// ids) allowed to use it: a tenant binds secrets to catalogs, so no other
// catalog that declares the same name receives the value.
func SecretCatalogs() map[string][]string {
	return map[string][]string{TrackerTokenEnv: {"tracker"}, LedgerSigningKeyEnv: {"ledger"}}
}

// ServeHTTP routes /healthz, the tracker REST API under TrackerPrefix, the
// kanban GraphQL endpoint at KanbanPath and the signed ledger API under
// LedgerPrefix. Every response, errors included, is JSON.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/healthz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case path == TrackerPrefix || strings.HasPrefix(path, TrackerPrefix+"/"):
		b.serveTracker(w, r, strings.TrimPrefix(path, TrackerPrefix))
	case path == KanbanPath:
		b.serveKanban(w, r)
	case path == LedgerPrefix || strings.HasPrefix(path, LedgerPrefix+"/"):
		b.serveLedger(w, r, strings.TrimPrefix(path, LedgerPrefix))
	default:
		writeError(w, errorf(http.StatusNotFound, "no such endpoint: %s", path))
	}
}

// Server is a Backend listening on a loopback port.
type Server struct {
	backend *Backend
	srv     *http.Server
	url     string
	done    chan struct{} // closed when Serve returns
	once    sync.Once
	stop    chan struct{}
	err     error
}

// ErrServe wraps a failure to listen or serve.
var ErrServe = errors.New("demo: serving")

// Start seeds a Backend and serves it on 127.0.0.1 at a free port until ctx
// is cancelled or Close is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServe, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%w: listening on loopback: %w", ErrServe, err)
	}
	b := NewBackend(opts)
	s := &Server{
		backend: b,
		url:     "http://" + ln.Addr().String(),
		done:    make(chan struct{}),
		stop:    make(chan struct{}),
		srv: &http.Server{
			Handler:           b,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
		},
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("%w: %w", ErrServe, err)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.stop:
		}
	}()
	return s, nil
}

// URL is the server's origin, e.g. "http://127.0.0.1:41234" (no trailing slash).
func (s *Server) URL() string { return s.url }

// Backend is the handler the server runs, for its token and secrets.
func (s *Server) Backend() *Backend { return s.backend }

// Close stops the server and waits for its serve loop to end. It is safe to
// call more than once; later calls return the same result.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.stop)
		closeErr := s.srv.Close()
		<-s.done // after this, the serve goroutine no longer touches s.err
		if closeErr != nil && s.err == nil {
			s.err = fmt.Errorf("%w: closing: %w", ErrServe, closeErr)
		}
	})
	return s.err
}
