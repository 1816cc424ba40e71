package session

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
)

// Runs and pages in the memory store are kept as the JSON document a
// networked store would hold: encoded once when written (which also gives
// the size the run budget counts) and decoded only when read. A run is
// written on every run and usually never read back, so keeping the
// document rather than a decoded copy saves a decode per run; and a
// document cannot alias anything the caller holds.

// storedRun is one run as the memory store keeps it: its JSON and the
// fields lookups, ordering and eviction need.
type storedRun struct {
	scope string // runScope of the run
	n     int
	seq   uint64 // order first stored, for ListRuns ties
	doc   []byte // the Run, encoded
}

// runRef names a run within its execute session.
type runRef struct {
	tenant, runID string
}

// runIndex maps a scope's short indexes (r/N) to runs, keeping the
// indexes in ascending order so the oldest one is found without a scan.
type runIndex struct {
	byN map[int]runKey
	ns  []int // the keys of byN, ascending
}

func (x *runIndex) get(n int) (runKey, bool) {
	rk, ok := x.byN[n]
	return rk, ok
}

func (x *runIndex) set(n int, rk runKey) {
	if _, ok := x.byN[n]; !ok {
		// Runs are numbered by NextSeq, so this is nearly always an append.
		i, _ := slices.BinarySearch(x.ns, n)
		x.ns = slices.Insert(x.ns, i, n)
	}
	x.byN[n] = rk
}

func (x *runIndex) del(n int) {
	if _, ok := x.byN[n]; !ok {
		return
	}
	delete(x.byN, n)
	if i, ok := slices.BinarySearch(x.ns, n); ok {
		x.ns = slices.Delete(x.ns, i, i+1)
	}
}

func runScope(r *Run) string {
	if r.LogicalID != "" {
		return r.LogicalID
	}
	return r.SessionID
}

func (m *Memory) PutRun(_ context.Context, r Run) error {
	doc, err := encodeDoc[Run](r)
	if err != nil {
		return err
	}
	size := int64(len(doc))
	// The index is keyed by the fields as they read back from the
	// document, as it was when the store kept a decoded copy.
	tenant, scope := jsonText(r.Tenant), jsonText(runScope(&r))
	b := Binding{PromptHash: jsonText(r.PromptHash), SessionID: jsonText(r.SessionID)}
	rk := runKey{b: b, runID: jsonText(r.RunID)}
	now := m.lock()
	defer m.unlock()
	if err := m.admitRunLocked(tenant, size); err != nil {
		return err
	}
	// Storing a run again (e.g. a retried write) replaces it, keeping its
	// place in ListRuns; a duplicate would show twice there. The document
	// is replaced, never changed in place.
	byRef := m.runs[b]
	if byRef == nil {
		byRef = map[runRef]*storedRun{}
		m.runs[b] = byRef
	}
	ref := runRef{tenant: tenant, runID: rk.runID}
	if old := byRef[ref]; old != nil {
		byRef[ref] = &storedRun{scope: scope, n: r.N, seq: old.seq, doc: doc}
	} else {
		m.runSeq++
		byRef[ref] = &storedRun{scope: scope, n: r.N, seq: m.runSeq, doc: doc}
	}
	m.touchScopeLocked(tenant, scope, now)
	k := [2]string{tenant, scope}
	idx := m.runIdx[k]
	if idx == nil {
		idx = &runIndex{byN: map[int]runKey{}}
		m.runIdx[k] = idx
	}
	// A different run under the same r/N would otherwise be unreachable
	// by index yet never evicted.
	if old, ok := idx.get(r.N); ok && old != rk {
		m.deleteRunLocked(tenant, old)
	}
	idx.set(r.N, rk)
	m.bookRunLocked(tenant, &runItem{key: rk, scope: k, n: r.N, size: size})
	// Keep the newest MaxRunsPerScope: an agent looping on plasm_run must
	// not grow the process without bound. Older artifacts read as not found.
	if len(idx.byN) > MaxRunsPerScope {
		oldest := idx.ns[0]
		old := idx.byN[oldest]
		idx.del(oldest)
		m.deleteRunLocked(tenant, old)
	}
	return nil
}

func (m *Memory) deleteRunLocked(tenant string, rk runKey) {
	m.unbookRunLocked(tenant, rk)
	byRef := m.runs[rk.b]
	delete(byRef, runRef{tenant: tenant, runID: rk.runID})
	if len(byRef) == 0 {
		delete(m.runs, rk.b)
	}
}

