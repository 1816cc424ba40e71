package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

var _ Store = (*Memory)(nil)

var bg = context.Background()

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newStore(t *testing.T, ttl time.Duration) (*Memory, *clock) {
	t.Helper()
	m := NewMemory(ttl)
	c := &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	m.SetClock(c.Now)
	return m, c
}

// must unwraps a store call that the test expects to succeed; a failure
// panics, which fails the test with the error and its stack.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

func TestOpenLogical(t *testing.T) {
	m, _ := newStore(t, 0)
	a1 := must(m.OpenLogical(bg, "A", "triage issues"))
	a2 := must(m.OpenLogical(bg, "A", "triage issues"))
	if a1.ID == "" || a1.ID != a2.ID {
		t.Fatalf("same (tenant, intent) gave %q and %q", a1.ID, a2.ID)
	}
	if a1.Tenant != "A" || a1.Intent != "triage issues" || a1.Binding != nil {
		t.Fatalf("logical %+v", a1)
	}
	b := must(m.OpenLogical(bg, "B", "triage issues"))
	other := must(m.OpenLogical(bg, "A", "review PRs"))
	if b.ID == a1.ID || other.ID == a1.ID || b.ID == other.ID {
		t.Fatal("distinct tenants or intents share a logical session")
	}

	got := must(m.GetLogical(bg, "A", a1.ID))
	if !reflect.DeepEqual(got, a1) {
		t.Fatalf("GetLogical = %+v, want %+v", got, a1)
	}
	_, err := m.GetLogical(bg, "B", a1.ID)
	wantErr(t, err, ErrNotFound)
	_, err = m.GetLogical(bg, "A", "nope")
	wantErr(t, err, ErrNotFound)

	wantErr(t, m.BindLogical(bg, "B", a1.ID, Binding{PromptHash: "h", SessionID: "x"}), ErrNotFound)
	if err := m.BindLogical(bg, "A", a1.ID, Binding{PromptHash: "h", SessionID: "x"}); err != nil {
		t.Fatal(err)
	}
	got = must(m.GetLogical(bg, "A", a1.ID))
	if got.Binding == nil || *got.Binding != (Binding{PromptHash: "h", SessionID: "x"}) {
		t.Fatalf("binding %+v", got.Binding)
	}
	got.Binding.SessionID = "mutated"
	again := must(m.OpenLogical(bg, "A", "triage issues"))
	if again.Binding.SessionID != "x" {
		t.Fatal("a returned Logical shares its binding with the store")
	}
}

func TestRefs(t *testing.T) {
	m, _ := newStore(t, 0)
	l := func(tenant, intent string) string { return must(m.OpenLogical(bg, tenant, intent)).ID }
	a1, a2, a3 := l("A", "one"), l("A", "two"), l("A", "three")
	b1 := l("B", "one")

	steps := []struct {
		transport, tenant, id string
		want                  string
		err                   error
	}{
		{"t1", "A", a1, "s0", nil},
		{"t1", "A", a2, "s1", nil},
		{"t1", "A", a1, "s0", nil}, // stable
		{"t2", "A", a2, "s0", nil}, // numbering is per transport
		{"t1", "A", a3, "s2", nil},
		{"t2", "A", a1, "s1", nil},
		{"t1", "B", b1, "", ErrNotFound}, // t1 is bound to tenant A
		{"t3", "B", a1, "", ErrNotFound}, // another tenant's logical id
		{"t3", "B", "no-such-id", "", ErrNotFound},
		{"t3", "B", b1, "s0", nil},
	}
	for i, s := range steps {
		got, err := m.RefFor(bg, s.transport, s.tenant, s.id)
		if s.err != nil {
			if !errors.Is(err, s.err) {
				t.Fatalf("step %d: err = %v, want %v", i, err, s.err)
			}
			continue
		}
		if err != nil || got != s.want {
			t.Fatalf("step %d: RefFor(%s, %s) = %q, %v; want %q", i, s.transport, s.tenant, got, err, s.want)
		}
	}

	resolves := []struct {
		transport, tenant, ref string
		want                   string
	}{
		{"t1", "A", "s0", a1}, {"t1", "A", "s1", a2}, {"t1", "A", "s2", a3},
		{"t2", "A", "s0", a2}, {"t2", "A", "s1", a1}, {"t3", "B", "s0", b1},
		{"t1", "A", "s3", ""}, {"t1", "B", "s0", ""}, {"t3", "A", "s0", ""}, {"nope", "A", "s0", ""}, {"t1", "A", "", ""},
	}
	for _, r := range resolves {
		got, err := m.ResolveRef(bg, r.transport, r.tenant, r.ref)
		if r.want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("ResolveRef(%s, %s, %q) = %q, %v; want ErrNotFound", r.transport, r.tenant, r.ref, got, err)
			}
			continue
		}
		if err != nil || got != r.want {
			t.Errorf("ResolveRef(%s, %s, %q) = %q, %v; want %q", r.transport, r.tenant, r.ref, got, err, r.want)
		}
	}
}

