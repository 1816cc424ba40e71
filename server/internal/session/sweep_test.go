package session

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/executor"
)

// sizes counts every internal map entry, so tests can prove state is gone
// rather than merely unreachable.
func (m *Memory) sizes() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := map[string]int{
		"logical": len(m.logical), "byPair": len(m.byPair), "transports": len(m.refs),
		"execs": len(m.execs), "reuse": len(m.reuse), "tombs": len(m.tombs),
		"seqs": len(m.seqs), "runs": len(m.runs), "runIdx": len(m.runIdx), "pages": len(m.pages),
	}
	for _, tr := range m.refs {
		s["refs"] += len(tr.byRef)
	}
	return s
}

func wantSizes(t *testing.T, m *Memory, want map[string]int) {
	t.Helper()
	got := m.sizes()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d entries, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

type expiries struct {
	mu  sync.Mutex
	ids []string
}

func (e *expiries) record(x Execute) { e.mu.Lock(); e.ids = append(e.ids, x.ID); e.mu.Unlock() }

func (e *expiries) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ids)
}

func TestSweepExecute(t *testing.T) {
	const ttl = 10 * time.Minute
	m, c := newStore(t, ttl)
	var exp expiries
	// OnExpire runs outside the lock: calling back into the store is fine.
	m.OnExpire = func(e Execute) { must(m.NextSeq(bg, "audit", "expired", "n")); exp.record(e) }

	if err := m.PutExecute(bg, execute("A", "h", "idle", "k")); err != nil {
		t.Fatal(err)
	}
	if err := m.PutExecute(bg, execute("B", "h", "live", "k")); err != nil {
		t.Fatal(err)
	}
	// HTTP-scoped state hangs off the execute session id.
	if err := m.PutRun(bg, run("A", "", "h", "idle", "run-1", 1)); err != nil {
		t.Fatal(err)
	}
	if err := m.PutPage(bg, Page{Tenant: "A", Scope: "idle", N: 1}); err != nil {
		t.Fatal(err)
	}
	must(m.NextSeq(bg, "A", "idle", "run"))

	c.Advance(ttl / 2)
	must(m.GetExecute(bg, "B", "h", "live"))
	c.Advance(ttl/2 + time.Second)
	// An unrelated tenant's call sweeps; nobody looks "idle" up again.
	must(m.NextSeq(bg, "C", "elsewhere", "run"))
	if got := exp.get(); !reflect.DeepEqual(got, []string{"idle"}) {
		t.Fatalf("OnExpire calls %v, want [idle]", got)
	}
	wantSizes(t, m, map[string]int{"execs": 1, "reuse": 1, "tombs": 1, "runs": 0, "runIdx": 0, "pages": 0})
	for _, err := range []error{
		func() error { _, err := m.GetRun(bg, "A", "h", "idle", "run-1"); return err }(),
		func() error { _, err := m.GetRunByIndex(bg, "A", "idle", 1); return err }(),
		func() error { _, err := m.GetPage(bg, "A", "idle", 1); return err }(),
	} {
		wantErr(t, err, ErrNotFound)
	}
	if n := must(m.NextSeq(bg, "A", "idle", "run")); n != 1 {
		t.Fatalf("counter of a swept scope continued at %d", n)
	}

	// The tombstone answers the owner, every time, and only the owner.
	_, err := m.GetExecute(bg, "B", "h", "idle")
	wantErr(t, err, ErrNotFound)
	_, err = m.GetExecute(bg, "A", "h", "idle")
	wantErr(t, err, ErrExpired)
	_, err = m.GetExecute(bg, "A", "h", "idle")
	wantErr(t, err, ErrExpired)
	if got := must(m.FindReusable(bg, "B", "k")); got.ID != "live" {
		t.Fatalf("the live session went: %s", got.ID)
	}
	if got := exp.get(); len(got) != 1 {
		t.Fatalf("OnExpire calls %v", got)
	}
}

// TestSweepInterval: sweeps run at most every min(ttl/10, 1m), and an
// unswept expired session is still reported once by the lookup.
func TestSweepInterval(t *testing.T) {
	tests := []struct {
		ttl, every time.Duration
	}{
		{10 * time.Minute, time.Minute},
		{5 * time.Minute, 30 * time.Second},
		{2 * time.Hour, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.ttl.String(), func(t *testing.T) {
			m, c := newStore(t, tc.ttl)
			var exp expiries
			m.OnExpire = exp.record
			must(m.NextSeq(bg, "A", "s", "n")) // first call sweeps
			e := execute("A", "h", "stale", "k")
			e.LastUsed = c.Now().Add(-2 * tc.ttl)
			if err := m.PutExecute(bg, e); err != nil {
				t.Fatal(err)
			}
			c.Advance(tc.every - time.Second)
			must(m.NextSeq(bg, "A", "s", "n"))
			if got := exp.get(); len(got) != 0 {
				t.Fatalf("swept again within %v: %v", tc.every, got)
			}
			c.Advance(time.Second)
			must(m.NextSeq(bg, "A", "s", "n"))
			if got := exp.get(); !reflect.DeepEqual(got, []string{"stale"}) {
				t.Fatalf("OnExpire calls %v", got)
			}
		})
	}
}

