package server_test

import (
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
)

// waitFailed calls wait(handle) until the operation reports a final state
// and returns that answer, error or not (waitFinal requires success). Like
// waitFinal it has no wall-clock bound: each wait holds a while, and an
// operation that never ends is the test binary's timeout to report.
func waitFailed(t *testing.T, cs *mcp.ClientSession, handle string) toolOut {
	t.Helper()
	for {
		o := call(t, cs, "plasm_run", runArgs("wait("+handle+")"))
		op, _ := o.meta["operation"].(map[string]any)
		if s, _ := op["state"].(string); s == "done" || s == "cancelled" || s == "failed" {
			return o
		}
	}
}

// TestOperationFailedIsError: the wait(…) answer of a failed operation is
// an MCP error result (it was isError:false, only its text said failed),
// and its calls are the backend calls made: a run stopped by a secret that
// is not configured made none, and says so rather than "after 1 calls".
func TestOperationFailedIsError(t *testing.T) {
	t.Setenv(demo.TrackerTokenEnv, "")
	os.Unsetenv(demo.TrackerTokenEnv) // the anonymous tenant reads the environment
	f := newFixtureFor(t, func(b *demo.Server) server.Config {
		secrets := maps.Clone(b.Backend().Secrets())
		delete(secrets, demo.TrackerTokenEnv)
		return server.Config{OperationWait: 20 * time.Millisecond, AnonymousSecrets: server.BindSecrets(secrets, demo.SecretCatalogs())}
	})
	cs := f.mcpClient(t)
	contextCall(t, cs, "watch issues", "tracker:Issue")
	mustOK(t, call(t, cs, "plasm_run", runArgs(`Issue("iss-1")[id]`, "wait", false)))
	o := waitFailed(t, cs, "s0_o1")
	op, _ := o.meta["operation"].(map[string]any)
	if !o.isError || op["state"] != "failed" {
		t.Fatalf("failed operation: isError=%v %v\n%s", o.isError, op, o.text)
	}
	if !strings.Contains(o.text, "? failed before any backend call:") || op["calls"] != 0.0 {
		t.Errorf("a run refused before sending counts calls: %v\n%s", op["calls"], o.text)
	}
}

// TestOperationFailedAfterCalls: a run that reached the backend and failed
// there counts the call it made.
func TestOperationFailedAfterCalls(t *testing.T) {
	f, gp := newGatedFixture(t)
	close(gp.opened)
	cs := f.mcpClient(t)
	contextCall(t, cs, "watch issues", "tracker:Issue")
	mustOK(t, call(t, cs, "plasm_run", runArgs(`Issue("no-such-issue")[id]`, "wait", false)))
	o := waitFailed(t, cs, "s0_o1")
	if !o.isError || !strings.Contains(o.text, "? failed after 1 calls:") || !strings.Contains(o.text, "not found") {
		t.Fatalf("failed operation: isError=%v\n%s", o.isError, o.text)
	}
}
