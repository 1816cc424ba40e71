package lang

import (
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

func TestHeredocForms(t *testing.T) {
	cases := []struct {
		program, want string
	}{
		{"Issue.create(body=<<A\nline 1\n\n  line 3\nA, project_id=\"p\", title=\"t\")", "line 1\n\n  line 3"},
		{"Issue.create(project_id=\"p\", title=\"t\", body=<<END\n\"quoted\" $ .. \\n e4\n   END)", `"quoted" $ .. \n e4`},
		{"Issue.create(project_id=\"p\", title=\"t\", body=<<A\nAB\nA\n)", "AB"},
		{"Issue.create(project_id=\"p\", title=\"t\", body=<<A\r\nx\r\nA\r\n)", "x"},
		{"Issue.create(project_id=\"p\", title=\"t\", body=<<A\nA)", ""},
	}
	for _, tc := range cases {
		p, err := run(tc.program, onlyTracker, testSymbols())
		if err != nil {
			t.Fatalf("%q: %v", tc.program, err)
		}
		if got := p.Nodes[0].Args["body"]; got != tc.want {
			t.Errorf("%q: body %q, want %q", tc.program, got, tc.want)
		}
	}
	p, err := run("Issue{title=<<A\nx\nA}[id]", onlyTracker, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Nodes[0].Filters; len(f) != 1 || f[0].Value != "x" {
		t.Fatalf("filters %+v", f)
	}
}

// A relation whose query needs more than the parent can bind is refused
// when followed, not left to fail at run time.
func TestHopNeedsUnboundParam(t *testing.T) {
	cats := testCatalogs()
	cq := cats["tracker"].Capabilities["comment_query"]
	cq.Parameters = append(cq.Parameters, catalog.Parameter{Name: "tenant", ValueRef: "project_id", Required: true})
	_, err := Plan(&abi.PlanRequest{Program: `Issue("i1").comments`, Entries: onlyTracker}, cats)
	if err == nil || err.Code != abi.CodeCatalog || err.Column != 13 {
		t.Fatalf("got %v", err)
	}
}
