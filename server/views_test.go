package server_test

import (
	"testing"

	"github.com/plasmd/plasmd/demo"
	shared "github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// newMatrixFixture serves the demo catalogs plus the views catalog, whose
// requests go to the demo tracker with the tracker's token.
func newMatrixFixture(t *testing.T) *fixture {
	t.Helper()
	views, err := catalogdir.LoadPath(shared.Path(t, "catalogs", "views")) // plasmd's views over the demo tracker
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureFor(t, func(b *demo.Server) server.Config {
		views.HTTPBackend = demo.Rebase(views.HTTPBackend, b.URL())
		scopes := demo.SecretCatalogs()
		scopes[demo.TrackerTokenEnv] = append(scopes[demo.TrackerTokenEnv], views.EntryID)
		return server.Config{AnonymousSecrets: tenant.Bind(b.Backend().Secrets(), scopes)}
	}, views)
}
