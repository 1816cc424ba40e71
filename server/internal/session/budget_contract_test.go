package session

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/internal/redistest"
)

// The budget contract (Budget), run against the memory store and against
// Redis. Each case gets two stores sharing one state, as two replicas
// would: for Memory the same store twice, for Redis two stores on two
// clients of one redis-server. Writes alternate between them, so one
// tenant's budget holds whichever replica stored what.

type budgetedStore interface {
	Store
	Budgeter
}

type replicaPair func(t *testing.T, budgets map[string]Budget, onExpire func(Execute)) (a, b budgetedStore)

// tickingClock advances by a millisecond at every reading, so the memory
// store's least-recently-used order follows the order of calls, as the
// Redis store's does.
type tickingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func replicaPairs() map[string]replicaPair {
	lookup := func(budgets map[string]Budget) func(string) Budget {
		return func(tenant string) Budget { return budgets[tenant] }
	}
	return map[string]replicaPair{
		"memory": func(t *testing.T, budgets map[string]Budget, onExpire func(Execute)) (budgetedStore, budgetedStore) {
			m := NewMemory(time.Hour)
			m.SetClock((&tickingClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}).Now)
			m.SetBudgets(lookup(budgets))
			m.OnExpire = onExpire
			return m, m
		},
		"redis": func(t *testing.T, budgets map[string]Budget, onExpire func(Execute)) (budgetedStore, budgetedStore) {
			srv := redistest.Start(t)
			replica := func() *Redis {
				rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, MaxRetries: -1,
					DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
				t.Cleanup(func() { _ = rdb.Close() })
				s := NewRedis(rdb, time.Hour)
				s.SetBudgets(lookup(budgets))
				if onExpire != nil {
					s.SetOnExpire(onExpire)
				}
				return s
			}
			return replica(), replica()
		},
	}
}

func TestBudgetContract(t *testing.T) {
	cases := []struct {
		name string
		f    func(t *testing.T, pair replicaPair)
	}{
		{"run bytes", budgetRunBytes},
		{"runs oldest first", budgetRunOrder},
		{"pages oldest first", budgetPageOrder},
		{"execute sessions least recently used", budgetExecOrder},
		{"logical sessions least recently used", budgetLogicalOrder},
	}
	for name, pair := range replicaPairs() {
		t.Run(name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) { tc.f(t, pair) })
			}
		})
	}
}

// sameUsage checks both replicas report the same use for tenant and
// returns it.
func sameUsage(t *testing.T, a, b Budgeter, tenant string) Usage {
	t.Helper()
	ua, ub := a.Usage()[tenant], b.Usage()[tenant]
	if ua != ub {
		t.Fatalf("replicas disagree on %s's usage: %+v and %+v", tenant, ua, ub)
	}
	return ua
}

// budgetRunBytes: a tenant looping on 4 KiB runs over many scopes through
// two replicas stays under one 64 KiB run budget, its oldest runs go
// first, a run larger than the whole budget is ErrQuota on either replica,
// and the neighbour's run is untouched.
func budgetRunBytes(t *testing.T, pair replicaPair) {
	const budget = 64 << 10
	a, b := pair(t, map[string]Budget{"A": {RunBytes: budget}}, nil)
	ctx := context.Background()
	must(0, a.PutRun(ctx, bigRun("B", "LB", 1, 4<<10)))
	const last = 120
	for i := 1; i <= last; i++ {
		s := []budgetedStore{a, b}[i%2]
		if err := s.PutRun(ctx, bigRun("A", fmt.Sprintf("L%d", i%7), i, 4<<10)); err != nil {
			t.Fatal(err)
		}
		if u := s.Usage()["A"]; u.RunBytes > budget || u.RunBytes <= 0 {
			t.Fatalf("after %d runs tenant A holds %d run bytes, budget %d", i, u.RunBytes, budget)
		}
	}
	u := sameUsage(t, a, b, "A")
	if u.Runs < 10 || u.Runs > 16 {
		t.Fatalf("usage %+v: want the newest ~15 runs kept", u)
	}
	// The newest run of every scope is readable on both replicas, the
	// oldest is gone from both.
	for i := last - 6; i <= last; i++ {
		must(a.GetRunByIndex(ctx, "A", fmt.Sprintf("L%d", i%7), i))
		must(b.GetRunByIndex(ctx, "A", fmt.Sprintf("L%d", i%7), i))
	}
	for _, s := range []Store{a, b} {
		_, err := s.GetRunByIndex(ctx, "A", "L1", 1)
		wantErr(t, err, ErrNotFound)
		_, err = s.GetRun(ctx, "A", "h", "xL1", "L1-1")
		wantErr(t, err, ErrNotFound)
	}
	must(b.GetRunByIndex(ctx, "B", "LB", 1))
	if ub := sameUsage(t, a, b, "B"); ub.Runs != 1 {
		t.Fatalf("tenant B's usage %+v", ub)
	}

	for _, s := range []Store{a, b} {
		wantErr(t, s.PutRun(ctx, bigRun("A", "L1", 2000, 80<<10)), ErrQuota)
	}
	if after := sameUsage(t, a, b, "A"); after != u {
		t.Fatalf("a refused run changed the usage: %+v, then %+v", u, after)
	}
}

