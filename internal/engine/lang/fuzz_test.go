package lang

import (
	"encoding/json"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// FuzzPlan checks that any program yields exactly one of a plan or an
// error, never a panic, that errors about the program carry a position, and
// that every plan is structurally sound and encodable, and that a reused
// Scratch plans it exactly as a fresh Plan does.
func FuzzPlan(f *testing.F) {
	for _, tc := range goldenCases {
		f.Add(tc.program)
	}
	for _, tc := range errorCases {
		f.Add(tc.program)
	}
	for _, s := range []string{
		"e4(\"i1\").r1[p1]", "e4.m4(p3=\"p1\", p5=\"x\")", "a = e4{p4=\"open\"}.limit(1)\na.m3()",
		"<<", "<<A\n", "\"\\u", "\"\\ud83d\\ude00\"", "x =", "=", ",", "a = ", "tracker:", ":Issue",
		"Issue~", "Issue{", "Issue[", "Issue.", "Issue(", "page(", "page(s0_pg1,", "-", "-1", "1.", "[[]]",
		"Issue{status=[1, -2.5, true, null, \"x\", open]}", "a => {x: _.y}", "a = b\nb", "\xff\xfe",
	} {
		f.Add(s)
	}
	cats := testCatalogs()
	syms := testSymbols()
	f.Fuzz(func(t *testing.T, program string) {
		for _, entries := range [][]string{onlyTracker, bothEntries} {
			p, err := Plan(&abi.PlanRequest{Program: program, Entries: entries, Symbols: syms}, cats)
			if (p == nil) == (err == nil) {
				t.Fatalf("Plan(%q): plan %v, error %v", program, p != nil, err)
			}
			if err != nil {
				if err.Line < 1 || err.Column < 1 || err.Code == "" || err.Message == "" {
					t.Fatalf("Plan(%q): error without position or code: %+v", program, err)
				}
				continue
			}
			checkInvariants(t, p)
			if _, jerr := json.Marshal(p); jerr != nil {
				t.Fatalf("Plan(%q): plan does not encode: %v", program, jerr)
			}
		}
		planBoth(t, &abi.PlanRequest{Program: program, Entries: onlyTracker, Symbols: syms}, cats)
	})
}
