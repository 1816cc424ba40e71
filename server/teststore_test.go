package server_test

import (
	"os"
	"testing"

	"github.com/plasmd/plasmd/internal/redistest"
	"github.com/plasmd/plasmd/server"
)

// useTestStore runs a fixture on Redis when PLASMD_TEST_STORE=redis, so
// the whole server suite can be run against the shared store
// (PLASMD_TEST_STORE=redis go test ./server/). Fixtures that need the
// in-memory store's fake clock (idle-TTL tests) or bring their own store
// keep theirs.
func useTestStore(t testing.TB, cfg *server.Config) {
	if os.Getenv("PLASMD_TEST_STORE") != "redis" || cfg.SessionStore != nil || cfg.Clock != nil || cfg.StoreURL != "" {
		return
	}
	cfg.StoreURL = redistest.Start(t).URL()
}
