package activity

import (
	"context"
	"sync"
)

// Note collects what one request did (its sessions and run), for the
// request's log line: the HTTP layer attaches one with WithNote and the
// service fills it in with NoteRun.
type Note struct {
	mu                      sync.Mutex
	logical, execute, runID string
}

type noteKey struct{}

// WithNote returns ctx carrying a fresh Note.
func WithNote(ctx context.Context) (context.Context, *Note) {
	n := &Note{}
	return context.WithValue(ctx, noteKey{}, n), n
}

// NoteRun records a run on the request's Note, if it has one.
func NoteRun(ctx context.Context, logical, execute, runID string) {
	if n, ok := ctx.Value(noteKey{}).(*Note); ok {
		n.mu.Lock()
		n.logical, n.execute, n.runID = logical, execute, runID
		n.mu.Unlock()
	}
}

// Values returns what was noted.
func (n *Note) Values() (logical, execute, runID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.logical, n.execute, n.runID
}
