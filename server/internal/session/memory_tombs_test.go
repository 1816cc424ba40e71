package session

import (
	"fmt"
	"testing"
	"time"
)

// TestTombstonesBounded: expired sessions keep answering ErrExpired, but
// at most maxTombs of them are remembered, the oldest dropped first, and
// the burial queue does not grow past the tombstones it orders.
func TestTombstonesBounded(t *testing.T) {
	const ttl = time.Minute
	m, c := newStore(t, ttl)
	m.maxTombs = 3
	for i := range 10 {
		id := fmt.Sprintf("s%d", i)
		e := execute("A", "h", id, "k")
		e.LastUsed = c.Now().Add(-2 * ttl) // idle past the TTL already
		if err := m.PutExecute(bg, e); err != nil {
			t.Fatal(err)
		}
		_, err := m.GetExecute(bg, "A", "h", id) // expires it: a tombstone
		wantErr(t, err, ErrExpired)
		c.Advance(time.Millisecond)
	}
	wantSizes(t, m, map[string]int{"execs": 0, "tombs": 3})
	for i := range 10 {
		_, err := m.GetExecute(bg, "A", "h", fmt.Sprintf("s%d", i))
		if i < 7 {
			wantErr(t, err, ErrNotFound) // dropped past the cap, oldest first
		} else {
			wantErr(t, err, ErrExpired)
		}
	}
	if n := len(m.tombQ); n > 2*len(m.tombs)+64 {
		t.Errorf("burial queue holds %d entries for %d tombstones", n, len(m.tombs))
	}
	// A session id stored again is live, not a tombstone.
	if err := m.PutExecute(bg, execute("A", "h", "s9", "k")); err != nil {
		t.Fatal(err)
	}
	must(m.GetExecute(bg, "A", "h", "s9"))
}

// TestTombstoneStaleQueueCompacted: many burials of tombstones removed in
// between (a stored-again id) leave a queue bounded by the live ones.
func TestTombstoneStaleQueueCompacted(t *testing.T) {
	m, c := newStore(t, time.Minute)
	for range 1000 {
		e := execute("A", "h", "same", "k")
		e.LastUsed = c.Now().Add(-2 * time.Minute)
		if err := m.PutExecute(bg, e); err != nil { // removes the tombstone
			t.Fatal(err)
		}
		_, err := m.GetExecute(bg, "A", "h", "same")
		wantErr(t, err, ErrExpired)
	}
	if n := len(m.tombQ); n > 2*len(m.tombs)+64 {
		t.Errorf("burial queue holds %d entries for %d tombstones", n, len(m.tombs))
	}
}
