package session

import (
	"context"
	"fmt"
	"time"
)

// maxCommitsPerScope bounds the commits one session can hold: an agent
// dry-running in a loop must not grow the store; the oldest goes first.
const maxCommitsPerScope = 64

type commitScope = [2]string // tenant, scope

func (m *Memory) PutPlanCommit(_ context.Context, c PlanCommit, ttl time.Duration) error {
	now := m.lock()
	defer m.unlock()
	c.Expires = now.Add(ttl)
	if m.commits == nil {
		m.commits = map[commitScope]map[int]PlanCommit{}
	}
	// Drop expired commits everywhere: they are useless, and this keeps
	// the map bounded by the commits of the last validity window.
	for k, byN := range m.commits {
		for n, pc := range byN {
			if !now.Before(pc.Expires) {
				delete(byN, n)
			}
		}
		if len(byN) == 0 {
			delete(m.commits, k)
		}
	}
	k := commitScope{c.Tenant, c.Scope}
	byN := m.commits[k]
	if byN == nil {
		byN = map[int]PlanCommit{}
		m.commits[k] = byN
	}
	for len(byN) >= maxCommitsPerScope {
		oldest := -1
		for n := range byN {
			if oldest < 0 || n < oldest {
				oldest = n
			}
		}
		delete(byN, oldest)
	}
	byN[c.N] = c
	return nil
}

func (m *Memory) TakePlanCommit(_ context.Context, tenant, scope string, n int, planHash string) (PlanCommit, error) {
	now := m.lock()
	defer m.unlock()
	byN := m.commits[commitScope{tenant, scope}]
	pc, ok := byN[n]
	if !ok || !now.Before(pc.Expires) {
		delete(byN, n)
		return PlanCommit{}, fmt.Errorf("plan commit pc%d: %w", n, ErrNotFound)
	}
	if pc.PlanHash != planHash {
		return PlanCommit{}, fmt.Errorf("plan commit pc%d: %w", n, ErrPlanMismatch)
	}
	delete(byN, n)
	return pc, nil
}
