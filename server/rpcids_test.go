package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// batchIDCases are JSON-RPC batches and the ids plasmd must answer, or
// the id it refuses the batch for.
var batchIDCases = []struct {
	name    string
	batch   string
	answers []string // the ids answered (with errors when refused), as JSON, sorted
	refused string   // the duplicate id, as JSON, when the batch is refused
	// mixed: the batch holds a notification, which the stdio guard
	// refuses (the SDK never answered the batch's requests there).
	mixed bool
}{
	{"same number", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`, []string{"7"}, "7", false},
	{"7 and 7.0", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7.0,"method":"ping"}]`, []string{"7"}, "7", false},
	{"same string", `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"}]`, []string{`"a"`}, `"a"`, false},
	// The batch's other requests are answered too, or a client waiting
	// for them would wait until its own timeout.
	{"duplicate beside others", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":"x","method":"ping"}]`, []string{`"x"`, "7", "8"}, "7", false},
	{"number and string", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":"7","method":"tools/list"}]`, []string{`"7"`, "7"}, "", false},
	{"distinct", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, []string{"1", "2"}, "", false},
	{"with a notification", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, []string{"1", "2"}, "", true},
}

// rpcAnswers returns the JSON-RPC messages in an HTTP answer (JSON or
// server-sent events) or a stdio line.
func rpcAnswers(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	add := func(data string) {
		data = strings.TrimSpace(data)
		if data == "" {
			return
		}
		if data[0] == '[' {
			var ms []map[string]any
			if err := json.Unmarshal([]byte(data), &ms); err != nil {
				t.Fatalf("answer %q: %v", data, err)
			}
			out = append(out, ms...)
			return
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("answer %q: %v", data, err)
		}
		out = append(out, m)
	}
	if !strings.Contains(body, "data: ") {
		add(body)
		return out
	}
	for _, l := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			add(d)
		}
	}
	return out
}

// checkBatchAnswers requires every request of the batch answered: with
// results, or, when the batch is refused, each with an invalid-request
// error naming the duplicate id.
func checkBatchAnswers(t *testing.T, answers []map[string]any, answered []string, refused string) {
	t.Helper()
	var ids []string
	for _, a := range answers {
		e, _ := a["error"].(map[string]any)
		msg, _ := e["message"].(string)
		switch {
		case refused == "" && e != nil:
			t.Fatalf("an error: %v", a)
		case refused != "" && (e == nil || e["code"] != float64(-32600) || !strings.Contains(msg, "request id "+refused+" appears more than once")):
			t.Fatalf("want an invalid request naming id %s, got %v", refused, a)
		}
		b, _ := json.Marshal(a["id"])
		ids = append(ids, string(b))
	}
	sort.Strings(ids)
	if strings.Join(ids, " ") != strings.Join(answered, " ") {
		t.Fatalf("answered ids %v, want %v", ids, answered)
	}
}

// TestBatchDuplicateIDs: a batch in which two requests share an id (as
// the go-sdk compares ids: 7 and 7.0 are one) is refused with an error
// naming the id for each of its requests, and nothing in it runs; a batch
// of distinct ids gets every request answered. The SDK answered one of the two requests over
// Streamable HTTP and ended the stdio session.
func TestBatchDuplicateIDs(t *testing.T) {
	f, _ := newMCPGuardFixture(t, 64)
	t.Run("http", func(t *testing.T) {
		session := f.mcpOpen(t, tokenA) // protocol 2025-03-26: batches allowed
		for _, tc := range batchIDCases {
			t.Run(tc.name, func(t *testing.T) {
				r := f.mcpPost(t, tokenA, session, tc.batch)
				want := http.StatusOK
				if tc.refused != "" {
					want = http.StatusBadRequest
				}
				if r.status != want {
					t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
				}
				checkBatchAnswers(t, rpcAnswers(t, r.body), tc.answers, tc.refused)
			})
		}
	})
	t.Run("stdio", func(t *testing.T) {
		w := newStdioWire(t, f)
		w.open("2025-03-26")
		for i, tc := range batchIDCases {
			t.Run(tc.name, func(t *testing.T) {
				w.send(tc.batch)
				answers := rpcAnswers(t, w.nextLine(t))
				if tc.mixed {
					// Refused, with an error for each of its requests.
					var ids []string
					for _, a := range answers {
						if !strings.Contains(fmt.Sprint(a["error"]), "may hold only requests") {
							t.Fatalf("a mixed batch on stdio: %v", answers)
						}
						b, _ := json.Marshal(a["id"])
						ids = append(ids, string(b))
					}
					if sort.Strings(ids); strings.Join(ids, " ") != strings.Join(tc.answers, " ") {
						t.Fatalf("a mixed batch on stdio answered %v, want %v", ids, tc.answers)
					}
				} else {
					checkBatchAnswers(t, answers, tc.answers, tc.refused)
				}
				// The session goes on.
				w.send(`{"jsonrpc":"2.0","id":"after-` + string(rune('a'+i)) + `","method":"ping"}`)
				if m := w.next(t); m["id"] != "after-"+string(rune('a'+i)) || m["result"] == nil {
					t.Fatalf("ping after the batch: %v", m)
				}
			})
		}
	})
}