func execute(tenant, hash, id, reuse string) Execute {
	return Execute{
		Tenant: tenant, PromptHash: hash, ID: id, ReuseKey: reuse,
		Entries: []string{"github", "linear"},
		Digests: map[string]string{"github": "d1", "linear": "d2"},
		Symbols: symbol.Map{
			Entities: []symbol.Entity{{EntryID: "github", Name: "Repo"}},
			Methods:  []symbol.Method{{EntryID: "github", Entity: "Repo", Label: "list", Capability: "repo_query"}},
		},
		Exposure: teaching.Exposure{Entities: []teaching.ExposedEntity{{EntryID: "github", Entity: "Repo", Seeded: true}}},
		Prompt:   "e1 Repo",
		Created:  time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

func TestExecuteExpiry(t *testing.T) {
	const ttl = 10 * time.Minute
	m, c := newStore(t, ttl)
	var expired []Execute
	var mu sync.Mutex
	m.OnExpire = func(e Execute) { mu.Lock(); expired = append(expired, e); mu.Unlock() }
	if err := m.PutExecute(bg, execute("A", "h1", "x1", "k")); err != nil {
		t.Fatal(err)
	}

	_, err := m.GetExecute(bg, "B", "h1", "x1")
	wantErr(t, err, ErrNotFound)
	_, err = m.GetExecute(bg, "A", "h1", "other")
	wantErr(t, err, ErrNotFound)

	// Each use restarts the idle clock.
	for range 3 {
		c.Advance(ttl - time.Second)
		got := must(m.GetExecute(bg, "A", "h1", "x1"))
		if !got.LastUsed.Equal(c.Now()) {
			t.Fatalf("LastUsed %v, want %v", got.LastUsed, c.Now())
		}
	}
	// Another tenant's lookups neither refresh nor expire it.
	c.Advance(ttl - time.Second)
	_, err = m.GetExecute(bg, "B", "h1", "x1")
	wantErr(t, err, ErrNotFound)
	must(m.GetExecute(bg, "A", "h1", "x1"))

	c.Advance(ttl + time.Second)
	_, err = m.GetExecute(bg, "A", "h1", "x1")
	wantErr(t, err, ErrExpired)
	// Asked again it is still expired (it was ErrNotFound, 404 after 410).
	c.Advance(ttl - time.Second)
	_, err = m.GetExecute(bg, "A", "h1", "x1")
	wantErr(t, err, ErrExpired)
	_, err = m.GetExecute(bg, "B", "h1", "x1")
	wantErr(t, err, ErrNotFound)
	// One TTL after it expired the tombstone goes with the next sweep.
	c.Advance(2 * time.Second)
	_, err = m.GetExecute(bg, "A", "h1", "x1")
	wantErr(t, err, ErrNotFound)
	mu.Lock()
	defer mu.Unlock()
	if len(expired) != 1 || expired[0].ID != "x1" || expired[0].Tenant != "A" {
		t.Fatalf("OnExpire calls: %+v", expired)
	}
}

func TestPutExecuteLastUsed(t *testing.T) {
	m, c := newStore(t, time.Minute)
	e := execute("A", "h", "x", "k")
	e.LastUsed = c.Now().Add(-2 * time.Minute) // already idle past the TTL
	if err := m.PutExecute(bg, e); err != nil {
		t.Fatal(err)
	}
	_, err := m.GetExecute(bg, "A", "h", "x")
	wantErr(t, err, ErrExpired)

	if err := m.PutExecute(bg, execute("A", "h", "y", "k")); err != nil {
		t.Fatal(err)
	}
	got := must(m.GetExecute(bg, "A", "h", "y"))
	if !got.LastUsed.Equal(c.Now()) {
		t.Fatalf("zero LastUsed not stamped: %v", got.LastUsed)
	}
}

// TestExecuteCopies: neither the value handed to PutExecute nor the ones
// returned share memory with the store.
func TestExecuteCopies(t *testing.T) {
	m, _ := newStore(t, 0)
	in := execute("A", "h", "x", "k")
	if err := m.PutExecute(bg, in); err != nil {
		t.Fatal(err)
	}
	in.Symbols.Entities[0].Name = "Mutated"
	in.Digests["github"] = "mutated"
	in.Entries[0] = "mutated"

	out := must(m.GetExecute(bg, "A", "h", "x"))
	out.Symbols.Entities[0].Name = "Mutated"
	out.Symbols.Methods = append(out.Symbols.Methods[:0], symbol.Method{Label: "evil"})
	out.Digests["github"] = "mutated"
	out.Entries[1] = "mutated"
	out.Exposure.Entities[0].Seeded = false

	again := must(m.GetExecute(bg, "A", "h", "x"))
	want := execute("A", "h", "x", "k")
	want.LastUsed = again.LastUsed
	if !reflect.DeepEqual(again, want) {
		t.Fatalf("store changed through a copy:\n got %+v\nwant %+v", again, want)
	}
	reused := must(m.FindReusable(bg, "A", "k"))
	reused.Symbols.Entities[0].Name = "Mutated"
	if again := must(m.GetExecute(bg, "A", "h", "x")); again.Symbols.Entities[0].Name != "Repo" {
		t.Fatal("FindReusable returned shared memory")
	}
}

func TestFindReusable(t *testing.T) {
	const ttl = 10 * time.Minute
	m, c := newStore(t, ttl)
	var expired []string
	m.OnExpire = func(e Execute) { expired = append(expired, e.ID) }

	_, err := m.FindReusable(bg, "A", "k")
	wantErr(t, err, ErrNotFound)

	put := func(e Execute) {
		t.Helper()
		if err := m.PutExecute(bg, e); err != nil {
			t.Fatal(err)
		}
	}
	put(execute("A", "h", "old", "k"))
	c.Advance(ttl / 2)
	put(execute("A", "h", "new", "k"))
	put(execute("A", "h", "other-key", "k2"))
	put(execute("B", "h", "b", "k"))

	if got := must(m.FindReusable(bg, "A", "k")); got.ID != "new" {
		t.Fatalf("FindReusable = %s, want the most recently used", got.ID)
	}
	if got := must(m.FindReusable(bg, "B", "k")); got.ID != "b" {
		t.Fatalf("tenant B got %s", got.ID)
	}
	_, err = m.FindReusable(bg, "C", "k")
	wantErr(t, err, ErrNotFound)

	// "old" passes its TTL while "new" (just used) stays live: the expired
	// one is reported and never shadows the live one.
	c.Advance(ttl/2 + time.Second)
	for range 5 {
		if got := must(m.FindReusable(bg, "A", "k")); got.ID != "new" {
			t.Fatalf("FindReusable = %s", got.ID)
		}
	}
	if !reflect.DeepEqual(expired, []string{"old"}) {
		t.Fatalf("expired %v", expired)
	}
	// Finding it counts as use.
	c.Advance(ttl - time.Second)
	must(m.FindReusable(bg, "A", "k"))
	c.Advance(ttl + time.Second)
	_, err = m.FindReusable(bg, "A", "k")
	wantErr(t, err, ErrNotFound)
	// The sweep reports the sessions nobody looked up again ("b",
	// "other-key", in key order) as well.
	if !reflect.DeepEqual(expired, []string{"old", "b", "other-key", "new"}) {
		t.Fatalf("expired %v", expired)
	}
}

func TestNextSeq(t *testing.T) {
	m, _ := newStore(t, 0)
	steps := []struct {
		tenant, scope, counter string
		want                   int
	}{
		{"A", "s1", "run", 1}, {"A", "s1", "run", 2}, {"A", "s1", "page", 1},
		{"A", "s2", "run", 1}, {"B", "s1", "run", 1}, {"A", "s1", "run", 3}, {"B", "s1", "run", 2},
	}
	for _, s := range steps {
		if got := must(m.NextSeq(bg, s.tenant, s.scope, s.counter)); got != s.want {
			t.Fatalf("NextSeq(%s, %s, %s) = %d, want %d", s.tenant, s.scope, s.counter, got, s.want)
		}
	}
}

func run(tenant, logical, hash, session, id string, n int) Run {
	return Run{
		Tenant: tenant, LogicalID: logical, PromptHash: hash, SessionID: session, RunID: id, N: n,
		Program: fmt.Sprintf("e1.list() # %s", id),
		Created: time.Date(2025, 1, 1, 0, 0, n, 0, time.UTC),
		Roots:   []RunRoot{{Label: "r", EntryID: "github", Entity: "Repo", Table: abi.Table{Columns: []string{"id"}, Rows: [][]any{{json.Number(strconv.Itoa(n))}}}, PageHandle: "s0_pg1"}},
	}
}

func TestRuns(t *testing.T) {
	m, _ := newStore(t, 0)
	put := func(r Run) {
		t.Helper()
		if err := m.PutRun(bg, r); err != nil {
			t.Fatal(err)
		}
	}
	// Stored out of order; the logical session spans two execute sessions.
	put(run("A", "L", "h", "x1", "run-2", 2))
	put(run("A", "L", "h", "x1", "run-1", 1))
	put(run("A", "L", "h", "x2", "run-3", 3))
	put(run("A", "", "h", "http1", "run-h1", 1)) // HTTP: scoped by session id
	put(run("B", "LB", "h", "xb", "run-b1", 1))

	byIndex := []struct {
		tenant, scope string
		n             int
		want          string
	}{
		{"A", "L", 1, "run-1"}, {"A", "L", 2, "run-2"}, {"A", "L", 3, "run-3"},
		{"A", "http1", 1, "run-h1"}, {"B", "LB", 1, "run-b1"},
		{"A", "L", 4, ""}, {"B", "L", 1, ""}, {"A", "LB", 1, ""}, {"A", "x1", 1, ""},
	}
	for _, tt := range byIndex {
		got, err := m.GetRunByIndex(bg, tt.tenant, tt.scope, tt.n)
		if tt.want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("GetRunByIndex(%s, %s, %d) = %s, %v; want ErrNotFound", tt.tenant, tt.scope, tt.n, got.RunID, err)
			}
			continue
		}
		if err != nil || got.RunID != tt.want {
			t.Errorf("GetRunByIndex(%s, %s, %d) = %s, %v; want %s", tt.tenant, tt.scope, tt.n, got.RunID, err, tt.want)
		}
	}

	got := must(m.GetRun(bg, "A", "h", "x1", "run-2"))
	if want := run("A", "L", "h", "x1", "run-2", 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("GetRun = %+v, want %+v", got, want)
	}
	for _, k := range [][4]string{{"B", "h", "x1", "run-2"}, {"A", "h", "x2", "run-2"}, {"A", "other", "x1", "run-2"}, {"A", "h", "x1", "nope"}} {
		_, err := m.GetRun(bg, k[0], k[1], k[2], k[3])
		wantErr(t, err, ErrNotFound)
	}

	list := must(m.ListRuns(bg, "A", "h", "x1"))
	if len(list) != 2 || list[0].RunID != "run-1" || list[1].RunID != "run-2" {
		t.Fatalf("ListRuns order: %+v", list)
	}
	if l := must(m.ListRuns(bg, "B", "h", "x1")); len(l) != 0 {
		t.Fatalf("tenant B lists A's runs: %+v", l)
	}

	// Returned runs are copies.
	got.Roots[0].Table.Rows[0][0] = "mutated"
	list[0].Roots[0].Label = "mutated"
	if again := must(m.GetRun(bg, "A", "h", "x1", "run-2")); again.Roots[0].Table.Rows[0][0] != json.Number("2") {
		t.Fatal("GetRun returned shared memory")
	}
	if again := must(m.GetRunByIndex(bg, "A", "L", 1)); again.Roots[0].Label != "r" {
		t.Fatal("ListRuns returned shared memory")
	}

	// Storing a run again replaces it.
	re := run("A", "L", "h", "x1", "run-2", 2)
	re.Program = "rewritten"
	put(re)
	list = must(m.ListRuns(bg, "A", "h", "x1"))
	if len(list) != 2 || list[1].Program != "rewritten" {
		t.Fatalf("re-put run: %+v", list)
	}
}

