package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// setLevelCases are logging/setLevel params and whether MCP allows them.
var setLevelCases = []struct {
	name   string
	params string
	ok     bool
}{
	{"debug", `{"level":"debug"}`, true},
	{"warning", `{"level":"warning"}`, true},
	{"emergency", `{"level":"emergency"}`, true},
	{"unknown word", `{"level":"loud"}`, false},
	{"wrong case", `{"level":"INFO"}`, false},
	{"slog name", `{"level":"warn"}`, false},
	{"empty", `{"level":""}`, false},
	{"missing", `{}`, false},
	// The SDK refuses a non-string level itself, before any middleware,
	// with an invalid-params error of its own wording.
	{"number", `{"level":5}`, false},
}

// checkSetLevelAnswer requires a refusal to be an invalid-params error
// that names the allowed levels, and an allowed level an empty result.
func checkSetLevelAnswer(t *testing.T, ok bool, answer string) {
	t.Helper()
	if ok {
		if !strings.Contains(answer, `"result":{}`) {
			t.Fatalf("an allowed level was not taken: %s", answer)
		}
		return
	}
	if !strings.Contains(answer, `"code":-32602`) {
		t.Fatalf("want an invalid-params error, got %s", answer)
	}
	if !strings.Contains(answer, "cannot unmarshal") && !strings.Contains(answer, "one of debug, info, notice, warning, error, critical, alert, emergency") {
		t.Fatalf("want an invalid-params error naming the levels, got %s", answer)
	}
}

// TestSetLevelRefusesUnknownLevels: logging/setLevel with a level MCP
// does not define is an invalid-params error naming the allowed levels,
// over Streamable HTTP and stdio alike (the SDK stored any string and
// compared unknown ones as debug).
func TestSetLevelRefusesUnknownLevels(t *testing.T) {
	f, _ := newMCPGuardFixture(t, 64)
	t.Run("http", func(t *testing.T) {
		id := f.mcpOpen(t, tokenA)
		for i, tc := range setLevelCases {
			t.Run(tc.name, func(t *testing.T) {
				r := f.mcpPost(t, tokenA, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":%s}`, 100+i, tc.params))
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				checkSetLevelAnswer(t, tc.ok, r.body)
			})
		}
	})
	t.Run("stdio", func(t *testing.T) {
		w := newStdioWire(t, f)
		w.open("2025-06-18")
		for i, tc := range setLevelCases {
			t.Run(tc.name, func(t *testing.T) {
				w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":%s}`, 100+i, tc.params))
				m := w.next(t)
				if m["id"] != float64(100+i) {
					t.Fatalf("answer for another id: %v", m)
				}
				b, _ := json.Marshal(m)
				checkSetLevelAnswer(t, tc.ok, string(b))
			})
		}
	})
}
