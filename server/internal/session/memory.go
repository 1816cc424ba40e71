package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plasmd/plasmd/guest/abi"
)

// Retention bounds of the in-memory store, per logical session (or, for
// HTTP runs, per execute session). The oldest entries go first.
const (
	MaxRunsPerScope  = 256
	MaxPagesPerScope = 1024
)

// maxSweepInterval caps the time between expiry sweeps, so a long TTL does
// not let dead state pile up for hours before the first sweep.
const maxSweepInterval = time.Minute

// Memory is the embedded single-process Store. No caller shares memory
// with the store — the same contract a networked store has: runs and
// pages are kept as the JSON a networked store would hold (encoded once on
// write, decoded on each read, memory_runs.go), execute sessions are
// deep-copied in through JSON and out by a typed copy.
//
// Locking: one mutex guards the maps, but no JSON work happens under it.
// A stored value is never mutated once stored (every write replaces the
// whole value), so a getter takes the value (or its encoded bytes) under
// the lock and copies or decodes it after releasing, and one tenant's big
// run cannot stall another tenant's calls.
//
// Expiry: store calls themselves sweep, at most every min(ttl/10, 1m); no
// goroutine runs in the background. A sweep costs one pass over the
// sessions and transports, amortised over the interval.
type Memory struct {
	mu         sync.Mutex
	ttl        time.Duration
	sweepEvery time.Duration
	now        func() time.Time
	lastSweep  time.Time

	logical map[string]*logicalEntry  // id → logical
	byPair  map[[2]string]string      // (tenant, intent) → logical id
	refs    map[string]*transportRefs // transport → refs
	execs   map[Binding]Execute
	reuse   map[[2]string]map[Binding]struct{} // (tenant, reuse key) → execs
	// tombs remember expired execute sessions for one more TTL so their
	// lookups say ErrExpired rather than ErrNotFound, at most maxTombs of
	// them, oldest dropped first (memory_tombs.go).
	tombs    map[Binding]tomb
	tombQ    []tombRef
	maxTombs int
	seqs     map[[2]string]map[string]int // (tenant, scope) → counter → last
	runs     map[Binding]map[runRef]*storedRun
	runIdx   map[[2]string]*runIndex
	pages    map[[2]string]map[int][]byte // encoded Page
	// runSeq numbers stored runs in the order they were first stored
	// (ListRuns breaks ties on N with it).
	runSeq uint64
	// unmarshal decodes a stored document (abi.Unmarshal; tests replace
	// it to prove decoding happens outside the lock).
	unmarshal func(b []byte, v any) error
	// commits and ops hold plan commits and operation records
	// (memory_commits.go, memory_operations.go), created on first use.
	commits map[commitScope]map[int]PlanCommit
	ops     map[opScope]map[int]Operation
	// leases are operation owner leases (memory_oplease.go).
	leases map[OpRef]memLease
	// expired holds sessions dropped under the lock, reported to OnExpire
	// by unlock.
	expired []Execute

	// OnExpire, if set, is called (outside the lock, once per session) when
	// an execute session expires, whether a lookup or a sweep found it.
	OnExpire func(e Execute)

	// Per-tenant budgets (budget.go): the lookup, each tenant's books and
	// how many objects eviction removed.
	budgetFor func(tenant string) Budget
	books     map[string]*tenantBooks
	evictions uint64
}

type logicalEntry struct {
	l        Logical
	lastUsed time.Time
	// unboundSince is when the session was first seen without a live
	// execute session (zero while bound); the idle TTL of a logical
	// session only starts then, so an agent coming back just after its
	// execute session expired still recovers into the same logical id.
	unboundSince time.Time
	transports   map[string]struct{} // transports holding a ref to it
}

type runKey struct {
	b     Binding
	runID string
}

type tomb struct {
	tenant string
	at     time.Time
}

type transportRefs struct {
	tenant   string
	next     int               // refs are never renumbered, so a dropped ref stays unknown
	byRef    map[string]string // ref → logical id
	byID     map[string]string // logical id → ref
	lastUsed time.Time
}

