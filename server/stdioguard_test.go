package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server"
)

// TestStdioSurvivesBadLines: the SDK's stdio transport ended the session
// (and plasmd stdio exited) at the first line that was not a JSON-RPC
// message. Each such line is now answered with a JSON-RPC error and the
// session goes on.
func TestStdioSurvivesBadLines(t *testing.T) {
	f := newFixture(t, server.Config{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.app.ServeStdio(ctx, server.GuardedStdio(inR, outW)) }()
	answers := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			// A refused batch is answered with an array: one error per
			// request in it.
			var batch []map[string]any
			if json.Unmarshal(sc.Bytes(), &batch) == nil {
				for _, m := range batch {
					answers <- m
				}
				continue
			}
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			answers <- m
		}
		close(answers)
	}()
	// Written from a goroutine: a session that ended stops reading.
	send := func(lines ...string) {
		go func() {
			for _, l := range lines {
				if _, err := io.WriteString(inW, l+"\n"); err != nil {
					return
				}
			}
		}()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`garbage`,
		`{"x":1}`,
		`5`,
		`[]`,
		`{"jsonrpc":"1.0","id":9,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":10,"method":"ping"} {"jsonrpc":"2.0","id":11,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":12,"method":"ping"}]`,
		"",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\r")
	wantErrors := map[float64]int{-32700: 2, -32600: 5} // garbage and two values; {"x":1}, 5, [], 1.0, the batch
	gotErrors := map[float64]int{}
	var sawInit, sawPing, sawID9, sawID12 bool
	deadline := time.After(2 * time.Minute) // a hang, not a speed limit
	for !(sawInit && sawPing) {
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatal("stdout closed")
			}
			if e, ok := m["error"].(map[string]any); ok {
				gotErrors[e["code"].(float64)]++
				sawID9 = sawID9 || m["id"] == 9.0
				sawID12 = sawID12 || m["id"] == 12.0
				continue
			}
			sawInit = sawInit || m["id"] == 1.0
			sawPing = sawPing || m["id"] == 4.0
		case err := <-done:
			t.Fatalf("the session ended (%v); errors answered: %v", err, gotErrors)
		case <-deadline:
			t.Fatalf("no answer to initialize and ping; errors so far %v", gotErrors)
		}
	}
	for code, n := range wantErrors {
		if gotErrors[code] != n {
			t.Errorf("%d answers with code %v, want %d (all: %v)", gotErrors[code], code, n, gotErrors)
		}
	}
	if !sawID9 || !sawID12 {
		t.Errorf("the errors for messages with an id do not carry it (id 9: %v, id 12 in a batch: %v)", sawID9, sawID12)
	}
	_ = inW.Close()
	if err := <-done; err != nil && !strings.Contains(err.Error(), "closed") {
		t.Fatalf("ServeStdio: %v", err)
	}
}
