package server_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server"
)

// TestMCPResourceReadsArePrivate: a resource is one tenant's run or
// teaching table, so no intermediary may cache it for others. The SDK's
// default cacheScope is "public".
func TestMCPResourceReadsArePrivate(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	contextCall(t, cs, "read issues", "tracker:Issue")
	run := mustOK(t, runCall(t, cs, "s0", `Issue("iss-1")[id]`))
	for _, uri := range []string{run.meta["run_uri"].(string), run.meta["canonical_uri"].(string), "plasm://session/s0/teaching"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if res.CacheScope != "private" {
			t.Errorf("read %s: cacheScope %q, want private", uri, res.CacheScope)
		}
	}
}
