package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// newNamedBackendFixture serves the demo plus "named", the tracker under a
// host name that the (fake) resolver answers with 127.0.0.1, as a hostile
// DNS record for a hosted plasmd's own loopback would.
func newNamedBackendFixture(t *testing.T, allow []netip.Prefix) *fixture {
	t.Helper()
	backend, err := demo.Start(context.Background(), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cats, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	more, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range more {
		if c.EntryID == "tracker" {
			u, err := url.Parse(c.HTTPBackend)
			if err != nil {
				t.Fatal(err)
			}
			u.Host = "tracker.internal.test:" + u.Port()
			c.EntryID, c.HTTPBackend = "named", u.String()
			cats = append(cats, c)
		}
	}
	bindings := demo.SecretCatalogs()
	bindings[demo.TrackerTokenEnv] = append(bindings[demo.TrackerTokenEnv], "named")
	app, err := server.New(context.Background(), server.Config{
		CacheDir:           testCacheDir(),
		AnonymousSecrets:   tenant.Bind(backend.Backend().Secrets(), bindings),
		EgressAllowPrivate: allow,
		EgressResolver: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host != "tracker.internal.test" {
				t.Errorf("unexpected lookup of %q", host)
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	}, cats)
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

// TestEgressRefusesPrivateResolution: a catalog whose host name resolves
// to loopback is refused before anything is sent, while the demo (which
// declares its IP-literal loopback origin) keeps working; the operator's
// --egress-allow-private range lets the name through.
func TestEgressRefusesPrivateResolution(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		f := newNamedBackendFixture(t, nil)
		r := f.do(t, "POST", f.open(t, "named", "Issue"), "text/plain", `Issue`, "Accept", "application/json")
		if r.status == http.StatusOK || !strings.Contains(r.body, "--egress-allow-private") {
			t.Fatalf("a name resolving to loopback was served: %d %s", r.status, r.body)
		}
		if got := rows(t, f.runJSON(t, f.open(t, "tracker", "Issue"), `Issue`)[0]); len(got) == 0 {
			t.Fatal("the demo's IP-literal origin no longer works")
		}
		if m := f.do(t, "GET", "/metrics", "", "").body; !strings.Contains(m, `plasmd_egress_denied_total{reason="private_address"}`) {
			t.Error("/metrics does not count the private_address denial")
		}
	})
	t.Run("allowed range", func(t *testing.T) {
		f := newNamedBackendFixture(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
		if got := rows(t, f.runJSON(t, f.open(t, "named", "Issue"), `Issue`)[0]); len(got) == 0 {
			t.Fatal("no rows through an allowed range")
		}
	})
}