// NewMemory returns an in-memory store whose execute sessions expire after
// ttl without use (0 means 30 minutes).
func NewMemory(ttl time.Duration) *Memory {
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	return &Memory{
		ttl:        ttl,
		sweepEvery: min(ttl/10, maxSweepInterval),
		now:        time.Now,
		logical:    map[string]*logicalEntry{},
		byPair:     map[[2]string]string{},
		refs:       map[string]*transportRefs{},
		execs:      map[Binding]Execute{},
		reuse:      map[[2]string]map[Binding]struct{}{},
		tombs:      map[Binding]tomb{},
		maxTombs:   defaultMaxTombs,
		seqs:       map[[2]string]map[string]int{},
		runs:       map[Binding]map[runRef]*storedRun{},
		runIdx:     map[[2]string]*runIndex{},
		pages:      map[[2]string]map[int][]byte{},
		unmarshal:  abi.Unmarshal,
	}
}

// SetClock replaces the clock (tests of idle expiry).
func (m *Memory) SetClock(now func() time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = now
	m.lastSweep = time.Time{}
}

// lock takes the mutex, sweeps when one is due and returns the time the
// call is stamped with. Every lock must be paired with unlock.
func (m *Memory) lock() time.Time {
	m.mu.Lock()
	now := m.now()
	if m.lastSweep.IsZero() || now.Before(m.lastSweep) || now.Sub(m.lastSweep) >= m.sweepEvery {
		m.sweepLocked(now)
	}
	return now
}

// unlock releases the mutex, then reports expired sessions: OnExpire may be
// slow or call back into the store.
func (m *Memory) unlock() {
	expired, onExpire := m.expired, m.OnExpire
	m.expired = nil
	m.mu.Unlock()
	if onExpire != nil {
		for _, e := range expired {
			onExpire(e)
		}
	}
}

func (m *Memory) sweepLocked(now time.Time) {
	m.lastSweep = now
	m.sweepLeasesLocked(now)
	var dead []Execute
	for _, e := range m.execs {
		if now.Sub(e.LastUsed) > m.ttl {
			dead = append(dead, e)
		}
	}
	// Deterministic OnExpire order, whatever the map order.
	slices.SortFunc(dead, func(a, b Execute) int {
		return cmp.Or(cmp.Compare(a.PromptHash, b.PromptHash), cmp.Compare(a.ID, b.ID))
	})
	for _, e := range dead {
		m.expireLocked(e, now, true)
	}
	m.pruneTombsLocked(now)
	for id, le := range m.logical {
		if m.boundLocked(le) {
			le.unboundSince = time.Time{}
			continue
		}
		if le.unboundSince.IsZero() {
			le.unboundSince = now
		}
		idleFrom := le.lastUsed
		if le.unboundSince.After(idleFrom) {
			idleFrom = le.unboundSince
		}
		if now.Sub(idleFrom) > m.ttl {
			m.removeLogicalLocked(id, le)
		}
	}
	// A transport whose refs all went with their logical sessions has been
	// idle for at least a TTL; one with refs left is kept until
	// ForgetTransport or until they go.
	for name, tr := range m.refs {
		if len(tr.byRef) == 0 && now.Sub(tr.lastUsed) > m.ttl {
			delete(m.refs, name)
		}
	}
}

func (m *Memory) boundLocked(le *logicalEntry) bool {
	if le.l.Binding == nil {
		return false
	}
	e, ok := m.execs[*le.l.Binding]
	return ok && e.Tenant == le.l.Tenant
}

// expireLocked drops an execute session that passed its TTL, queues it for
// OnExpire and, when tombstone is set, remembers it so its owner's next
// lookup reads ErrExpired.
func (m *Memory) expireLocked(e Execute, now time.Time, tombstone bool) {
	m.dropExecLocked(e)
	if tombstone {
		m.buryLocked(e, now)
	}
	m.expired = append(m.expired, e)
}

func (m *Memory) dropExecLocked(e Execute) {
	k := e.Key()
	delete(m.execs, k)
	rk := [2]string{e.Tenant, e.ReuseKey}
	if set := m.reuse[rk]; set != nil {
		delete(set, k)
		if len(set) == 0 {
			delete(m.reuse, rk)
		}
	}
	// HTTP runs and pages are scoped by the execute session id and are
	// unreachable once it is gone.
	m.removeScopeLocked(e.Tenant, e.ID)
	m.unbookExecLocked(e)
}

func (m *Memory) removeLogicalLocked(id string, le *logicalEntry) {
	pair := [2]string{le.l.Tenant, le.l.Intent}
	if m.byPair[pair] == id {
		delete(m.byPair, pair)
	}
	for name := range le.transports {
		if tr := m.refs[name]; tr != nil {
			if ref, ok := tr.byID[id]; ok {
				delete(tr.byRef, ref)
				delete(tr.byID, id)
			}
		}
	}
	m.removeScopeLocked(le.l.Tenant, id)
	delete(m.logical, id)
	m.unbookLogicalLocked(le.l.Tenant, id)
}