// budgetRunOrder: past the run count budget the oldest stored run goes,
// whichever replica stored it, and reading a run does not save it.
func budgetRunOrder(t *testing.T, pair replicaPair) {
	a, b := pair(t, map[string]Budget{"A": {Runs: 3}}, nil)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		must(0, []Store{a, b}[i%2].PutRun(ctx, run("A", "L", "h", "s", fmt.Sprint("r", i), i)))
	}
	must(b.GetRunByIndex(ctx, "A", "L", 1))
	must(0, a.PutRun(ctx, run("A", "L", "h", "s", "r4", 4)))
	must(0, b.PutRun(ctx, run("A", "L", "h", "s", "r5", 5)))
	for _, s := range []Store{a, b} {
		for n := 1; n <= 5; n++ {
			_, err := s.GetRunByIndex(ctx, "A", "L", n)
			if n <= 2 {
				wantErr(t, err, ErrNotFound)
			} else if err != nil {
				t.Fatalf("r/%d: %v", n, err)
			}
		}
		var ns []int
		for _, r := range must(s.ListRuns(ctx, "A", "h", "s")) {
			ns = append(ns, r.N)
		}
		if !slices.Equal(ns, []int{3, 4, 5}) {
			t.Fatalf("listed runs %v, want [3 4 5]", ns)
		}
	}
	if u := sameUsage(t, a, b, "A"); u.Runs != 3 {
		t.Fatalf("usage %+v", u)
	}
}

// budgetPageOrder: past the page budget the tenant's oldest paging
// handle goes, across scopes and replicas.
func budgetPageOrder(t *testing.T, pair replicaPair) {
	a, b := pair(t, map[string]Budget{"A": {Pages: 2}}, nil)
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		must(0, []Store{a, b}[i%2].PutPage(ctx, Page{Tenant: "A", Scope: fmt.Sprint("S", i), N: 1}))
	}
	must(0, a.PutPage(ctx, Page{Tenant: "B", Scope: "S1", N: 1}))
	for _, s := range []Store{a, b} {
		for i := 1; i <= 4; i++ {
			_, err := s.GetPage(ctx, "A", fmt.Sprint("S", i), 1)
			if i <= 2 {
				wantErr(t, err, ErrNotFound)
			} else if err != nil {
				t.Fatalf("page S%d: %v", i, err)
			}
		}
		must(s.GetPage(ctx, "B", "S1", 1))
	}
	if u := sameUsage(t, a, b, "A"); u.Pages != 2 {
		t.Fatalf("usage %+v", u)
	}
}

