package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes collects what the server pushes to a go-sdk client.
type notes struct {
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
	changed  chan struct{}
}

func (n *notes) add(f func()) {
	n.mu.Lock()
	f()
	n.mu.Unlock()
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// until waits for cond, re-checking whenever a notification arrives; the
// deadline is one the test cannot reach unless nothing is ever sent.
func (n *notes) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		n.mu.Lock()
		ok := cond()
		n.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-n.changed:
		case <-deadline:
			t.Fatalf("never received %s", what)
		}
	}
}

func TestMCPProgressAndLogging(t *testing.T) {
	f, gp := newGatedFixture(t)
	close(gp.opened)
	n := &notes{changed: make(chan struct{}, 1)}
	c := mcp.NewClient(&mcp.Implementation{Name: "notes", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.add(func() { n.progress = append(n.progress, r.Params) })
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.add(func() { n.logs = append(n.logs, r.Params) })
		},
	})
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	contextCall(t, cs, "watch issues", "tracker:Issue")

	run := func(program string, token any) {
		t.Helper()
		p := &mcp.CallToolParams{Name: "plasm_run", Arguments: runArgs(program, "force", true)}
		if token != nil {
			p.SetProgressToken(token)
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", program, err, res)
		}
	}
	// The server may start a session at a default level (invalidation
	// events); choose one below info first. Progress needs only a token.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	run(`a = Issue("iss-1")[id]`+"\n"+`b = Issue("iss-2")[id]`+"\na, b", "tok-1")
	n.until(t, "progress for tok-1", func() bool {
		for _, p := range n.progress {
			if p.ProgressToken == "tok-1" && strings.HasPrefix(p.Message, "done: 2 backend calls, 2 rows") {
				return true
			}
		}
		return false
	})
	n.mu.Lock()
	var calls int
	for _, p := range n.progress {
		if p.ProgressToken == "tok-1" && strings.HasSuffix(p.Message, "backend calls so far") {
			calls++
		}
	}
	n.mu.Unlock()
	if calls != 2 {
		t.Errorf("%d per-call progress notifications, want 2", calls)
	}

	// A level below info silences the run lines; info lets them through.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	run(`Issue("iss-3")[id]`, nil)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	run(`Issue("iss-4")[id,title]`, nil)
	n.until(t, "an info log line for the run", func() bool {
		for _, l := range n.logs {
			if l.Level == "info" && l.Logger == "plasm" && strings.Contains(string(mustJSON(t, l.Data)), "plasm_run done") {
				return true
			}
		}
		return false
	})
	n.mu.Lock()
	defer n.mu.Unlock()
	runLines := 0
	for _, l := range n.logs {
		if l.Logger != "plasm" {
			continue // invalidation events (logger plasmd) share the channel
		}
		runLines++
		if l.Level == "debug" {
			t.Errorf("debug line sent at level info: %s", mustJSON(t, l.Data))
		}
	}
	if runLines != 1 {
		t.Errorf("%d run log lines, want only the one run at level info", runLines)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMCPResumableStream: a client whose response stream drops while a run
// is held at the backend reconnects with Last-Event-ID and receives the
// progress and the result it missed.
func TestMCPResumableStream(t *testing.T) {
	f, gp := newGatedFixture(t)
	u := f.srv.URL + "/mcp"
	post := func(sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	// A client sends notifications/initialized only once initialize is
	// answered: the server takes messages as they come, and one that
	// overtakes initialize fails the session ("initialized before
	// initialize", then every call "invalid during initialization").
	readEvents(t, init.Body, func(e sseEvent) bool { return strings.Contains(e.data, `"id":1`) })
	init.Body.Close()
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	ctxResp := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plasm_context","arguments":{"intent":"resume","seeds":[{"api":"tracker","entity":"Issue"}]}}}`)
	readEvents(t, ctxResp.Body, func(e sseEvent) bool { return strings.Contains(e.data, `"id":2`) })
	ctxResp.Body.Close()

	resp := post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"plasm_run","arguments":{"logical_session_ref":"s0","program":"Issue(\"iss-1\")[id]"}}}`)
	var last string
	readEvents(t, resp.Body, func(e sseEvent) bool { last = e.id; return e.id != "" })
	if last == "" {
		t.Fatal("no event id on the tool call's stream")
	}
	gp.await(t)
	resp.Body.Close() // the client loses its stream while the run is held
	close(gp.opened)

	// The server lets go of the lost stream once it notices the closed
	// connection; until then it refuses a resume with 409 (the stream
	// still has a reader), and the client tries again. The deadline is one
	// the test cannot reach unless the stream is never let go.
	var again *http.Response
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", last)
		var err error
		if again, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		if again.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			break
		}
		again.Body.Close()
	}
	defer again.Body.Close()
	if again.StatusCode != http.StatusOK {
		t.Fatalf("resume: status %d", again.StatusCode)
	}
	var sawProgress bool
	readEvents(t, again.Body, func(e sseEvent) bool {
		if strings.Contains(e.data, `"notifications/progress"`) && strings.Contains(e.data, `"p1"`) {
			sawProgress = true
		}
		return strings.Contains(e.data, `"id":3`) && strings.Contains(e.data, "iss-1")
	})
	if !sawProgress {
		t.Error("the progress sent while the stream was down was not replayed")
	}
}

type sseEvent struct{ id, data string }

// readEvents reads SSE events until stop returns true; the body's end
// before that fails the test.
func readEvents(t *testing.T, body interface{ Read([]byte) (int, error) }, stop func(sseEvent) bool) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var e sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id:"):
			e.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			e.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		case line == "":
			if e.id != "" || e.data != "" {
				if stop(e) {
					return
				}
			}
			e = sseEvent{}
		}
	}
	t.Fatalf("stream ended before the expected event (%v)", sc.Err())
}
