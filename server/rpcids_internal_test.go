package server

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestStdioGuardPendingIDs: on stdio the guard refuses a request whose id
// is still pending (the SDK answered it with a null id, or dropped it,
// or ended the connection for a batch), and releases an id once the SDK
// writes its answer, whatever shape the answer has.
func TestStdioGuardPendingIDs(t *testing.T) {
	pending := &pendingCalls{}
	g := frameGuard{pending: pending}
	sdk := &lockedWriter{w: io.Discard, pending: pending}
	big := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + strings.Repeat("x", 1<<20) + `"}}`
	steps := []struct {
		in, answer string // one of them
		refused    string // for in: the refusal's words, "" when it passes
		// ids: for a refused batch, the ids answered (JSON), never one
		// still in flight; "" for a single message, answered with null.
		ids string
	}{
		{in: `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
		{in: `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, refused: "request id 7 is still in flight"},
		{in: `{"jsonrpc":"2.0","id":7.0,"method":"ping"}`, refused: "request id 7 is still in flight"},
		{in: `{"jsonrpc":"2.0","id":"7","method":"ping"}`},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`},
		{answer: big},
		{in: `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
		{in: `[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`, refused: "request id 8 appears more than once in this batch", ids: "[8]"},
		{in: `[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":"7","method":"ping"}]`, refused: `request id "7" is still in flight`, ids: "[8]"},
		{in: `{"jsonrpc":"2.0","id":8,"method":"ping"}`}, // the refused batch admitted nothing
		{in: `[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":10,"method":"ping"}]`, refused: "may hold only requests", ids: "[9,10]"},
		// A member the SDK cannot decode still names its id; one in flight
		// is not answered (found by review: "7" was answered).
		{in: `[{"jsonrpc":"2.0","id":11,"method":"ping"},{"jsonrpc":"1.0","id":"7","method":"ping"},{"jsonrpc":"1.0","id":12,"method":"ping"}]`, refused: "invalid request in a batch", ids: "[11,12]"},
		{in: `[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","id":10,"method":"ping"}]`},
		{answer: `[{"jsonrpc":"2.0","id":9,"result":{}},{"jsonrpc":"2.0","id":10,"error":{"code":-1,"message":"x"}}]`},
		{in: `{"jsonrpc":"2.0","id":10,"method":"ping"}`},
		{answer: `{"result":{},"id":"7","jsonrpc":"2.0"}`},
		{in: `{"jsonrpc":"2.0","id":"7","method":"ping"}`},
		// A request the server sends does not answer the client's 8.
		{answer: `{"jsonrpc":"2.0","id":8,"method":"roots/list"}`},
		{answer: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":8}}`},
		{in: `{"jsonrpc":"2.0","id":8,"method":"ping"}`, refused: "request id 8 is still in flight"},
	}
	for i, s := range steps {
		if s.answer != "" {
			if _, err := sdk.Write([]byte(s.answer + "\n")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		r := g.check([]byte(s.in))
		if s.refused == "" && r.code != 0 {
			t.Errorf("step %d %.60s: refused %+v", i, s.in, r)
		}
		if s.refused != "" && (r.code != -32600 || r.id != nil || !strings.Contains(r.why, s.refused)) {
			t.Errorf("step %d %.60s: got %+v, want an invalid request with a null id saying %q", i, s.in, r, s.refused)
		}
		if ids, _ := json.Marshal(r.batchIDs); s.ids != "" && string(ids) != s.ids {
			t.Errorf("step %d %.60s: the refused batch answers ids %s, want %s", i, s.in, ids, s.ids)
		}
	}
}