// budgetExecOrder: past the execute-session budget the least recently
// used session expires (its owner reads ErrExpired, OnExpire hears it
// once); a session used since it was opened is kept.
func budgetExecOrder(t *testing.T, pair replicaPair) {
	var mu sync.Mutex
	var expired []string
	a, b := pair(t, map[string]Budget{"A": {Executes: 2}}, func(e Execute) {
		mu.Lock()
		defer mu.Unlock()
		expired = append(expired, e.Tenant+"/"+e.ID)
	})
	ctx := context.Background()
	must(0, a.PutExecute(ctx, execute("A", "h", "e1", "k1")))
	must(0, b.PutExecute(ctx, execute("A", "h", "e2", "k2")))
	must(b.GetExecute(ctx, "A", "h", "e1")) // e1 is now the most recently used
	must(0, a.PutExecute(ctx, execute("A", "h", "e3", "k3")))
	must(0, b.PutExecute(ctx, execute("B", "h", "e9", "k9"))) // the neighbour has its own budget
	_, err := b.GetExecute(ctx, "A", "h", "e2")
	wantErr(t, err, ErrExpired)
	for _, s := range []Store{a, b} {
		must(s.GetExecute(ctx, "A", "h", "e1"))
		must(s.GetExecute(ctx, "A", "h", "e3"))
		must(s.GetExecute(ctx, "B", "h", "e9"))
		_, err := s.FindReusable(ctx, "A", "k2")
		wantErr(t, err, ErrNotFound)
	}
	if u := sameUsage(t, a, b, "A"); u.Executes != 2 {
		t.Fatalf("usage %+v", u)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(expired, []string{"A/e2"}) {
		t.Fatalf("OnExpire heard %v, want [A/e2]", expired)
	}
}

// budgetLogicalOrder: past the logical-session budget the least recently
// used session goes with its refs, runs and pages; opening its intent
// again starts a new session.
func budgetLogicalOrder(t *testing.T, pair replicaPair) {
	a, b := pair(t, map[string]Budget{"A": {Logicals: 2}}, nil)
	ctx := context.Background()
	l1 := must(a.OpenLogical(ctx, "A", "one"))
	l2 := must(b.OpenLogical(ctx, "A", "two"))
	if ref := must(a.RefFor(ctx, "tr", "A", l2.ID)); ref != "s0" {
		t.Fatalf("ref %s", ref)
	}
	must(0, b.PutRun(ctx, run("A", l2.ID, "h", "s", "r1", 1)))
	must(0, a.PutPage(ctx, Page{Tenant: "A", Scope: l2.ID, N: 1}))
	must(b.GetLogical(ctx, "A", l1.ID)) // l1 is now the most recently used
	l3 := must(a.OpenLogical(ctx, "A", "three"))
	for _, s := range []Store{a, b} {
		_, err := s.GetLogical(ctx, "A", l2.ID)
		wantErr(t, err, ErrNotFound)
		_, err = s.ResolveRef(ctx, "tr", "A", "s0")
		wantErr(t, err, ErrNotFound)
		_, err = s.GetRunByIndex(ctx, "A", l2.ID, 1)
		wantErr(t, err, ErrNotFound)
		_, err = s.GetPage(ctx, "A", l2.ID, 1)
		wantErr(t, err, ErrNotFound)
		must(s.GetLogical(ctx, "A", l1.ID))
		must(s.GetLogical(ctx, "A", l3.ID))
	}
	if u := sameUsage(t, a, b, "A"); u.Logicals != 2 || u.Runs != 0 || u.Pages != 0 {
		t.Fatalf("usage %+v", u)
	}
	if again := must(b.OpenLogical(ctx, "A", "two")); again.ID == l2.ID {
		t.Fatal("the evicted session's intent reopened the evicted id")
	}
}

// TestRedisBudgetFollowsExpiry: state Redis expires by itself leaves the
// books at the next look (Usage, or any write of the tenant), and state
// still there keeps its booking. Expiry is forced by deleting keys and
// making every booking due, so no test waits on the clock.
func TestRedisBudgetFollowsExpiry(t *testing.T) {
	s, _, rdb := redisStore(t)
	ctx := context.Background()
	l := must(s.OpenLogical(ctx, "A", "i"))
	must(0, s.PutExecute(ctx, execute("A", "h", "e1", "k")))
	must(0, s.PutRun(ctx, run("A", l.ID, "h", "e1", "r1", 1)))
	must(0, s.PutRun(ctx, run("A", "", "h", "e1", "r2", 1)))
	must(0, s.PutPage(ctx, Page{Tenant: "A", Scope: "e1", N: 1}))
	u := s.Usage()["A"]
	if u.Runs != 2 || u.Pages != 1 || u.Executes != 1 || u.Logicals != 1 || u.RunBytes <= 0 {
		t.Fatalf("usage %+v", u)
	}
	due := key("A", "budget", "due")
	makeDue := func() {
		t.Helper()
		for _, m := range must(rdb.ZRange(ctx, due, 0, -1).Result()) {
			must(0, rdb.ZAdd(ctx, due, redis.Z{Score: 0, Member: m}).Err())
		}
	}
	// Only the run r2 and the page expire: the rest is still there.
	must(0, rdb.Del(ctx, runKeyOf("A", "h", "e1", "r2"), key("A", "pages", "e1")).Err())
	makeDue()
	u2 := s.Usage()["A"]
	if u2.Runs != 1 || u2.Pages != 0 || u2.Executes != 1 || u2.Logicals != 1 || u2.RunBytes <= 0 || u2.RunBytes >= u.RunBytes {
		t.Fatalf("after r2 and the page expired: usage %+v (before %+v)", u2, u)
	}
	if next := must(rdb.ZRangeWithScores(ctx, due, 0, 0).Result()); len(next) != 1 || int64(next[0].Score) < time.Now().UnixMilli() {
		t.Fatalf("a live booking's deadline was not moved to its expiry: %v", next)
	}
	// Everything expires: the tenant uses nothing.
	ek, _ := s.execKeys("A", "h", "e1")
	must(0, rdb.Del(ctx, ek, key("A", "logical", l.ID), runKeyOf("A", "h", "e1", "r1")).Err())
	makeDue()
	if u, ok := s.Usage()["A"]; ok {
		t.Fatalf("books kept after everything expired: %+v", u)
	}
	// The next write books from zero.
	must(0, s.PutRun(ctx, run("A", "", "h", "e2", "r3", 1)))
	if u := s.Usage()["A"]; u.Runs != 1 || u.Executes != 0 {
		t.Fatalf("usage after a new run %+v", u)
	}
}
