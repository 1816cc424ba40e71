package lang

import (
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/plan/plantest"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

func planReq(program string, entries []string, syms *symbol.Map) *abi.PlanRequest {
	return &abi.PlanRequest{Program: program, Entries: entries, Symbols: syms}
}

// wireViewPrograms plan over the views fixture: view nodes carry the
// catalog's own values (scope, literal binds, equals) into the plan.
var wireViewPrograms = []string{
	`IssueDigest("iss-1")`, `IssueDigest{issue_id="iss-1"}[slug]`, `IssueTriage("iss-2")`, `AssigneeLoad{issue_id="iss-3"}`,
	"d = AssigneeLoad(\"x\")\nd.open_issues.limit(2)", `IssueTriage("x")[by_author].first_lead_comment`,
}

// Every plan the planner's golden programs and view programs produce
// crosses the binary wire form exactly as it crosses JSON to the host:
// the planner's own values (int64, []any, …), not a decoded copy.
func TestPlanWireRoundTrip(t *testing.T) {
	cats, syms := testCatalogs(), testSymbols()
	for _, tc := range goldenCases {
		entries := tc.entries
		if entries == nil {
			entries = onlyTracker
		}
		p, err := Plan(planReq(tc.program, entries, syms), cats)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := plantest.WireRoundTrip(p); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	views := viewsCatalogs(t)
	for _, program := range wireViewPrograms {
		p, err := planViews(t, views, program)
		if err != nil {
			t.Fatalf("%q: %v", program, err)
		}
		if err := plantest.WireRoundTrip(p); err != nil {
			t.Errorf("%q: %v", program, err)
		}
	}
}

// FuzzPlanWire plans arbitrary programs and checks every plan's wire
// round trip, so values the goldens do not pin (numbers, nested lists,
// escapes) are covered too.
func FuzzPlanWire(f *testing.F) {
	for _, tc := range goldenCases {
		f.Add(tc.program)
	}
	for _, s := range wireViewPrograms {
		f.Add(s)
	}
	f.Add(`Issue{status=[1, -2.5, 1e300, 12345678901234567890, true, null, "\u2028<&>", ["x", [[]]]]}`)
	cats, syms, views := testCatalogs(), testSymbols(), viewsCatalogs(f)
	f.Fuzz(func(t *testing.T, program string) {
		p, _ := Plan(planReq(program, bothEntries, syms), cats)
		v, _ := planViews(t, views, program)
		for _, p := range []*plan.Plan{p, v} {
			if p == nil {
				continue
			}
			if err := plantest.WireRoundTrip(p); err != nil {
				t.Fatalf("%q: %v", program, err)
			}
		}
	})
}
