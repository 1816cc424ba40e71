package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/server"
)

// writeCatalog loads a catalog written for the test (its domain.yaml and
// mappings.yaml) as a user's would be, returning its warnings too.
func writeCatalog(t *testing.T, entry string, files map[string]string) (catalogdir.Loaded, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), entry)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return catalogdir.LoadPathReport(dir)
}

// serveCatalogs is catalogFixture's server with cfg (CacheDir is set
// here); server.New's error is returned, not fatal.
func serveCatalogs(t *testing.T, cfg server.Config, cats ...*catalog.Catalog) (*fixture, error) {
	t.Helper()
	cfg.CacheDir = testCacheDir()
	app, err := server.New(context.Background(), cfg, cats)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() { srv.Close(); app.Close(context.Background()) })
	return &fixture{app: app, srv: srv}, nil
}

// TestIPLiteralOrigins: a catalog whose mapping path declares an IP
// literal (absDomain's search origin) gets a DNS answer's checks for it,
// not http_backend's trust. Hostile literals are refused when the catalog
// loads or the server starts, with a typed error naming the mapping; a
// loopback literal is served only inside --egress-allow-private, while
// the loopback http_backend needs nothing. Only loopback fakes are
// dialled; a name the fake resolver points at metadata is refused at run
// time.
func TestIPLiteralOrigins(t *testing.T) {
	search := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"hits":[{"id":1,"title":"about %s"}]}`, r.URL.Query().Get("query"))
	})
	api := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"url":"%s/chain/3/","id":3}`, "http://"+r.Host)
	})
	load := func(t *testing.T, searchOrigin string) (catalogdir.Loaded, error) {
		return writeCatalog(t, "literals", map[string]string{
			"domain.yaml":   fmt.Sprintf(absDomain, api.URL, searchOrigin),
			"mappings.yaml": fmt.Sprintf(absMappings, api.URL, searchOrigin),
		})
	}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

	t.Run("refused at start", func(t *testing.T) {
		for _, tc := range []struct {
			name, origin string
			allow        []netip.Prefix
		}{
			{"metadata", "http://169.254.169.254/latest/meta-data", nil},
			{"metadata, v4-mapped", "http://[::ffff:169.254.169.254]", nil},
			{"metadata, NAT64", "http://[64:ff9b::a9fe:a9fe]", nil},
			{"metadata, IPv6", "http://[fd00:ec2::254]", []netip.Prefix{netip.MustParsePrefix("fd00::/8")}},
			{"metadata under a wide allowed range", "http://169.254.169.254", []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}},
			{"private literal", "http://10.0.0.5:8080", nil},
			{"loopback fake off home", search.URL, nil},
			{"loopback fake off home, other range allowed", search.URL, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				l, err := load(t, tc.origin)
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				if !hasWarning(l.Warnings, "mappings.yaml:", "hit_search") {
					t.Errorf("no warning at the literal: %v", l.Warnings)
				}
				_, err = serveCatalogs(t, server.Config{EgressAllowPrivate: tc.allow}, l.Catalog)
				if !errors.Is(err, egress.ErrUndialable) || !strings.Contains(err.Error(), `catalog "literals": mapping hit_search's path`) {
					t.Fatalf("server.New: %v, want ErrUndialable naming the mapping", err)
				}
			})
		}
	})
	t.Run("refused at load", func(t *testing.T) {
		for _, origin := range []string{"http://0.0.0.0:8080", "http://[fe80::1%25eth0]", "http://2130706433", "http://0177.0.0.1", "http://0x7f.1", "http://127.1", "http://224.0.0.1"} {
			if _, err := load(t, origin); err == nil || !strings.Contains(err.Error(), "mappings.yaml:") {
				t.Errorf("%s: load error %v, want one at the literal's line", origin, err)
			}
		}
	})
	t.Run("loopback literal inside an allowed range", func(t *testing.T) {
		l, err := load(t, search.URL)
		if err != nil {
			t.Fatal(err)
		}
		f, err := serveCatalogs(t, server.Config{EgressAllowPrivate: loopback}, l.Catalog)
		if err != nil {
			t.Fatal(err)
		}
		path := f.open(t, "literals", "Chain", "Hit")
		res := f.runJSON(t, path, `Hit~"go"[id,title]`)
		if got := rows(t, res[0]); len(got) != 1 || got[0]["title"] != "about go" {
			t.Fatalf("rows %v", got)
		}
		// The loopback http_backend needs no allowed range of its own:
		// only 127.0.0.1/32 is allowed, and it would be served anyway.
		if got := rows(t, f.runJSON(t, path, fmt.Sprintf(`Chain(%q)[url,id]`, api.URL+"/chain/3/"))[0]); len(got) != 1 {
			t.Fatalf("home rows %v", got)
		}
	})
	t.Run("loopback http_backend needs no range", func(t *testing.T) {
		l, err := load(t, "https://search.example.test")
		if err != nil {
			t.Fatal(err)
		}
		if hasWarning(l.Warnings, "IP literal") || hasWarning(l.Warnings, "IP-literal") || hasWarning(l.Warnings, "metadata") {
			t.Errorf("egress warnings for a loopback http_backend and a named origin: %v", l.Warnings)
		}
		f, err := serveCatalogs(t, server.Config{}, l.Catalog)
		if err != nil {
			t.Fatal(err)
		}
		path := f.open(t, "literals", "Chain")
		if got := rows(t, f.runJSON(t, path, fmt.Sprintf(`Chain(%q)[url,id]`, api.URL+"/chain/3/"))[0]); len(got) != 1 {
			t.Fatalf("rows %v", got)
		}
	})
	t.Run("a name resolving to metadata", func(t *testing.T) {
		l, err := load(t, "http://meta.example.test")
		if err != nil {
			t.Fatal(err)
		}
		resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
			if host != "meta.example.test" {
				return nil, fmt.Errorf("unexpected lookup of %q", host)
			}
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		}
		// A wide range does not open metadata: nothing is dialled.
		f, err := serveCatalogs(t, server.Config{EgressResolver: resolver, EgressAllowPrivate: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}, l.Catalog)
		if err != nil {
			t.Fatal(err)
		}
		r := f.do(t, "POST", f.open(t, "literals", "Hit"), "text/plain", `Hit~"x"`, "Accept", "application/json")
		if r.status == http.StatusOK || !strings.Contains(r.body, "metadata") {
			t.Fatalf("a name resolving to metadata was served: %d %s", r.status, r.body)
		}
	})
}

func hasWarning(warns catalogdir.ErrorList, parts ...string) bool {
	for _, w := range warns {
		msg := w.Error()
		found := true
		for _, p := range parts {
			found = found && strings.Contains(msg, p)
		}
		if found {
			return true
		}
	}
	return false
}
