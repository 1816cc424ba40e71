package lang

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// encodePlan is the outcome of one planning call as bytes: the plan or the
// error, so outcomes can be compared after the buffers behind them moved on.
func encodePlan(t testing.TB, p any, err *abi.Error) string {
	t.Helper()
	var v any = p
	if err != nil {
		v = err
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		t.Fatalf("encode: %v", jerr)
	}
	return string(b)
}

// TestScratchMatchesPlan plans every golden and error program through one
// Scratch, in several orders so each program follows different leftovers,
// and requires the same plan or error, byte for byte, as a fresh Plan.
func TestScratchMatchesPlan(t *testing.T) {
	cats := testCatalogs()
	for _, c := range cats {
		if err := c.Freeze(); err != nil {
			t.Fatal(err)
		}
	}
	type call struct {
		req  *abi.PlanRequest
		want string
	}
	var calls []call
	add := func(program string, entries []string, nilSymbols bool) {
		req := &abi.PlanRequest{Program: program, Entries: entries}
		if !nilSymbols {
			req.Symbols = testSymbols()
		}
		p, err := Plan(req, cats)
		calls = append(calls, call{req, encodePlan(t, p, err)})
	}
	for _, tc := range goldenCases {
		add(tc.program, tc.entries, false)
	}
	for _, tc := range errorCases {
		add(tc.program, cmpOrEntries(tc.entries), tc.nilSymbols)
	}
	// A program far bigger than the rest, so later ones run on buffers a
	// large plan left behind, and one past the kept-token bound.
	big := "a = Issue{status=\"open\"}.limit(5)\n"
	for range 40 {
		big += "a.comments[id, body], "
	}
	add(big+"a[id, title]", onlyTracker, false)
	huge := "Issue{status=["
	for range maxKeptTokens {
		huge += "1,"
	}
	add(huge+"2]}", onlyTracker, false)

	var s Scratch
	orders := [][]call{calls, slices.Clone(calls), calls}
	slices.Reverse(orders[1])
	for round, order := range orders {
		for _, c := range order {
			p, err := s.Plan(c.req, cats)
			if got := encodePlan(t, p, err); got != c.want {
				t.Fatalf("round %d, %q through a reused Scratch:\n got %s\nwant %s", round, c.req.Program, got, c.want)
			}
		}
	}
}

func cmpOrEntries(e []string) []string {
	if e == nil {
		return onlyTracker
	}
	return e
}

// fuzzScratch is shared by every input of FuzzPlan in one process, so each
// input is planned on whatever the previous one left in it.
var fuzzScratch Scratch

// planBoth plans req fresh and through fuzzScratch and fails when the two
// differ in any byte.
func planBoth(t *testing.T, req *abi.PlanRequest, cats map[string]*catalog.Catalog) {
	t.Helper()
	p, err := Plan(req, cats)
	want := encodePlan(t, p, err)
	sp, serr := fuzzScratch.Plan(req, cats)
	if got := encodePlan(t, sp, serr); got != want {
		t.Fatalf("Plan(%q) through a reused Scratch:\n got %s\nwant %s", req.Program, got, want)
	}
}

// TestPlanConcurrent runs one-off Plan calls from several goroutines at
// once: they share the direct arenas, which must stay read-only (run with
// -race).
func TestPlanConcurrent(t *testing.T) {
	cats := testCatalogs()
	want := map[string]string{}
	for _, tc := range goldenCases {
		p, err := Plan(&abi.PlanRequest{Program: tc.program, Entries: tc.entries, Symbols: testSymbols()}, cats)
		want[tc.program] = encodePlan(t, p, err)
	}
	done := make(chan string, 4)
	for range 4 {
		go func() {
			for _, tc := range goldenCases {
				p, err := Plan(&abi.PlanRequest{Program: tc.program, Entries: tc.entries, Symbols: testSymbols()}, cats)
				b, _ := json.Marshal(p)
				if err != nil {
					b, _ = json.Marshal(err)
				}
				if string(b) != want[tc.program] {
					done <- tc.program
					return
				}
			}
			done <- ""
		}()
	}
	for range 4 {
		if bad := <-done; bad != "" {
			t.Fatalf("concurrent Plan(%q) differs from a lone one", bad)
		}
	}
}
