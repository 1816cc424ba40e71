// Package langcheck_test checks that what the teaching table teaches is
// what the planner accepts: every taught row, with its fill-in cues
// replaced, must plan against the same symbol map. It lives apart from the
// teaching package's own tests so that those never depend on the planner
// compiling.
package langcheck_test

import (
	"math/rand/v2"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/teaching/teachingtest"
)

func TestTaughtRowsPlan(t *testing.T) {
	cats := fixture.Catalogs(t)
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		m := &symbol.Map{}
		var ex teaching.Exposure
		for i, req := range teachingtest.RandomRequests(r, cats, 1+r.IntN(4)) {
			w, err := teaching.Expose(m, ex, req)
			if err != nil {
				t.Fatalf("seed %d wave %d: %v", seed, i, err)
			}
			ex = w.Exposure
			for _, row := range teaching.Rows(m, w) {
				if k, _ := symbol.Parse(row.Expr); k == symbol.KindValue || k == symbol.KindSlot {
					continue // metadata rows, not programs
				}
				program := teachingtest.Runnable(row.Expr, m, cats)
				req := &abi.PlanRequest{Program: program, Symbols: m.Clone(), Entries: ex.Entries()}
				if _, aerr := lang.Plan(req, cats); aerr != nil {
					t.Errorf("seed %d wave %d: row %q → program %q rejected: %v (hint: %s)",
						seed, i, row.String(), program, aerr, aerr.Hint)
				}
			}
		}
	}
}

// TestPreambleShapes plans one program per construct the preamble teaches,
// so the preamble never advertises syntax the planner refuses.
func TestPreambleShapes(t *testing.T) {
	cats := fixture.Catalogs(t)
	m := &symbol.Map{}
	w, err := teaching.Expose(m, teaching.Exposure{}, teaching.Request{
		Catalogs: cats, Seeds: []teaching.Seed{{EntryID: "tracker", Entity: "Issue"}}, Intent: "close and edit issues",
	})
	if err != nil {
		t.Fatal(err)
	}
	programs := []string{
		`Issue(42)`,
		`Issue("42")`,
		`Issue{project_id="p1", status!="open"}`,
		`Issue{project_id="p1", title~"crash"}`,
		`Issue~"crash"`,
		`Issue(1).comments`,
		`Issue{project_id="p1"}.limit(3).comments`,
		`Issue(1).update(title="x")`,
		`Issue(1).close()`,
		`Issue{project_id="p1"}.sort(status, desc).limit(2).filter{status="open"}[id,status]`,
		"a = Issue{project_id=\"p1\"}\nb = a.limit(1)\nb.comments, a",
		"a = Issue{project_id=\"p1\"}.limit(3)\na.close()",
		"a = Issue(1)\nIssue(2).update(title=a.title)",
		"Issue(1).update(body=<<MD\nline one\nline two\nMD\n)",
		`page(s0_pg1)`,
		`page(s0_pg1, limit=50)`,
	}
	for _, p := range programs {
		req := &abi.PlanRequest{Program: p, Symbols: m, Entries: w.Exposure.Entries()}
		if _, aerr := lang.Plan(req, cats); aerr != nil {
			t.Errorf("%q rejected: %v (hint: %s)", p, aerr, aerr.Hint)
		}
	}
}
