package server_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server"
)

// catalogFixture serves one catalog written for the test: files (its
// domain.yaml and mappings.yaml) go into a directory named entry, which
// is loaded as a user's would be; backend, when set, replaces its
// http_backend. The server closes when the test ends.
func catalogFixture(t *testing.T, entry string, files map[string]string, backend string, configure ...func(*server.Config)) *fixture {
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
	cat, err := catalogdir.LoadPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if backend != "" {
		cat.HTTPBackend = backend
	}
	cfg := server.Config{CacheDir: testCacheDir()}
	for _, c := range configure {
		c(&cfg)
	}
	app, err := server.New(context.Background(), cfg, []*catalog.Catalog{cat})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() { srv.Close(); app.Close(context.Background()) })
	return &fixture{app: app, srv: srv}
}