func (m *Memory) removeScopeLocked(tenant, scope string) {
	k := [2]string{tenant, scope}
	if idx := m.runIdx[k]; idx != nil {
		for _, rk := range idx.byN {
			m.deleteRunLocked(tenant, rk)
		}
	}
	delete(m.runIdx, k)
	delete(m.seqs, k)
	m.unbookScopePagesLocked(tenant, scope)
	delete(m.pages, k)
}

// touchScopeLocked counts activity in a scope as use of the logical
// session it names (if it names one), so a session that is only run in is
// not taken for idle.
func (m *Memory) touchScopeLocked(tenant, scope string, now time.Time) {
	if le := m.logical[scope]; le != nil && le.l.Tenant == tenant {
		le.lastUsed = now
	}
}

func (m *Memory) OpenLogical(_ context.Context, tenant, intent string) (Logical, error) {
	now := m.lock()
	defer m.unlock()
	if id, ok := m.byPair[[2]string{tenant, intent}]; ok {
		le := m.logical[id]
		le.lastUsed = now
		return copyLogical(le.l), nil
	}
	l := Logical{ID: uuid.NewString(), Tenant: tenant, Intent: intent}
	m.logical[l.ID] = &logicalEntry{l: l, lastUsed: now, unboundSince: now, transports: map[string]struct{}{}}
	m.byPair[[2]string{tenant, intent}] = l.ID
	m.bookLogicalLocked(tenant, l.ID)
	return copyLogical(l), nil
}

func (m *Memory) GetLogical(_ context.Context, tenant, id string) (Logical, error) {
	now := m.lock()
	defer m.unlock()
	le, ok := m.logical[id]
	if !ok || le.l.Tenant != tenant {
		return Logical{}, fmt.Errorf("logical session %s: %w", id, ErrNotFound)
	}
	le.lastUsed = now
	return copyLogical(le.l), nil
}

func (m *Memory) BindLogical(_ context.Context, tenant, id string, b Binding) error {
	now := m.lock()
	defer m.unlock()
	le, ok := m.logical[id]
	if !ok || le.l.Tenant != tenant {
		return fmt.Errorf("logical session %s: %w", id, ErrNotFound)
	}
	le.l.Binding = &b
	le.lastUsed = now
	le.unboundSince = time.Time{}
	return nil
}

func copyLogical(l Logical) Logical {
	if l.Binding != nil {
		b := *l.Binding
		l.Binding = &b
	}
	return l
}

func (m *Memory) RefFor(_ context.Context, transport, tenant, logicalID string) (string, error) {
	now := m.lock()
	defer m.unlock()
	// A ref is only ever minted for the tenant's own logical session, so a
	// transport can never be handed a name for someone else's.
	le, ok := m.logical[logicalID]
	if !ok || le.l.Tenant != tenant {
		return "", fmt.Errorf("logical session %s: %w", logicalID, ErrNotFound)
	}
	tr := m.refs[transport]
	if tr == nil {
		tr = &transportRefs{tenant: tenant, byRef: map[string]string{}, byID: map[string]string{}}
		m.refs[transport] = tr
	}
	if tr.tenant != tenant {
		return "", fmt.Errorf("transport session belongs to another tenant: %w", ErrNotFound)
	}
	tr.lastUsed = now
	le.lastUsed = now
	if ref, ok := tr.byID[logicalID]; ok {
		return ref, nil
	}
	ref := "s" + strconv.Itoa(tr.next)
	tr.next++
	tr.byRef[ref] = logicalID
	tr.byID[logicalID] = ref
	le.transports[transport] = struct{}{}
	return ref, nil
}

func (m *Memory) ResolveRef(_ context.Context, transport, tenant, ref string) (string, error) {
	now := m.lock()
	defer m.unlock()
	tr := m.refs[transport]
	if tr == nil || tr.tenant != tenant {
		return "", fmt.Errorf("logical_session_ref %q: %w", ref, ErrNotFound)
	}
	id, ok := tr.byRef[ref]
	if !ok {
		return "", fmt.Errorf("logical_session_ref %q: %w", ref, ErrNotFound)
	}
	tr.lastUsed = now
	m.touchScopeLocked(tenant, id, now)
	return id, nil
}

