package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server"
)

// stdioWire is a guarded stdio session driven line by line: send writes
// lines, next returns the following line plasmd wrote.
type stdioWire struct {
	t       *testing.T
	in      *io.PipeWriter
	answers chan string
}

// newStdioWire serves f's app over a guarded stdio pair for the test.
func newStdioWire(t *testing.T, f *fixture) *stdioWire {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.app.ServeStdio(ctx, server.GuardedStdio(inR, outW))
		_ = outW.Close()
	}()
	w := &stdioWire{t: t, in: inW, answers: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.answers <- sc.Text()
		}
		close(w.answers)
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		cancel()
		<-done
	})
	return w
}

// send writes lines from a goroutine (a session that ended stops reading).
func (w *stdioWire) send(lines ...string) {
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(w.in, l+"\n"); err != nil {
				return
			}
		}
	}()
}

// nextLine returns plasmd's next line.
func (w *stdioWire) nextLine(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-w.answers:
		if !ok {
			t.Fatal("stdout closed")
		}
		return line
	case <-time.After(2 * time.Minute): // a hang, not a speed limit
		t.Fatal("no answer")
	}
	return ""
}

// next returns plasmd's next line, decoded.
func (w *stdioWire) next(t *testing.T) map[string]any {
	t.Helper()
	line := w.nextLine(t)
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %q", line)
	}
	return m
}

// open initializes the session with protocol version and returns the
// answer to initialize.
func (w *stdioWire) open(version string) map[string]any {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m := w.next(w.t)
	if m["id"] != "init" || m["result"] == nil {
		w.t.Fatalf("initialize: %v", m)
	}
	return m
}
