package session

import (
	"context"
	"fmt"
	"time"
)

// memLease is a lease in the memory store: it exists until expires on the
// store's clock (Memory.now).
type memLease struct {
	owner   string
	ttl     time.Duration
	expires time.Time
}

func (m *Memory) PutOpLease(_ context.Context, ref OpRef, owner string, ttl time.Duration) error {
	now := m.lock()
	defer m.unlock()
	if m.leases == nil {
		m.leases = map[OpRef]memLease{}
	}
	m.leases[ref] = memLease{owner: owner, ttl: ttl, expires: now.Add(ttl)}
	return nil
}

func (m *Memory) RenewOpLeases(_ context.Context, refs []OpRef, owner string, ttl time.Duration) ([]OpRef, error) {
	now := m.lock()
	defer m.unlock()
	var lost []OpRef
	for _, ref := range refs {
		l, ok := m.leases[ref]
		if !ok || !now.Before(l.expires) {
			delete(m.leases, ref)
			lost = append(lost, ref)
			continue
		}
		m.leases[ref] = memLease{owner: owner, ttl: ttl, expires: now.Add(ttl)}
	}
	return lost, nil
}

func (m *Memory) GetOpLease(_ context.Context, ref OpRef) (OpLease, error) {
	now := m.lock()
	defer m.unlock()
	l, ok := m.leases[ref]
	if !ok || !now.Before(l.expires) {
		delete(m.leases, ref)
		return OpLease{}, fmt.Errorf("operation %d lease: %w", ref.N, ErrNotFound)
	}
	return OpLease{Owner: l.owner, TTL: l.ttl, Left: l.expires.Sub(now)}, nil
}

func (m *Memory) DropOpLease(_ context.Context, ref OpRef) error {
	m.lock()
	defer m.unlock()
	delete(m.leases, ref)
	return nil
}

// sweepLeasesLocked drops expired leases (an owner that stopped renewing
// them never drops them itself).
func (m *Memory) sweepLeasesLocked(now time.Time) {
	for ref, l := range m.leases {
		if !now.Before(l.expires) {
			delete(m.leases, ref)
		}
	}
}