func (m *Memory) ForgetTransport(_ context.Context, transport string) error {
	m.lock()
	defer m.unlock()
	tr := m.refs[transport]
	if tr == nil {
		return nil
	}
	for id := range tr.byID {
		if le := m.logical[id]; le != nil {
			delete(le.transports, transport)
		}
	}
	delete(m.refs, transport)
	return nil
}

func (m *Memory) PutExecute(_ context.Context, e Execute) error {
	c, err := clone(e)
	if err != nil {
		return err
	}
	now := m.lock()
	defer m.unlock()
	if c.LastUsed.IsZero() {
		c.LastUsed = now
	}
	k := c.Key()
	if old, ok := m.execs[k]; ok && (old.Tenant != c.Tenant || old.ReuseKey != c.ReuseKey) {
		rk := [2]string{old.Tenant, old.ReuseKey}
		delete(m.reuse[rk], k)
		if len(m.reuse[rk]) == 0 {
			delete(m.reuse, rk)
		}
	}
	delete(m.tombs, k)
	m.execs[k] = c
	rk := [2]string{c.Tenant, c.ReuseKey}
	if m.reuse[rk] == nil {
		m.reuse[rk] = map[Binding]struct{}{}
	}
	m.reuse[rk][k] = struct{}{}
	m.bookExecLocked(c)
	return nil
}

func (m *Memory) GetExecute(_ context.Context, tenant, promptHash, id string) (Execute, error) {
	e, err := m.getExecute(tenant, promptHash, id)
	if err != nil {
		return Execute{}, err
	}
	// Every run reads its execute session; a typed deep copy costs a small
	// fraction of a JSON round trip. PutExecute still goes through JSON, so
	// what is stored is known to serialise.
	return e.Clone(), nil
}

func (m *Memory) getExecute(tenant, promptHash, id string) (Execute, error) {
	now := m.lock()
	defer m.unlock()
	k := Binding{PromptHash: promptHash, SessionID: id}
	e, ok := m.execs[k]
	if !ok || e.Tenant != tenant {
		// Expired (by a sweep or an earlier lookup): every lookup says so
		// while the tombstone lasts, not only the first.
		if t, ok := m.tombs[k]; ok && t.tenant == tenant && now.Sub(t.at) <= m.ttl {
			return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrExpired)
		}
		return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrNotFound)
	}
	if now.Sub(e.LastUsed) > m.ttl {
		m.expireLocked(e, now, true)
		return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrExpired)
	}
	e.LastUsed = now
	m.execs[k] = e
	return e, nil
}

// FindReusable picks, among the tenant's live sessions with this key, the
// most recently used one (ties broken by key, so the answer does not depend
// on map order). Expired candidates met on the way are dropped and reported
// to OnExpire rather than shadowing a live one.
func (m *Memory) FindReusable(_ context.Context, tenant, reuseKey string) (Execute, error) {
	best, err := m.findReusable(tenant, reuseKey)
	if err != nil {
		return Execute{}, err
	}
	return best.Clone(), nil
}

func (m *Memory) findReusable(tenant, reuseKey string) (Execute, error) {
	now := m.lock()
	defer m.unlock()
	var dead []Execute
	var best Execute
	found := false
	for k := range m.reuse[[2]string{tenant, reuseKey}] {
		e := m.execs[k]
		if now.Sub(e.LastUsed) > m.ttl {
			dead = append(dead, e)
			continue
		}
		if !found || e.LastUsed.After(best.LastUsed) || (e.LastUsed.Equal(best.LastUsed) && lessKey(k, best.Key())) {
			best, found = e, true
		}
	}
	// Dropped after the loop: dropping edits the set being ranged over.
	for _, e := range dead {
		m.expireLocked(e, now, true)
	}
	if !found {
		return Execute{}, fmt.Errorf("reusable execute session: %w", ErrNotFound)
	}
	best.LastUsed = now
	m.execs[best.Key()] = best
	return best, nil
}

func lessKey(a, b Binding) bool {
	if a.PromptHash != b.PromptHash {
		return a.PromptHash < b.PromptHash
	}
	return a.SessionID < b.SessionID
}

func (m *Memory) NextSeq(_ context.Context, tenant, scope, counter string) (int, error) {
	now := m.lock()
	defer m.unlock()
	k := [2]string{tenant, scope}
	if m.seqs[k] == nil {
		m.seqs[k] = map[string]int{}
	}
	m.seqs[k][counter]++
	m.touchScopeLocked(tenant, scope, now)
	return m.seqs[k][counter], nil
}

// Kind names the store for operators (/v1/health).
func (m *Memory) Kind() string { return "memory" }