func TestPages(t *testing.T) {
	m, _ := newStore(t, 0)
	p := Page{Tenant: "A", Scope: "L", N: 1, Continuation: executor.Continuation{
		EntryID: "github", Entity: "Repo", Capability: "repo_query", Columns: []string{"id", "name"},
		Vars: map[string]any{"org": "acme", "per_page": json.Number("30")}, Page: map[string]any{"page": json.Number("2")},
		Filters: []plan.Pred{{Field: "lang", Op: "=", Value: "go"}},
	}}
	if err := m.PutPage(bg, p); err != nil {
		t.Fatal(err)
	}
	got := must(m.GetPage(bg, "A", "L", 1))
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("GetPage = %+v, want %+v", got, p)
	}
	got.Continuation.Vars["org"] = "mutated"
	got.Continuation.Page["page"] = 99.0
	if again := must(m.GetPage(bg, "A", "L", 1)); !reflect.DeepEqual(again, p) {
		t.Fatal("GetPage returned shared memory")
	}
	for _, k := range []struct {
		tenant, scope string
		n             int
	}{{"B", "L", 1}, {"A", "other", 1}, {"A", "L", 2}} {
		_, err := m.GetPage(bg, k.tenant, k.scope, k.n)
		wantErr(t, err, ErrNotFound)
	}
}

