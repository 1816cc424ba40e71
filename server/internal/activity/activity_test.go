package activity

import (
	"fmt"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/server/internal/session"
)

func TestJournalCapsAndScopes(t *testing.T) {
	j := New(Options{Runs: 3, Faults: 2, RowsCap: 2})
	for i := range 5 {
		tenant := "a"
		if i%2 == 1 {
			tenant = "b"
		}
		j.AddRun(Run{ID: fmt.Sprint(i), Tenant: tenant})
	}
	var ids []string
	for _, r := range j.Runs("", nil) {
		ids = append(ids, r.ID)
	}
	if fmt.Sprint(ids) != "[4 3 2]" {
		t.Fatalf("operator sees %v, want the newest three", ids)
	}
	if rs := j.Runs("a", nil); len(rs) != 2 || rs[0].ID != "4" || rs[1].ID != "2" {
		t.Fatalf("tenant a sees %v", rs)
	}
	if _, ok := j.Run("b", "4"); ok {
		t.Fatal("tenant b reads tenant a's run")
	}
	if _, ok := j.Run("a", "0"); ok {
		t.Fatal("a run past the cap is still there")
	}
	j.AddFault(Fault{Tenant: "a", Kind: "sandbox"})
	j.AddFault(Fault{Kind: "egress"})
	j.AddFault(Fault{Tenant: "b", Kind: "sandbox"})
	if fs := j.Faults(""); len(fs) != 2 || fs[0].Tenant != "b" {
		t.Fatalf("faults %v", fs)
	}
	if fs := j.Faults("a"); len(fs) != 0 {
		t.Fatalf("tenant a sees %v (its fault aged out; the egress one is operator-only)", fs)
	}
}

func TestJournalCopiesAndCapsRows(t *testing.T) {
	j := New(Options{RowsCap: 2})
	rows := [][]any{{1}, {2}, {3}}
	j.AddRun(Run{ID: "r", Tenant: "a", Roots: []session.RunRoot{{Label: "x", Table: abi.Table{Columns: []string{"n"}, Rows: rows}}}})
	r, _ := j.Run("a", "r")
	if !r.Truncated || len(r.Roots[0].Table.Rows) != 2 {
		t.Fatalf("rows kept: %d, truncated %v", len(r.Roots[0].Table.Rows), r.Truncated)
	}
	rows[0] = []any{"changed"}
	if r.Roots[0].Table.Rows[0][0] != 1 {
		t.Fatal("the journal shares the caller's row list")
	}
}

func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	j := New(Options{})
	ch, stop := j.Subscribe("a")
	for i := range 1000 {
		j.AddRun(Run{ID: fmt.Sprint(i), Tenant: "a"})
	}
	if len(ch) != cap(ch) {
		t.Fatalf("buffer holds %d of %d", len(ch), cap(ch))
	}
	stop()
	stop() // twice is harmless
}
