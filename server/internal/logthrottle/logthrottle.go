// Package logthrottle is a slog.Handler that writes each distinct message
// at most once per window and counts the repeats it drops. It wraps the
// MCP SDK's logger: the SDK logs one ERROR per bad message, so one JSON-RPC
// batch of thousands of bad messages (or a client repeating one) would
// otherwise write thousands of identical lines.
package logthrottle

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// maxKeys bounds the messages remembered; past it the memory is reset, so
// a flood of distinct messages costs at most maxKeys lines per window.
const maxKeys = 256

// Handler throttles records by level and message.
type Handler struct {
	next  slog.Handler
	state *state
}

type state struct {
	mu     sync.Mutex
	window time.Duration
	now    func() time.Time
	seen   map[key]*entry
}

type key struct {
	level slog.Level
	msg   string
}

type entry struct {
	since   time.Time
	dropped int
}

// New returns a handler passing to next the first record of each message
// per window; the next record after a window carries "suppressed" (how
// many were dropped). A nil now means time.Now.
func New(next slog.Handler, window time.Duration, now func() time.Time) *Handler {
	if now == nil {
		now = time.Now
	}
	return &Handler{next: next, state: &state{window: window, now: now, seen: map[key]*entry{}}}
}

// Enabled reports whether next handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle passes r on unless its message was written within the window.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	dropped, ok := h.state.admit(key{r.Level, r.Message})
	if !ok {
		return nil
	}
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", dropped))
	}
	return h.next.Handle(ctx, r)
}

// admit reports whether a record with k may be written now and how many
// records with k were dropped since the last one written.
func (s *state) admit(k key) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e, ok := s.seen[k]
	if ok && now.Sub(e.since) < s.window {
		e.dropped++
		return 0, false
	}
	if !ok && len(s.seen) >= maxKeys {
		clear(s.seen)
	}
	dropped := 0
	if ok {
		dropped = e.dropped
	}
	s.seen[k] = &entry{since: now}
	return dropped, true
}

// WithAttrs shares the throttle state: attributes do not make a message
// distinct.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs), state: h.state}
}

// WithGroup shares the throttle state.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), state: h.state}
}
