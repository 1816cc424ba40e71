package logthrottle

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestHandler(t *testing.T) {
	type step struct {
		advance time.Duration
		msg     string
		n       int
	}
	tests := []struct {
		name  string
		steps []step
		want  []string // lines, in order, as "msg suppressed=N" or "msg"
	}{
		{"one flood is one line", []step{{0, "bad", 18000}}, []string{"bad"}},
		{"distinct messages each once", []step{{0, "a", 3}, {0, "b", 3}}, []string{"a", "b"}},
		{"after the window, the count", []step{{0, "bad", 5}, {11 * time.Second, "bad", 2}}, []string{"bad", "bad suppressed=4"}},
		{"within the window, nothing", []step{{0, "bad", 1}, {9 * time.Second, "bad", 3}}, []string{"bad"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			now := time.Unix(0, 0)
			inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
					return slog.Attr{}
				}
				return a
			}})
			log := slog.New(New(inner, 10*time.Second, func() time.Time { return now })).With("component", "mcp")
			for _, s := range tc.steps {
				now = now.Add(s.advance)
				for i := 0; i < s.n; i++ {
					log.Error(s.msg, "i", i)
				}
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				f := strings.Fields(line)
				msg := strings.TrimPrefix(f[0], "msg=")
				if s := f[len(f)-1]; strings.HasPrefix(s, "suppressed=") {
					msg += " " + s
				}
				got = append(got, msg)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("lines %q, want %q\n%s", got, tc.want, buf.String())
			}
		})
	}
}

// TestHandlerKeyBound: distinct messages past maxKeys reset the memory
// instead of growing it.
func TestHandlerKeyBound(t *testing.T) {
	h := New(slog.NewTextHandler(&bytes.Buffer{}, nil), time.Minute, nil)
	log := slog.New(h)
	for i := 0; i < 10*maxKeys; i++ {
		log.Error(fmt.Sprint("m", i))
	}
	if n := len(h.state.seen); n > maxKeys {
		t.Fatalf("%d messages remembered, bound %d", n, maxKeys)
	}
}
