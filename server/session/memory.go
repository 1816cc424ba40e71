package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Retention bounds of the in-memory store, per logical session (or, for
// HTTP runs, per execute session). The oldest entries go first.
const (
	MaxRunsPerScope  = 256
	MaxPagesPerScope = 1024
)

// Memory is the embedded single-process Store. Values are deep-copied in
// and out (through JSON for the nested ones) so no caller shares memory
// with the store — the same contract a networked store has.
type Memory struct {
	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time
	logical map[string]Logical // id → logical
	byPair  map[[2]string]string
	refs    map[string]*transportRefs // transport → refs
	execs   map[Binding]Execute
	seqs    map[[3]string]int
	runs    map[Binding][]Run
	runIdx  map[[2]string]map[int]runKey
	pages   map[[2]string]map[int]Page
	// OnExpire, if set, is called (outside the lock) when an execute
	// session is found expired.
	OnExpire func(e Execute)
}

type runKey struct {
	b     Binding
	runID string
}

type transportRefs struct {
	tenant string
	byRef  map[string]string // ref → logical id
	byID   map[string]string // logical id → ref
}

// NewMemory returns an in-memory store whose execute sessions expire after
// ttl without use (0 means 30 minutes).
func NewMemory(ttl time.Duration) *Memory {
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	return &Memory{
		ttl:     ttl,
		now:     time.Now,
		logical: map[string]Logical{},
		byPair:  map[[2]string]string{},
		refs:    map[string]*transportRefs{},
		execs:   map[Binding]Execute{},
		seqs:    map[[3]string]int{},
		runs:    map[Binding][]Run{},
		runIdx:  map[[2]string]map[int]runKey{},
		pages:   map[[2]string]map[int]Page{},
	}
}

// SetClock replaces the clock (tests of idle expiry).
func (m *Memory) SetClock(now func() time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = now
}

func (m *Memory) OpenLogical(_ context.Context, tenant, intent string) (Logical, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.byPair[[2]string{tenant, intent}]; ok {
		return copyLogical(m.logical[id]), nil
	}
	l := Logical{ID: uuid.NewString(), Tenant: tenant, Intent: intent}
	m.logical[l.ID] = l
	m.byPair[[2]string{tenant, intent}] = l.ID
	return copyLogical(l), nil
}

func (m *Memory) GetLogical(_ context.Context, tenant, id string) (Logical, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logical[id]
	if !ok || l.Tenant != tenant {
		return Logical{}, fmt.Errorf("logical session %s: %w", id, ErrNotFound)
	}
	return copyLogical(l), nil
}

func (m *Memory) BindLogical(_ context.Context, tenant, id string, b Binding) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logical[id]
	if !ok || l.Tenant != tenant {
		return fmt.Errorf("logical session %s: %w", id, ErrNotFound)
	}
	l.Binding = &b
	m.logical[id] = l
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
	m.mu.Lock()
	defer m.mu.Unlock()
	// A ref is only ever minted for the tenant's own logical session, so a
	// transport can never be handed a name for someone else's.
	if l, ok := m.logical[logicalID]; !ok || l.Tenant != tenant {
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
	if ref, ok := tr.byID[logicalID]; ok {
		return ref, nil
	}
	ref := "s" + strconv.Itoa(len(tr.byRef))
	tr.byRef[ref] = logicalID
	tr.byID[logicalID] = ref
	return ref, nil
}

func (m *Memory) ResolveRef(_ context.Context, transport, tenant, ref string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tr := m.refs[transport]
	if tr == nil || tr.tenant != tenant {
		return "", fmt.Errorf("logical_session_ref %q: %w", ref, ErrNotFound)
	}
	id, ok := tr.byRef[ref]
	if !ok {
		return "", fmt.Errorf("logical_session_ref %q: %w", ref, ErrNotFound)
	}
	return id, nil
}

func (m *Memory) PutExecute(_ context.Context, e Execute) error {
	c, err := clone(e)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.LastUsed.IsZero() {
		c.LastUsed = m.now()
	}
	m.execs[c.Key()] = c
	return nil
}

func (m *Memory) GetExecute(_ context.Context, tenant, promptHash, id string) (Execute, error) {
	m.mu.Lock()
	k := Binding{PromptHash: promptHash, SessionID: id}
	e, ok := m.execs[k]
	if !ok || e.Tenant != tenant {
		m.mu.Unlock()
		return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrNotFound)
	}
	now := m.now()
	if now.Sub(e.LastUsed) > m.ttl {
		delete(m.execs, k)
		onExpire := m.OnExpire
		m.mu.Unlock()
		if onExpire != nil {
			onExpire(e)
		}
		return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrExpired)
	}
	e.LastUsed = now
	m.execs[k] = e
	m.mu.Unlock()
	return clone(e)
}