func TestValuesThatDoNotSerialise(t *testing.T) {
	m, _ := newStore(t, 0)
	bad := Page{Tenant: "A", Scope: "L", N: 1, Continuation: executor.Continuation{Vars: map[string]any{"f": func() {}}}}
	if err := m.PutPage(bg, bad); err == nil {
		t.Fatal("a value a networked store could not hold was accepted")
	}
	if _, err := m.GetPage(bg, "A", "L", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rejected page stored anyway: %v", err)
	}
}

// TestConcurrent hammers one store from many goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	m, c := newStore(t, time.Hour)
	var expireCalls sync.Map
	m.OnExpire = func(e Execute) {
		if _, dup := expireCalls.LoadOrStore(e.ID, true); dup {
			t.Errorf("OnExpire called twice for %s", e.ID)
		}
	}
	const workers, each = 8, 50
	seqs := make(chan int, workers*each)
	refs := make([]string, workers)
	var wg sync.WaitGroup
	// Every worker holds its ref before worker 0 starts moving the clock,
	// so how the scheduler orders goroutines cannot expire a logical session
	// between opening it and naming it.
	var opened sync.WaitGroup
	opened.Add(workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tenant := []string{"A", "B"}[w%2]
			l, err := m.OpenLogical(bg, tenant, "shared intent")
			if err != nil {
				opened.Done()
				t.Error(err)
				return
			}
			ref, err := m.RefFor(bg, "transport-"+tenant, tenant, l.ID)
			opened.Done()
			if err != nil {
				t.Error(err)
				return
			}
			refs[w] = ref
			if w == 0 {
				opened.Wait()
			}
			for i := range each {
				n, err := m.NextSeq(bg, "A", "scope", "run")
				if err != nil {
					t.Error(err)
					return
				}
				seqs <- n
				id := fmt.Sprintf("x%d-%d", w, i)
				if err := m.PutExecute(bg, execute(tenant, "h", id, "k")); err != nil {
					t.Error(err)
				}
				if _, err := m.GetExecute(bg, tenant, "h", id); err != nil && !errors.Is(err, ErrExpired) && !errors.Is(err, ErrNotFound) {
					t.Error(err)
				}
				if _, err := m.FindReusable(bg, tenant, "k"); err != nil && !errors.Is(err, ErrNotFound) {
					t.Error(err)
				}
				if err := m.PutRun(bg, run(tenant, l.ID, "h", id, id, n)); err != nil {
					t.Error(err)
				}
				if _, err := m.GetRunByIndex(bg, tenant, l.ID, n); err != nil {
					// The clock jumps by hours here, so the logical session
					// may have been idle past the TTL and swept with its
					// runs; any other loss is a bug.
					if !errors.Is(err, ErrNotFound) || must(m.OpenLogical(bg, tenant, "shared intent")).ID == l.ID {
						t.Error(err)
					}
				}
				if _, err := m.ListRuns(bg, tenant, "h", id); err != nil {
					t.Error(err)
				}
				// One worker moves the clock, so execute sessions expire
				// mid-run while the shared logical sessions, used by every
				// worker of their tenant, stay well inside their TTL.
				if w == 0 && i%10 == 0 {
					c.Advance(30 * time.Minute)
				}
			}
		}()
	}
	wg.Wait()
	close(seqs)
	seen := map[int]bool{}
	for n := range seqs {
		if seen[n] {
			t.Fatalf("NextSeq returned %d twice", n)
		}
		seen[n] = true
	}
	if len(seen) != workers*each || !seen[1] || !seen[workers*each] {
		t.Fatalf("NextSeq gave %d distinct values", len(seen))
	}
	for w := range workers {
		if refs[w] != "s0" {
			t.Fatalf("worker %d got ref %q for the shared logical session", w, refs[w])
		}
	}
}

