package session

import "time"

// Tombstones of expired execute sessions (memory store). An agent that
// comes back after the idle TTL should read "expired" (410, open a new
// session) on every retry, not "expired" once and then "not found", which
// reads like a wrong URL. A tombstone lasts one more TTL (then the session
// is simply unknown, as on Redis, whose known key lives 2×TTL), and there
// are at most maxTombs of them: each is a few hundred bytes, and without a
// cap a tenant opening sessions and letting them lapse could grow them for
// a whole TTL. Past the cap the oldest go first; its owner then reads
// ErrNotFound, the answer before tombstones existed.
const defaultMaxTombs = 1 << 15

// tombRef is a tombstone in burial order; at tells a stale entry (the tomb
// was removed or buried again since) from the live one.
type tombRef struct {
	k  Binding
	at time.Time
}

// buryLocked tombstones an expired session, dropping the oldest
// tombstones past the cap.
func (m *Memory) buryLocked(e Execute, now time.Time) {
	k := e.Key()
	m.tombs[k] = tomb{tenant: e.Tenant, at: now}
	m.tombQ = append(m.tombQ, tombRef{k: k, at: now})
	for len(m.tombs) > m.maxTombs && len(m.tombQ) > 0 {
		r := m.tombQ[0]
		m.tombQ = m.tombQ[1:]
		if t, ok := m.tombs[r.k]; ok && t.at.Equal(r.at) {
			delete(m.tombs, r.k)
		}
	}
	// Stale entries (a session id stored again, a tomb buried twice) are
	// dropped once they outnumber the live ones, so the queue stays O(cap).
	if len(m.tombQ) > 2*len(m.tombs)+64 {
		m.compactTombsLocked()
	}
}

// pruneTombsLocked drops tombstones older than a TTL (sweep).
func (m *Memory) pruneTombsLocked(now time.Time) {
	for k, t := range m.tombs {
		if now.Sub(t.at) > m.ttl {
			delete(m.tombs, k)
		}
	}
	m.compactTombsLocked()
}

// compactTombsLocked keeps one queue entry per live tombstone, in order,
// in a new array (re-slicing alone would keep the old one alive).
func (m *Memory) compactTombsLocked() {
	q := make([]tombRef, 0, len(m.tombs))
	kept := make(map[Binding]bool, len(m.tombs))
	for _, r := range m.tombQ {
		if t, ok := m.tombs[r.k]; ok && t.at.Equal(r.at) && !kept[r.k] {
			kept[r.k] = true
			q = append(q, r)
		}
	}
	m.tombQ = q
}