func TestSweepLogical(t *testing.T) {
	const ttl = 10 * time.Minute
	m, c := newStore(t, ttl)
	open := func(tenant, intent string) string { return must(m.OpenLogical(bg, tenant, intent)).ID }
	put := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	idle, live := open("A", "idle"), open("A", "live")
	put(m.PutExecute(bg, execute("A", "h", "x-idle", "k-idle")))
	put(m.PutExecute(bg, execute("A", "h", "x-live", "k-live")))
	put(m.BindLogical(bg, "A", idle, Binding{PromptHash: "h", SessionID: "x-idle"}))
	put(m.BindLogical(bg, "A", live, Binding{PromptHash: "h", SessionID: "x-live"}))
	for _, step := range []struct{ transport, id, want string }{
		{"t1", idle, "s0"}, {"t1", live, "s1"}, {"t2", idle, "s0"}, {"stateless:A", idle, "s0"},
	} {
		if got := must(m.RefFor(bg, step.transport, "A", step.id)); got != step.want {
			t.Fatalf("RefFor(%s) = %s, want %s", step.transport, got, step.want)
		}
	}
	for _, l := range []string{idle, live} {
		put(m.PutRun(bg, run("A", l, "h", "x-"+map[string]string{idle: "idle", live: "live"}[l], "run-"+l, 1)))
		put(m.PutPage(bg, Page{Tenant: "A", Scope: l, N: 1}))
		must(m.NextSeq(bg, "A", l, "run"))
	}
	// Tenant B's unbound session stays in use throughout.
	other := open("B", "other")

	// The live session and B are used every few minutes; "idle" is not.
	tick := func(d time.Duration) {
		for end := c.Now().Add(d); c.Now().Before(end); {
			c.Advance(time.Minute)
			must(m.ResolveRef(bg, "t1", "A", "s1"))
			must(m.GetExecute(bg, "A", "h", "x-live"))
			must(m.GetLogical(bg, "B", other))
		}
	}
	tick(ttl + 2*time.Minute)
	// x-idle has expired, but the logical session outlives its binding by a
	// TTL, so an agent coming back recovers into the same logical id.
	if got := must(m.ResolveRef(bg, "t1", "A", "s0")); got != idle {
		t.Fatalf("s0 names %s", got)
	}
	tick(ttl + 2*time.Minute)

	notFound := map[string]func() error{
		"ref t1/s0":     func() error { _, err := m.ResolveRef(bg, "t1", "A", "s0"); return err },
		"ref t2/s0":     func() error { _, err := m.ResolveRef(bg, "t2", "A", "s0"); return err },
		"ref stateless": func() error { _, err := m.ResolveRef(bg, "stateless:A", "A", "s0"); return err },
		"logical":       func() error { _, err := m.GetLogical(bg, "A", idle); return err },
		"bind":          func() error { return m.BindLogical(bg, "A", idle, Binding{}) },
		"run by index":  func() error { _, err := m.GetRunByIndex(bg, "A", idle, 1); return err },
		"run by id":     func() error { _, err := m.GetRun(bg, "A", "h", "x-idle", "run-"+idle); return err },
		"page":          func() error { _, err := m.GetPage(bg, "A", idle, 1); return err },
	}
	for name, f := range notFound {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after removal: %v, want ErrNotFound", name, err)
		}
	}
	if got := must(m.ResolveRef(bg, "t1", "A", "s1")); got != live {
		t.Fatalf("s1 names %s", got)
	}
	must(m.GetRunByIndex(bg, "A", live, 1))
	must(m.GetPage(bg, "A", live, 1))
	must(m.GetLogical(bg, "B", other))
	// t2 and stateless:A lost their only ref and went idle: dropped too.
	wantSizes(t, m, map[string]int{
		"logical": 2, "byPair": 2, "transports": 1, "refs": 1, "execs": 1, "reuse": 1,
		"seqs": 1, "runs": 1, "runIdx": 1, "pages": 1,
	})

	// Refs are never renumbered: s0 stays unknown on t1.
	again := open("A", "idle")
	if again == idle {
		t.Fatal("a removed logical session came back under its old id")
	}
	if got := must(m.RefFor(bg, "t1", "A", again)); got != "s2" {
		t.Fatalf("RefFor after removal = %s, want s2", got)
	}
	if n := must(m.NextSeq(bg, "A", idle, "run")); n != 1 {
		t.Fatalf("counter of a removed session continued at %d", n)
	}
}

