package session

import (
	"context"
	"fmt"
	"time"
)

// Finished operations are kept for wait(…) to report, bounded per scope and
// in time, so a session that starts operations in a loop cannot grow the
// store.
const (
	maxFinishedPerScope = 64
	finishedOpTTL       = time.Hour
)

type opScope = [2]string // tenant, scope

func (m *Memory) StartOperation(_ context.Context, op Operation, max int) error {
	now := m.lock()
	defer m.unlock()
	if m.ops == nil {
		m.ops = map[opScope]map[int]Operation{}
	}
	k := opScope{op.Tenant, op.Scope}
	byN := m.ops[k]
	if byN == nil {
		byN = map[int]Operation{}
		m.ops[k] = byN
	}
	m.pruneOpsLocked(byN, now)
	unfinished := 0
	for _, o := range byN {
		if !o.Final() {
			unfinished++
		}
	}
	if unfinished >= max {
		return fmt.Errorf("%d operations unfinished: %w", unfinished, ErrTooManyOperations)
	}
	op.Created, op.Updated = now, now
	byN[op.N] = op
	return nil
}

// pruneOpsLocked drops finished operations past their TTL, then the oldest
// finished ones beyond the per-scope cap.
func (m *Memory) pruneOpsLocked(byN map[int]Operation, now time.Time) {
	finished := 0
	for n, o := range byN {
		if o.Final() {
			if now.Sub(o.Updated) > finishedOpTTL {
				delete(byN, n)
				continue
			}
			finished++
		}
	}
	for ; finished > maxFinishedPerScope; finished-- {
		oldest := -1
		for n, o := range byN {
			if o.Final() && (oldest < 0 || n < oldest) {
				oldest = n
			}
		}
		delete(byN, oldest)
	}
}

func (m *Memory) GetOperation(_ context.Context, tenant, scope string, n int) (Operation, error) {
	m.lock()
	defer m.unlock()
	o, ok := m.ops[opScope{tenant, scope}][n]
	if !ok {
		return Operation{}, fmt.Errorf("operation %d: %w", n, ErrNotFound)
	}
	return o, nil
}

func (m *Memory) UpdateOperation(_ context.Context, op Operation) error {
	now := m.lock()
	defer m.unlock()
	byN := m.ops[opScope{op.Tenant, op.Scope}]
	old, ok := byN[op.N]
	if !ok {
		return fmt.Errorf("operation %d: %w", op.N, ErrNotFound)
	}
	if old.Final() {
		return nil
	}
	op.CancelRequested = op.CancelRequested || old.CancelRequested
	op.Calls = max(op.Calls, old.Calls)
	op.Created, op.Updated = old.Created, now
	byN[op.N] = op
	return nil
}

func (m *Memory) RequestCancel(_ context.Context, tenant, scope string, n int) (Operation, error) {
	now := m.lock()
	defer m.unlock()
	byN := m.ops[opScope{tenant, scope}]
	o, ok := byN[n]
	if !ok {
		return Operation{}, fmt.Errorf("operation %d: %w", n, ErrNotFound)
	}
	if !o.Final() && !o.CancelRequested {
		o.CancelRequested, o.Updated = true, now
		byN[n] = o
	}
	return o, nil
}