// FindReusable picks, among the tenant's live sessions with this key, the
// most recently used one (ties broken by key, so the answer does not depend
// on map order). Expired candidates met on the way are dropped and reported
// to OnExpire rather than shadowing a live one.
func (m *Memory) FindReusable(_ context.Context, tenant, reuseKey string) (Execute, error) {
	m.mu.Lock()
	now := m.now()
	var expired []Execute
	var best Execute
	found := false
	for k, e := range m.execs {
		if e.Tenant != tenant || e.ReuseKey != reuseKey {
			continue
		}
		if now.Sub(e.LastUsed) > m.ttl {
			delete(m.execs, k)
			expired = append(expired, e)
			continue
		}
		if !found || e.LastUsed.After(best.LastUsed) || (e.LastUsed.Equal(best.LastUsed) && lessKey(k, best.Key())) {
			best, found = e, true
		}
	}
	if found {
		best.LastUsed = now
		m.execs[best.Key()] = best
	}
	onExpire := m.OnExpire
	m.mu.Unlock()
	if onExpire != nil {
		for _, e := range expired {
			onExpire(e)
		}
	}
	if !found {
		return Execute{}, fmt.Errorf("reusable execute session: %w", ErrNotFound)
	}
	return clone(best)
}

func lessKey(a, b Binding) bool {
	if a.PromptHash != b.PromptHash {
		return a.PromptHash < b.PromptHash
	}
	return a.SessionID < b.SessionID
}

func (m *Memory) NextSeq(_ context.Context, tenant, scope, counter string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [3]string{tenant, scope, counter}
	m.seqs[k]++
	return m.seqs[k], nil
}

func (m *Memory) PutRun(_ context.Context, r Run) error {
	c, err := clone(r)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := Binding{PromptHash: c.PromptHash, SessionID: c.SessionID}
	// Storing a run again (e.g. a retried write) replaces it; a duplicate
	// would show twice in ListRuns.
	if i := slices.IndexFunc(m.runs[b], func(r Run) bool { return r.RunID == c.RunID && r.Tenant == c.Tenant }); i >= 0 {
		m.runs[b][i] = c
	} else {
		m.runs[b] = append(m.runs[b], c)
	}
	scope := c.LogicalID
	if scope == "" {
		scope = c.SessionID
	}
	k := [2]string{c.Tenant, scope}
	if m.runIdx[k] == nil {
		m.runIdx[k] = map[int]runKey{}
	}
	m.runIdx[k][c.N] = runKey{b: b, runID: c.RunID}
	// Keep the newest MaxRunsPerScope: an agent looping on plasm_run must
	// not grow the process without bound. Older artifacts read as not found.
	if len(m.runIdx[k]) > MaxRunsPerScope {
		oldest := c.N
		for n := range m.runIdx[k] {
			oldest = min(oldest, n)
		}
		old := m.runIdx[k][oldest]
		delete(m.runIdx[k], oldest)
		m.runs[old.b] = slices.DeleteFunc(m.runs[old.b], func(r Run) bool { return r.RunID == old.runID })
		if len(m.runs[old.b]) == 0 {
			delete(m.runs, old.b)
		}
	}
	return nil
}

func (m *Memory) GetRun(_ context.Context, tenant, promptHash, sessionID, runID string) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.getRunLocked(tenant, Binding{PromptHash: promptHash, SessionID: sessionID}, runID)
}

func (m *Memory) getRunLocked(tenant string, b Binding, runID string) (Run, error) {
	for _, r := range m.runs[b] {
		if r.RunID == runID && r.Tenant == tenant {
			return clone(r)
		}
	}
	return Run{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
}

func (m *Memory) GetRunByIndex(_ context.Context, tenant, scope string, n int) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rk, ok := m.runIdx[[2]string{tenant, scope}][n]
	if !ok {
		return Run{}, fmt.Errorf("run r/%d: %w", n, ErrNotFound)
	}
	return m.getRunLocked(tenant, rk.b, rk.runID)
}

func (m *Memory) ListRuns(_ context.Context, tenant, promptHash, sessionID string) ([]Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Run
	for _, r := range m.runs[Binding{PromptHash: promptHash, SessionID: sessionID}] {
		if r.Tenant == tenant {
			c, err := clone(r)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Run) int { return a.N - b.N })
	return out, nil
}

func (m *Memory) PutPage(_ context.Context, p Page) error {
	c, err := clone(p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{c.Tenant, c.Scope}
	if m.pages[k] == nil {
		m.pages[k] = map[int]Page{}
	}
	m.pages[k][c.N] = c
	if len(m.pages[k]) > MaxPagesPerScope {
		oldest := c.N
		for n := range m.pages[k] {
			oldest = min(oldest, n)
		}
		delete(m.pages[k], oldest)
	}
	return nil
}

func (m *Memory) GetPage(_ context.Context, tenant, scope string, n int) (Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pages[[2]string{tenant, scope}][n]
	if !ok {
		return Page{}, fmt.Errorf("paging handle %d: %w", n, ErrNotFound)
	}
	return clone(p)
}

// clone deep-copies a value through JSON, the same path a networked store
// takes, so tests of the in-memory store also prove values serialise.
func clone[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("session store: encode: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("session store: decode: %w", err)
	}
	return out, nil
}
