// Package audit records who changed what: every mutation and every
// review-gated run (and credential changes), append-only, as JSON lines on
// disk and in a bounded in-memory ring that serves GET /v1/audit. Records
// never carry secrets: callers pass the secret values in scope and Redact
// removes them from every free-text field before the record is written.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Call is one plan step that reached a backend.
type Call struct {
	Node       int    `json:"node"`
	Op         string `json:"op"`
	EntryID    string `json:"entry_id,omitempty"`
	Entity     string `json:"entity,omitempty"`
	Capability string `json:"capability,omitempty"`
	Effect     string `json:"effect,omitempty"`
	Calls      int    `json:"calls"`
}

// Record is one audit entry.
type Record struct {
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal,omitempty"`
	// Action: "run" (a mutation or review-gated run), "credential.stored",
	// "credential.deleted".
	Action    string `json:"action"`
	EntryID   string `json:"entry_id,omitempty"`
	Session   string `json:"session,omitempty"` // prompt_hash/session_id
	RunID     string `json:"run_id,omitempty"`
	Program   string `json:"program,omitempty"`
	PlanHash  string `json:"plan_hash,omitempty"`
	Verdict   string `json:"verdict,omitempty"`
	CommitRef string `json:"commit_ref,omitempty"`
	Calls     []Call `json:"calls,omitempty"`
	// Outcome is "ok" or "error"; Error is the problem type and detail.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Log is where records go. Implementations are safe for concurrent use.
type Log interface {
	Append(ctx context.Context, r Record) error
	// List returns up to limit of a tenant's most recent records, oldest
	// first; principal, when set, keeps only that principal's.
	List(ctx context.Context, tenant, principal string, limit int) ([]Record, error)
}

// Redacted replaces a secret value in audit text.
const Redacted = "[REDACTED]"

// minSecret is the shortest value Redact removes: shorter strings would
// erase ordinary characters of every program without protecting much.
const minSecret = 4

// Redact returns r with every secret value removed from its free-text
// fields (program, error).
func Redact(r Record, secrets []string) Record {
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		r.Program = strings.ReplaceAll(r.Program, s, Redacted)
		r.Error = strings.ReplaceAll(r.Error, s, Redacted)
	}
	return r
}

// Ring keeps the last N records in memory.
type Ring struct {
	mu   sync.Mutex
	buf  []Record
	next int
	full bool
	seq  int64
	now  func() time.Time
}

// NewRing returns a ring of capacity n (at least 1).
func NewRing(n int) *Ring {
	if n < 1 {
		n = 1
	}
	return &Ring{buf: make([]Record, n), now: time.Now}
}

// SetClock replaces the clock that stamps records (tests).
func (r *Ring) SetClock(now func() time.Time) { r.now = now }

// Append implements Log: it stamps Seq and (when zero) Time.
func (r *Ring) Append(_ context.Context, rec Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stamp(&rec)
	r.buf[r.next] = rec
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
	return nil
}

func (r *Ring) stamp(rec *Record) {
	r.seq++
	rec.Seq = r.seq
	if rec.Time.IsZero() {
		rec.Time = r.now().UTC()
	}
}

// List implements Log.
func (r *Ring) List(_ context.Context, tenant, principal string, limit int) ([]Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	var out []Record
	// Walk newest to oldest, then reverse.
	for i := 0; i < n && (limit <= 0 || len(out) < limit); i++ {
		rec := r.buf[(r.next-1-i+len(r.buf))%len(r.buf)]
		if rec.Tenant == tenant && (principal == "" || rec.Principal == principal) {
			out = append(out, rec)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// File appends JSON lines to a file (opened O_APPEND, mode 0600) and keeps
// a Ring for reads. A record is in the ring only once it is on disk.
type File struct {
	ring *Ring
	mu   sync.Mutex
	f    *os.File
}

// OpenFile opens (creating) an append-only audit file; ringSize records
// are kept in memory for GET /v1/audit.
func OpenFile(path string, ringSize int) (*File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &File{ring: NewRing(ringSize), f: f}, nil
}

// ErrClosed: the file log was closed.
var ErrClosed = errors.New("audit log closed")

// Append implements Log.
func (l *File) Append(ctx context.Context, rec Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	l.ring.mu.Lock()
	l.ring.stamp(&rec)
	l.ring.mu.Unlock()
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	// One write per line: with O_APPEND concurrent writers (even other
	// processes) never interleave within a line.
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	l.ring.mu.Lock()
	l.ring.buf[l.ring.next] = rec
	l.ring.next = (l.ring.next + 1) % len(l.ring.buf)
	if l.ring.next == 0 {
		l.ring.full = true
	}
	l.ring.mu.Unlock()
	return nil
}

// List implements Log from the in-memory ring.
func (l *File) List(ctx context.Context, tenant, principal string, limit int) ([]Record, error) {
	return l.ring.List(ctx, tenant, principal, limit)
}

// Close flushes and closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
