package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// bigRun is a run whose one cell holds size bytes of text.
func bigRun(tenant, scope string, n, size int) Run {
	r := run(tenant, scope, "h", "x"+scope, fmt.Sprintf("%s-%d", scope, n), n)
	r.Roots[0].Table = abi.Table{Columns: []string{"blob"}, Rows: [][]any{{strings.Repeat("x", size)}}}
	return r
}

func budgeted(t *testing.T, budgets map[string]Budget) (*Memory, *clock) {
	t.Helper()
	m, c := newStore(t, time.Hour)
	m.SetBudgets(func(tenant string) Budget { return budgets[tenant] })
	return m, c
}

// TestRunBudget: a tenant looping on 4 KiB runs across many scopes stays
// under its 64 KiB run budget (oldest runs evicted first), a run larger
// than the whole budget is refused with ErrQuota, and the neighbour's runs
// are untouched.
func TestRunBudget(t *testing.T) {
	m, _ := budgeted(t, map[string]Budget{"A": {RunBytes: 64 << 10}})
	if err := m.PutRun(bg, bigRun("B", "LB", 1, 4<<10)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 1000; i++ {
		scope := fmt.Sprintf("L%d", i%7) // many scopes: the budget is per tenant
		if err := m.PutRun(bg, bigRun("A", scope, i, 4<<10)); err != nil {
			t.Fatal(err)
		}
		if u := m.Usage()["A"]; u.RunBytes > 64<<10 {
			t.Fatalf("after %d runs the tenant holds %d run bytes, budget %d", i, u.RunBytes, 64<<10)
		}
	}
	u := m.Usage()["A"]
	if u.Runs < 10 || u.Runs > 16 {
		t.Fatalf("usage %+v: want the newest ~15 runs kept", u)
	}
	// The newest is kept, the oldest gone.
	must(m.GetRunByIndex(bg, "A", "L6", 1000-(1000%7)+6-7))
	_, err := m.GetRunByIndex(bg, "A", "L1", 1)
	wantErr(t, err, ErrNotFound)
	must(m.GetRunByIndex(bg, "B", "LB", 1))

	err = m.PutRun(bg, bigRun("A", "L1", 2000, 80<<10))
	wantErr(t, err, ErrQuota)
}

// TestCountBudgets: runs, pages, execute and logical sessions each past
// their count budget evict the tenant's oldest (least recently used).
func TestCountBudgets(t *testing.T) {
	t.Run("runs", func(t *testing.T) {
		m, _ := budgeted(t, map[string]Budget{"A": {Runs: 3}})
		for i := 1; i <= 5; i++ {
			must(0, m.PutRun(bg, run("A", "L", "h", "s", fmt.Sprint("r", i), i)))
		}
		_, err := m.GetRunByIndex(bg, "A", "L", 2)
		wantErr(t, err, ErrNotFound)
		must(m.GetRunByIndex(bg, "A", "L", 3))
		if u := m.Usage()["A"]; u.Runs != 3 {
			t.Fatalf("usage %+v", u)
		}
	})
	t.Run("pages", func(t *testing.T) {
		m, _ := budgeted(t, map[string]Budget{"A": {Pages: 2}})
		for i := 1; i <= 4; i++ {
			must(0, m.PutPage(bg, Page{Tenant: "A", Scope: fmt.Sprint("S", i), N: 1}))
		}
		_, err := m.GetPage(bg, "A", "S2", 1)
		wantErr(t, err, ErrNotFound)
		must(m.GetPage(bg, "A", "S3", 1))
		must(m.GetPage(bg, "A", "S4", 1))
	})
	t.Run("execute sessions", func(t *testing.T) {
		m, c := budgeted(t, map[string]Budget{"A": {Executes: 2}})
		for i := 1; i <= 3; i++ {
			must(0, m.PutExecute(bg, execute("A", "h", fmt.Sprint("e", i), "k")))
			c.Advance(time.Second)
		}
		_, err := m.GetExecute(bg, "A", "h", "e1")
		wantErr(t, err, ErrExpired)
		must(m.GetExecute(bg, "A", "h", "e3"))
		must(m.GetExecute(bg, "A", "h", "e2"))
		if u := m.Usage()["A"]; u.Executes != 2 {
			t.Fatalf("usage %+v", u)
		}
	})
	t.Run("logical sessions", func(t *testing.T) {
		m, c := budgeted(t, map[string]Budget{"A": {Logicals: 2}})
		var ids []string
		for i := 1; i <= 3; i++ {
			ids = append(ids, must(m.OpenLogical(bg, "A", fmt.Sprint("intent ", i))).ID)
			c.Advance(time.Second)
		}
		_, err := m.GetLogical(bg, "A", ids[0])
		wantErr(t, err, ErrNotFound)
		must(m.GetLogical(bg, "A", ids[2]))
		if u := m.Usage()["A"]; u.Logicals != 2 {
			t.Fatalf("usage %+v", u)
		}
		must(m.OpenLogical(bg, "B", "intent 1")) // the neighbour has its own budget
		must(m.GetLogical(bg, "A", ids[1]))
	})
}

// TestBudgetBooksFollowExpiry: state that expires or is removed leaves the
// books, so an idle tenant costs nothing.
func TestBudgetBooksFollowExpiry(t *testing.T) {
	m, c := budgeted(t, nil)
	l := must(m.OpenLogical(bg, "A", "i"))
	e := execute("A", "h", "e1", "k")
	must(0, m.PutExecute(bg, e))
	must(0, m.PutRun(bg, run("A", "", "h", "e1", "r1", 1)))
	must(0, m.PutRun(bg, run("A", l.ID, "h", "e1", "r2", 1)))
	must(0, m.PutPage(bg, Page{Tenant: "A", Scope: "e1", N: 1}))
	if u := m.Usage()["A"]; u.Runs != 2 || u.Pages != 1 || u.Executes != 1 || u.Logicals != 1 || u.RunBytes <= 0 {
		t.Fatalf("usage %+v", u)
	}
	c.Advance(3 * time.Hour)
	_, _ = m.GetLogical(bg, "A", "nothing") // sweeps
	c.Advance(3 * time.Hour)
	_, _ = m.GetLogical(bg, "A", "nothing")
	if u, ok := m.Usage()["A"]; ok {
		t.Fatalf("books kept after everything expired: %+v", u)
	}
}
