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
	answers []string // the ids answered, as JSON, sorted
	refused string   // the duplicate id, as JSON, when the batch is refused
	// mixed: the batch holds a notification, which the stdio guard
	// refuses (the SDK never answered the batch's requests there).
	mixed bool
}{
	{"same number", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`, nil, "7", false},
	{"7 and 7.0", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7.0,"method":"ping"}]`, nil, "7", false},
	{"same string", `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"}]`, nil, `"a"`, false},
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

// checkBatchAnswers requires every request of the batch answered, or one
// invalid-request error naming the duplicate id (with that id when
// withID, else null).
func checkBatchAnswers(t *testing.T, answers []map[string]any, answered []string, refused string, withID bool) {
	t.Helper()
	if refused != "" {
		if len(answers) != 1 {
			t.Fatalf("want one refusal, got %v", answers)
		}
		e, _ := answers[0]["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if e == nil || e["code"] != float64(-32600) || !strings.Contains(msg, "request id "+refused+" appears more than once") {
			t.Fatalf("want an invalid request naming id %s, got %v", refused, answers[0])
		}
		want := "null"
		if withID {
			want = refused
		}
		if got, _ := json.Marshal(answers[0]["id"]); string(got) != want {
			t.Fatalf("refusal id %s, want %s", got, want)
		}
		return
	}
	var ids []string
	for _, a := range answers {
		if a["error"] != nil {
			t.Fatalf("an error: %v", a)
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
// naming the id, and nothing in it runs; a batch of distinct ids gets
// every request answered. The SDK answered one of the two requests over
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
				checkBatchAnswers(t, rpcAnswers(t, r.body), tc.answers, tc.refused, true)
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
					if len(answers) != 1 || !strings.Contains(fmt.Sprint(answers[0]["error"]), "may hold only requests") {
						t.Fatalf("a mixed batch on stdio: %v", answers)
					}
				} else {
					checkBatchAnswers(t, answers, tc.answers, tc.refused, false)
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
