package server

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// messageOf is a JSON-RPC notification of exactly n bytes.
func messageOf(n int) string {
	head, tail := `{"jsonrpc":"2.0","method":"x","params":{"p":"`, `"}}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

// sdkReads reports whether the SDK's stdio transport reads msg after a
// first message, each written as the guard writes them (one write per
// line, its newline included).
func sdkReads(t *testing.T, msg string) (bool, error) {
	pr, pw := io.Pipe()
	go func() {
		for _, l := range []string{messageOf(100), msg} {
			if _, err := io.WriteString(pw, l+"\n"); err != nil {
				return
			}
		}
		pw.Close()
	}()
	conn, err := (&mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Read(context.Background()); err != nil {
		t.Fatalf("first message: %v", err)
	}
	_, err = conn.Read(context.Background())
	pr.Close()
	return err == nil, err
}

// TestStdioGuardBound: the guard passes only messages the SDK's transport
// is sure to read (it counts every byte read for a message, read-ahead
// and the newline before it included, and ends the session at
// maxStdioLine), and answers longer ones itself: a message one byte past
// the bound used to pass the guard and end the session.
func TestStdioGuardBound(t *testing.T) {
	passes := func(n int) bool {
		line, over, _ := readLine(bufio.NewReader(strings.NewReader(messageOf(n) + "\n")))
		return !over && len(line) == n
	}
	if !passes(maxStdioLine - 1) {
		t.Errorf("the guard refuses a %d-byte message", maxStdioLine-1)
	}
	if ok, err := sdkReads(t, messageOf(maxStdioLine-1)); !ok {
		t.Errorf("the SDK refuses a %d-byte message the guard passes: %v", maxStdioLine-1, err)
	}
	for _, n := range []int{maxStdioLine, maxStdioLine + 1} {
		if passes(n) {
			t.Errorf("the guard passes a %d-byte message", n)
		}
	}
	// What the guard's refusal saves the session from.
	if ok, _ := sdkReads(t, messageOf(maxStdioLine+1)); ok {
		t.Errorf("the SDK read a %d-byte message", maxStdioLine+1)
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