// TestSweepUnboundLogical: a session opened but never bound goes after a
// TTL without use; using it keeps it.
func TestSweepUnboundLogical(t *testing.T) {
	const ttl = 10 * time.Minute
	m, c := newStore(t, ttl)
	kept := must(m.OpenLogical(bg, "A", "kept")).ID
	gone := must(m.OpenLogical(bg, "A", "gone")).ID
	for range 3 {
		c.Advance(ttl / 2)
		must(m.GetLogical(bg, "A", kept))
	}
	_, err := m.GetLogical(bg, "A", gone)
	wantErr(t, err, ErrNotFound)
	wantSizes(t, m, map[string]int{"logical": 1, "byPair": 1})
}

func TestForgetTransport(t *testing.T) {
	m, _ := newStore(t, 0)
	l1 := must(m.OpenLogical(bg, "A", "one")).ID
	l2 := must(m.OpenLogical(bg, "A", "two")).ID
	must(m.RefFor(bg, "t1", "A", l1))
	must(m.RefFor(bg, "t1", "A", l2))
	must(m.RefFor(bg, "t2", "A", l2))

	if err := m.ForgetTransport(bg, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := m.ForgetTransport(bg, "never-seen"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"s0", "s1"} {
		_, err := m.ResolveRef(bg, "t1", "A", ref)
		wantErr(t, err, ErrNotFound)
	}
	if got := must(m.ResolveRef(bg, "t2", "A", "s0")); got != l2 {
		t.Fatalf("another transport's ref changed: %s", got)
	}
	must(m.GetLogical(bg, "A", l1)) // the sessions themselves live on
	m.mu.Lock()
	_, still := m.logical[l1].transports["t1"]
	m.mu.Unlock()
	if still {
		t.Fatal("the logical session still points at the forgotten transport")
	}
	// A fresh transport with the same name numbers from s0 again.
	if got := must(m.RefFor(bg, "t1", "A", l2)); got != "s0" {
		t.Fatalf("RefFor on a forgotten transport = %s", got)
	}
	wantSizes(t, m, map[string]int{"transports": 2, "refs": 2})
}

// TestFindReusableMany checks the (tenant, reuse key) index against a brute
// force over many sessions, live and expired, across tenants and keys.
func TestFindReusableMany(t *testing.T) {
	const ttl = 10 * time.Minute
	m, c := newStore(t, ttl)
	var exp expiries
	m.OnExpire = exp.record
	must(m.NextSeq(bg, "A", "s", "n")) // take the first sweep now
	rng := rand.New(rand.NewPCG(1, 2))
	tenants, keys := []string{"A", "B", "C"}, 20
	var all []Execute
	for i := range 600 {
		e := execute(tenants[rng.IntN(len(tenants))], fmt.Sprintf("h%d", rng.IntN(3)), fmt.Sprintf("x%03d", i), fmt.Sprintf("k%d", rng.IntN(keys)))
		// Whole minutes, so ties (broken by key) occur.
		e.LastUsed = c.Now().Add(-time.Duration(rng.IntN(20)) * time.Minute)
		if err := m.PutExecute(bg, e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	// Re-putting a session under another key moves it in the index.
	moved := all[0]
	moved.ReuseKey = "moved"
	moved.LastUsed = c.Now()
	if err := m.PutExecute(bg, moved); err != nil {
		t.Fatal(err)
	}
	all[0] = moved

	var wantExpired []string
	for _, tenant := range append(tenants, "D") {
		for k := range keys + 1 {
			key := fmt.Sprintf("k%d", k)
			if k == keys {
				key = "moved"
			}
			var want *Execute
			for i := range all {
				e := &all[i]
				if e.Tenant != tenant || e.ReuseKey != key {
					continue
				}
				if c.Now().Sub(e.LastUsed) > ttl {
					wantExpired = append(wantExpired, e.ID)
					continue
				}
				if want == nil || e.LastUsed.After(want.LastUsed) || (e.LastUsed.Equal(want.LastUsed) && lessKey(e.Key(), want.Key())) {
					want = e
				}
			}
			got, err := m.FindReusable(bg, tenant, key)
			if want == nil {
				wantErr(t, err, ErrNotFound)
				continue
			}
			if err != nil || got.ID != want.ID || got.Tenant != tenant {
				t.Fatalf("FindReusable(%s, %s) = %s, %v; want %s", tenant, key, got.ID, err, want.ID)
			}
		}
	}
	got := exp.get()
	slices.Sort(got)
	slices.Sort(wantExpired)
	if len(wantExpired) == 0 || !reflect.DeepEqual(got, wantExpired) {
		t.Fatalf("OnExpire saw %d sessions, want %d", len(got), len(wantExpired))
	}
	// Once everything is idle past the TTL, the index empties with the map.
	c.Advance(ttl + time.Minute)
	must(m.NextSeq(bg, "A", "s", "n"))
	wantSizes(t, m, map[string]int{"execs": 0, "reuse": 0})
}

// blocker is a JSON value whose encoding waits for the test, standing in
// for a run too big to copy quickly.
type blocker struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blocker) MarshalJSON() ([]byte, error) {
	b.wait()
	return []byte(`"big"`), nil
}

// wait reports that the copy started, then holds it until released.
func (b *blocker) wait() {
	b.once.Do(func() { close(b.started) })
	<-b.release
}

// TestSlowCloneDoesNotBlock: while one tenant's call is stuck encoding or
// decoding a huge value, another tenant's calls proceed.
func TestSlowCloneDoesNotBlock(t *testing.T) {
	slowDecode := func(m *Memory, b *blocker) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.unmarshal = func(doc []byte, v any) error { b.wait(); return abi.Unmarshal(doc, v) }
	}
	noSetup := func(*Memory, *blocker) {}
	slowRun := func(b *blocker) Run {
		return Run{Tenant: "A", LogicalID: "L", PromptHash: "h", SessionID: "x", RunID: "run-2", N: 2,
			Roots: []RunRoot{{Label: "r", Table: abi.Table{Columns: []string{"v"}, Rows: [][]any{{b}}}}}}
	}
	tests := []struct {
		name  string
		setup func(m *Memory, b *blocker)
		call  func(m *Memory, b *blocker) (any, error)
	}{
		{"GetRun", slowDecode, func(m *Memory, _ *blocker) (any, error) { return m.GetRun(bg, "A", "h", "x", "run-1") }},
		{"GetRunByIndex", slowDecode, func(m *Memory, _ *blocker) (any, error) { return m.GetRunByIndex(bg, "A", "L", 1) }},
		{"ListRuns", slowDecode, func(m *Memory, _ *blocker) (any, error) { return m.ListRuns(bg, "A", "h", "x") }},
		{"GetPage", slowDecode, func(m *Memory, _ *blocker) (any, error) { return m.GetPage(bg, "A", "L", 1) }},
		{"PutRun", noSetup, func(m *Memory, b *blocker) (any, error) { return nil, m.PutRun(bg, slowRun(b)) }},
		{"PutPage", noSetup, func(m *Memory, b *blocker) (any, error) {
			return nil, m.PutPage(bg, Page{Tenant: "A", Scope: "L", N: 2, Continuation: executor.Continuation{Vars: map[string]any{"v": b}}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newStore(t, 0)
			if err := m.PutRun(bg, Run{Tenant: "A", LogicalID: "L", PromptHash: "h", SessionID: "x", RunID: "run-1", N: 1,
				Roots: []RunRoot{{Label: "r", Table: abi.Table{Columns: []string{"v"}}}}}); err != nil {
				t.Fatal(err)
			}
			if err := m.PutPage(bg, Page{Tenant: "A", Scope: "L", N: 1}); err != nil {
				t.Fatal(err)
			}
			b := &blocker{started: make(chan struct{}), release: make(chan struct{})}
			tc.setup(m, b)

			got := make(chan error, 1)
			go func() { _, err := tc.call(m, b); got <- err }()
			<-b.started // tenant A's call is now mid-copy

			seq := make(chan int, 1)
			go func() { seq <- must(m.NextSeq(bg, "B", "scope", "run")) }()
			select {
			case n := <-seq:
				if n != 1 {
					t.Fatalf("NextSeq = %d", n)
				}
			case err := <-got:
				t.Fatalf("the call finished before it was released: %v", err)
			case <-time.After(time.Minute): // hang guard only
				t.Fatal("tenant B's NextSeq is blocked behind tenant A's copy")
			}
			select {
			case err := <-got:
				t.Fatalf("the call finished before it was released: %v", err)
			default:
			}
			close(b.release)
			if err := <-got; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOnExpireOrder: a sweep reports sessions in key order whatever the
// map order.
func TestOnExpireOrder(t *testing.T) {
	m, c := newStore(t, time.Minute)
	var exp expiries
	m.OnExpire = exp.record
	var want []string
	for i := range 30 {
		id := fmt.Sprintf("x%02d", i)
		want = append(want, id)
		if err := m.PutExecute(bg, execute("A", "h", id, "k")); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(2 * time.Minute)
	must(m.NextSeq(bg, "B", "s", "n"))
	if got := exp.get(); !slices.Equal(got, want) {
		t.Fatalf("OnExpire order %v", got)
	}
}
