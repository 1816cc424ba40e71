package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The core is transport-independent: neither it nor anything it imports may
// pull in the HTTP framework or the MCP SDK. A transport that needs the
// core adapts it; the core never adapts to a transport.
func TestCoreImportsNoTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/labstack/echo", "github.com/modelcontextprotocol/go-sdk", "net/http/httptest"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("server/internal/core depends on %s", dep)
			}
		}
	}
}
