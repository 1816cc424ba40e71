package session

import (
	"container/list"
	"errors"
	"fmt"
)

// ErrQuota: storing the value would take the tenant past a budget that
// eviction cannot make room under (e.g. one run larger than the whole
// run budget). Callers answer 429 quota-exceeded.
var ErrQuota = errors.New("quota exceeded")

// Budget bounds one tenant's session state. Zero fields take
// DefaultBudget's. Every store honours it (Memory per process, Redis across
// the replicas sharing it; TestBudgetContract): at a budget the tenant's
// oldest state goes first (stored runs and pages in the order they were
// stored, execute and logical sessions least recently used first), and
// only a single value larger than the whole budget is refused with
// ErrQuota.
type Budget struct {
	// RunBytes bounds the encoded size of the tenant's stored runs (the
	// results and artifacts kept for r/N and canonical URIs).
	RunBytes int64
	// Runs, Pages, Executes and Logicals bound how many stored runs,
	// paging handles, execute sessions and logical sessions the tenant
	// holds at once.
	Runs, Pages, Executes, Logicals int
}

// DefaultBudget is a tenant's budget when nothing is configured: enough
// for dozens of concurrent agents, small enough that a tenant looping on
// runs or intents cannot grow the host by more than roughly RunBytes plus
// a few MiB of session maps.
func DefaultBudget() Budget {
	return Budget{RunBytes: 64 << 20, Runs: 1024, Pages: 4096, Executes: 256, Logicals: 256}
}

// Over returns b with its zero fields taken from base.
func (b Budget) Over(base Budget) Budget {
	if b.RunBytes <= 0 {
		b.RunBytes = base.RunBytes
	}
	pick := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	b.Runs, b.Pages = pick(b.Runs, base.Runs), pick(b.Pages, base.Pages)
	b.Executes, b.Logicals = pick(b.Executes, base.Executes), pick(b.Logicals, base.Logicals)
	return b
}

// Usage is one tenant's current use of its budget.
type Usage struct {
	RunBytes                        int64
	Runs, Pages, Executes, Logicals int
}

// Budgeter is implemented by stores that enforce per-tenant budgets; the
// server hands them the tenants file's budgets and reads usage for
// /metrics.
type Budgeter interface {
	// SetBudgets installs the budget lookup (called once, before use).
	SetBudgets(budgetFor func(tenant string) Budget)
	// Usage returns each tenant's current use.
	Usage() map[string]Usage
}

// tenantBooks is one tenant's accounting in the memory store: its stored
// runs and pages in insertion order (oldest first, for eviction) and sets
// of its execute and logical sessions.
type tenantBooks struct {
	runBytes int64
	runs     *list.List // of *runItem
	runAt    map[runKey]*list.Element
	pages    *list.List // of pageKey
	pageAt   map[pageKey]*list.Element
	execs    map[Binding]struct{}
	logicals map[string]struct{}
}

type runItem struct {
	key   runKey
	scope [2]string
	n     int
	size  int64
}

type pageKey struct {
	scope string
	n     int
}

func newBooks() *tenantBooks {
	return &tenantBooks{runs: list.New(), runAt: map[runKey]*list.Element{}, pages: list.New(),
		pageAt: map[pageKey]*list.Element{}, execs: map[Binding]struct{}{}, logicals: map[string]struct{}{}}
}

func (b *tenantBooks) empty() bool {
	return b.runs.Len() == 0 && b.pages.Len() == 0 && len(b.execs) == 0 && len(b.logicals) == 0
}

// SetBudgets implements Budgeter.
func (m *Memory) SetBudgets(budgetFor func(tenant string) Budget) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.budgetFor = budgetFor
}

// Usage implements Budgeter.
func (m *Memory) Usage() map[string]Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]Usage, len(m.books))
	for t, b := range m.books {
		out[t] = Usage{RunBytes: b.runBytes, Runs: b.runs.Len(), Pages: b.pages.Len(), Executes: len(b.execs), Logicals: len(b.logicals)}
	}
	return out
}

func (m *Memory) budgetLocked(tenant string) Budget {
	if m.budgetFor == nil {
		return DefaultBudget()
	}
	return m.budgetFor(tenant).Over(DefaultBudget())
}

func (m *Memory) booksLocked(tenant string) *tenantBooks {
	if m.books == nil {
		m.books = map[string]*tenantBooks{}
	}
	b := m.books[tenant]
	if b == nil {
		b = newBooks()
		m.books[tenant] = b
	}
	return b
}

// forgetBooksLocked drops a tenant's empty books so idle tenants cost
// nothing.
func (m *Memory) forgetBooksLocked(tenant string) {
	if b := m.books[tenant]; b != nil && b.empty() {
		delete(m.books, tenant)
	}
}