func (m *Memory) GetRun(_ context.Context, tenant, promptHash, sessionID, runID string) (Run, error) {
	now := m.lock()
	sr := m.runs[Binding{PromptHash: promptHash, SessionID: sessionID}][runRef{tenant: tenant, runID: runID}]
	if sr != nil {
		m.touchScopeLocked(tenant, sr.scope, now)
	}
	m.unlock()
	if sr == nil {
		return Run{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	return decodeDoc[Run](m.unmarshal, sr.doc)
}

func (m *Memory) GetRunByIndex(_ context.Context, tenant, scope string, n int) (Run, error) {
	now := m.lock()
	var sr *storedRun
	if idx := m.runIdx[[2]string{tenant, scope}]; idx != nil {
		if rk, ok := idx.get(n); ok {
			sr = m.runs[rk.b][runRef{tenant: tenant, runID: rk.runID}]
			if sr != nil {
				m.touchScopeLocked(tenant, scope, now)
			}
		}
	}
	m.unlock()
	if sr == nil {
		return Run{}, fmt.Errorf("run r/%d: %w", n, ErrNotFound)
	}
	return decodeDoc[Run](m.unmarshal, sr.doc)
}

func (m *Memory) ListRuns(_ context.Context, tenant, promptHash, sessionID string) ([]Run, error) {
	m.lock()
	var found []*storedRun
	for ref, sr := range m.runs[Binding{PromptHash: promptHash, SessionID: sessionID}] {
		if ref.tenant == tenant {
			found = append(found, sr)
		}
	}
	m.unlock()
	slices.SortFunc(found, func(a, b *storedRun) int { return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.seq, b.seq)) })
	var out []Run
	for _, sr := range found {
		r, err := decodeDoc[Run](m.unmarshal, sr.doc)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (m *Memory) PutPage(_ context.Context, p Page) error {
	doc, err := encodeDoc[Page](p)
	if err != nil {
		return err
	}
	tenant, scope := jsonText(p.Tenant), jsonText(p.Scope)
	now := m.lock()
	defer m.unlock()
	m.touchScopeLocked(tenant, scope, now)
	k := [2]string{tenant, scope}
	if m.pages[k] == nil {
		m.pages[k] = map[int][]byte{}
	}
	m.pages[k][p.N] = doc
	if len(m.pages[k]) > MaxPagesPerScope {
		oldest := p.N
		for n := range m.pages[k] {
			oldest = min(oldest, n)
		}
		delete(m.pages[k], oldest)
		m.unbookPageLocked(tenant, pageKey{scope, oldest})
	}
	m.bookPageLocked(tenant, scope, p.N)
	return nil
}

func (m *Memory) GetPage(_ context.Context, tenant, scope string, n int) (Page, error) {
	now := m.lock()
	doc, ok := m.pages[[2]string{tenant, scope}][n]
	if ok {
		m.touchScopeLocked(tenant, scope, now)
	}
	m.unlock()
	if !ok {
		return Page{}, fmt.Errorf("paging handle %d: %w", n, ErrNotFound)
	}
	return decodeDoc[Page](m.unmarshal, doc)
}

// maxDecodeDepth is how deeply encoding/json's decoder nests arrays and
// objects before it refuses a document ("exceeded max depth").
const maxDecodeDepth = 10000

// encodeDoc encodes a value the way a networked store stores it. A
// document the decoder would refuse is refused here, with the decoder's
// error, so a write that succeeds can always be read back.
//
// json.Marshal only writes valid JSON (it validates what Marshalers
// return and the text of json.Number), so the one thing the decoder can
// refuse is nesting deeper than maxDecodeDepth, which needs more than
// twice that many bytes of brackets. Only a document that long is scanned
// for its depth (json.Valid would cost as much as the encoding), and only
// one too deep pays for a full decode, to report the decoder's own error.
func encodeDoc[T any](v T) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("session store: encode: %w", err)
	}
	if len(b) > 2*maxDecodeDepth && nestingDepth(b) > maxDecodeDepth {
		if _, err := decodeDoc[T](abi.Unmarshal, b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// nestingDepth returns how deeply arrays and objects nest in b, which must
// be valid JSON: brackets inside strings are skipped, and a string ends at
// the first quote not escaped by a backslash.
func nestingDepth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++ // the escaped byte
				}
			}
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// decodeDoc decodes a stored document into a fresh value. Numbers keep
// their text (json.Number): a stored row id or a paging variable above
// 2^53 must come back exact.
func decodeDoc[T any](unmarshal func([]byte, any) error, b []byte) (T, error) {
	var out T
	if err := unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("session store: decode: %w", err)
	}
	return out, nil
}

// clone deep-copies a value through JSON, the same path a networked store
// takes, so tests of the in-memory store also prove values serialise.
func clone[T any](v T) (T, error) {
	b, err := encodeDoc[T](v)
	if err != nil {
		var zero T
		return zero, err
	}
	return decodeDoc[T](abi.Unmarshal, b)
}

// jsonText returns s as it reads back after a JSON round trip:
// encoding/json writes each byte of invalid UTF-8 as U+FFFD.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		out = append(out, r) // RuneError for an invalid byte
		i += size
	}
	return string(out)
}