func TestDefaultTTL(t *testing.T) {
	m, c := newStore(t, 0)
	if err := m.PutExecute(bg, execute("A", "h", "x", "k")); err != nil {
		t.Fatal(err)
	}
	c.Advance(29 * time.Minute)
	must(m.GetExecute(bg, "A", "h", "x"))
	c.Advance(31 * time.Minute)
	_, err := m.GetExecute(bg, "A", "h", "x")
	wantErr(t, err, ErrExpired)
}

func TestRetentionBounds(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(time.Hour)
	for n := 1; n <= MaxRunsPerScope+10; n++ {
		if err := m.PutRun(ctx, Run{Tenant: "t", LogicalID: "L", PromptHash: "ph", SessionID: "s", RunID: fmt.Sprint("run-", n), N: n}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.GetRunByIndex(ctx, "t", "L", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the oldest run survived the bound: %v", err)
	}
	if _, err := m.GetRun(ctx, "t", "ph", "s", "run-10"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an evicted run is still readable by id: %v", err)
	}
	if r, err := m.GetRunByIndex(ctx, "t", "L", MaxRunsPerScope+10); err != nil || r.RunID != fmt.Sprint("run-", MaxRunsPerScope+10) {
		t.Fatalf("newest run: %v %v", r, err)
	}
	runs, _ := m.ListRuns(ctx, "t", "ph", "s")
	if len(runs) != MaxRunsPerScope || runs[0].N != 11 {
		t.Fatalf("kept %d runs starting at %d", len(runs), runs[0].N)
	}
	for n := 1; n <= MaxPagesPerScope+1; n++ {
		if err := m.PutPage(ctx, Page{Tenant: "t", Scope: "L", N: n}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.GetPage(ctx, "t", "L", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the oldest page survived the bound: %v", err)
	}
	if _, err := m.GetPage(ctx, "t", "L", MaxPagesPerScope+1); err != nil {
		t.Fatal(err)
	}
}

// Execute.Clone must deep-copy every reference-typed field; a field added
// later without a copy here would alias the store.
func TestExecuteCloneCoversEveryField(t *testing.T) {
	typ := reflect.TypeOf(Execute{})
	copied := map[string]bool{"Entries": true, "Digests": true, "Symbols": true, "Exposure": true}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Struct, reflect.Interface:
			if f.Type == reflect.TypeOf(time.Time{}) {
				continue
			}
			if !copied[f.Name] {
				t.Errorf("Execute.%s (%s) is not deep-copied by Clone", f.Name, f.Type)
			}
		}
	}
	e := Execute{Entries: []string{"a"}, Digests: map[string]string{"a": "d"},
		Symbols: symbol.Map{Entities: []symbol.Entity{{EntryID: "a", Name: "X"}}}}
	c := e.Clone()
	c.Entries[0], c.Digests["a"], c.Symbols.Entities[0].Name = "z", "z", "Z"
	if e.Entries[0] != "a" || e.Digests["a"] != "d" || e.Symbols.Entities[0].Name != "X" {
		t.Fatalf("Clone shares memory: %+v", e)
	}
}