// admitRunLocked makes room for a run of size bytes by evicting the
// tenant's oldest runs; ErrQuota when the run alone is over the budget.
func (m *Memory) admitRunLocked(tenant string, size int64) error {
	bud := m.budgetLocked(tenant)
	if size > bud.RunBytes {
		return fmt.Errorf("%w: a run of %d bytes is larger than the tenant's run budget (%d bytes); narrow the program (.limit, projection)", ErrQuota, size, bud.RunBytes)
	}
	b := m.booksLocked(tenant)
	for b.runs.Len() > 0 && (b.runBytes+size > bud.RunBytes || b.runs.Len()+1 > bud.Runs) {
		it := b.runs.Front().Value.(*runItem)
		if idx := m.runIdx[it.scope]; idx != nil {
			if rk, ok := idx.get(it.n); ok && rk == it.key {
				idx.del(it.n)
			}
		}
		m.deleteRunLocked(tenant, it.key) // unbooks it
		m.evictions++
	}
	return nil
}

// bookRunLocked records a stored run (replacing an earlier booking of the
// same run).
func (m *Memory) bookRunLocked(tenant string, it *runItem) {
	m.unbookRunLocked(tenant, it.key) // may drop the books when empty
	b := m.booksLocked(tenant)
	b.runAt[it.key] = b.runs.PushBack(it)
	b.runBytes += it.size
}

func (m *Memory) unbookRunLocked(tenant string, k runKey) {
	b := m.books[tenant]
	if b == nil {
		return
	}
	if el, ok := b.runAt[k]; ok {
		b.runBytes -= el.Value.(*runItem).size
		b.runs.Remove(el)
		delete(b.runAt, k)
	}
	m.forgetBooksLocked(tenant)
}

// bookPageLocked records a stored page and evicts the tenant's oldest
// pages past its budget.
func (m *Memory) bookPageLocked(tenant, scope string, n int) {
	b := m.booksLocked(tenant)
	k := pageKey{scope, n}
	if _, ok := b.pageAt[k]; !ok {
		b.pageAt[k] = b.pages.PushBack(k)
	}
	for lim := m.budgetLocked(tenant).Pages; b.pages.Len() > lim; {
		old := b.pages.Front().Value.(pageKey)
		m.unbookPageLocked(tenant, old)
		delete(m.pages[[2]string{tenant, old.scope}], old.n)
		m.evictions++
	}
}

func (m *Memory) unbookPageLocked(tenant string, k pageKey) {
	b := m.books[tenant]
	if b == nil {
		return
	}
	if el, ok := b.pageAt[k]; ok {
		b.pages.Remove(el)
		delete(b.pageAt, k)
	}
	m.forgetBooksLocked(tenant)
}

// unbookScopePagesLocked forgets every page of a scope being removed.
func (m *Memory) unbookScopePagesLocked(tenant, scope string) {
	for n := range m.pages[[2]string{tenant, scope}] {
		m.unbookPageLocked(tenant, pageKey{scope, n})
	}
}

// bookExecLocked records an execute session and, past the tenant's
// budget, expires its least recently used other sessions (their owners
// read ErrExpired, as after an idle timeout).
func (m *Memory) bookExecLocked(e Execute) {
	b := m.booksLocked(e.Tenant)
	b.execs[e.Key()] = struct{}{}
	for lim := m.budgetLocked(e.Tenant).Executes; len(b.execs) > lim; {
		var victim Execute
		found := false
		for k := range b.execs {
			x, ok := m.execs[k]
			if !ok || k == e.Key() {
				continue
			}
			if !found || x.LastUsed.Before(victim.LastUsed) || x.LastUsed.Equal(victim.LastUsed) && lessKey(k, victim.Key()) {
				victim, found = x, true
			}
		}
		if !found {
			return
		}
		m.expireLocked(victim, m.now(), true) // unbooks it
		m.evictions++
	}
}

func (m *Memory) unbookExecLocked(e Execute) {
	if b := m.books[e.Tenant]; b != nil {
		delete(b.execs, e.Key())
		m.forgetBooksLocked(e.Tenant)
	}
}

// bookLogicalLocked records a logical session and, past the tenant's
// budget, removes its least recently used other ones with their refs,
// runs and pages.
func (m *Memory) bookLogicalLocked(tenant, id string) {
	b := m.booksLocked(tenant)
	b.logicals[id] = struct{}{}
	for lim := m.budgetLocked(tenant).Logicals; len(b.logicals) > lim; {
		var victim *logicalEntry
		victimID := ""
		for lid := range b.logicals {
			le := m.logical[lid]
			if le == nil || lid == id {
				continue
			}
			if victim == nil || le.lastUsed.Before(victim.lastUsed) || le.lastUsed.Equal(victim.lastUsed) && lid < victimID {
				victim, victimID = le, lid
			}
		}
		if victim == nil {
			return
		}
		m.removeLogicalLocked(victimID, victim) // unbooks it
		m.evictions++
	}
}

func (m *Memory) unbookLogicalLocked(tenant, id string) {
	if b := m.books[tenant]; b != nil {
		delete(b.logicals, id)
		m.forgetBooksLocked(tenant)
	}
}
