package lang

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var (
	onlyTracker = []string{"tracker"}
	bothEntries = []string{"tracker", "kanban"}
)

func run(program string, entries []string, syms *symbol.Map) (*plan.Plan, *abi.Error) {
	return Plan(&abi.PlanRequest{Program: program, Entries: entries, Symbols: syms}, testCatalogs())
}

// Every grammar form, planned and compared with its golden plan.
var goldenCases = []struct {
	name, program string
	entries       []string
}{
	{"get_quoted", `Issue("i1")`, nil},
	{"get_bare", `Issue(i-42)`, nil},
	{"get_number", `Issue(42)`, nil},
	{"get_keys", `Repo(owner="plasmd", name="plasmd")`, nil},
	{"get_idfield_key", `Issue(id="i1")`, nil},
	{"query_pushdown", `Issue{project_id="p1", status="open"}`, nil},
	{"query_host_filters", `Issue{status="open", score>1.5, votes!=0, title~"crash", body=null}`, nil},
	{"query_list_value", `Issue{status=["open", "closed"]}`, nil},
	{"query_all", `Project`, nil},
	{"postfix_left_to_right", `Project.sort(name, desc).limit(2)[id, name]`, nil},
	{"filter_postfix", `Issue{project_id="p1"}.filter{votes>2}.sort(score).limit(5)[id, score]`, nil},
	{"search", `Issue~"login bug"`, nil},
	{"search_preds", `Issue~"crash"{project_id="p1", votes>=3}`, nil},
	{"hop_query_scoped", `Issue("i1").comments`, nil},
	{"hop_from_parent_get", `Issue("i1").labels[name]`, nil},
	{"hop_bindings", `Issue("i1").assignee`, nil},
	{"hop_fanout", `Project.issues.comments.limit(10)[body]`, nil},
	{"create_heredoc", "Issue.create(project_id=\"p1\", title=\"Crash on login\", body=<<MD\nSteps:\n  1. open \"app\"\nMD)", nil},
	{"create_multiline", "Issue.create(\n  project_id=\"p1\",\n  title=\"x\"\n)", nil},
	{"create_entity_value", `Issue.create(project_id=Project("p1"), title="x")`, nil},
	{"update", `Issue("i1").update(title="P", status="closed")`, nil},
	{"delete", `Issue("i2").delete()`, nil},
	{"action", `Issue("i1").close()`, nil},
	{"action_compound_key", `Repo(owner="a", name="b").star()`, nil},
	{"action_for_each", `Issue{status="open"}.limit(5).add-label(label="triage")`, nil},
	{"bindings_doc_example", "a = Issue{status=\"open\"}\nb = a.limit(1)\nb.comments, a", nil},
	{"last_line_binding", "a = Issue{status=\"open\"}.limit(3)[id, title]", nil},
	// A label on the last line after other lines: its root is its own
	// node, not an earlier line's (node 0 here is Project's get).
	{"last_line_binding_after_lines", "a = Project(\"p1\")\nb = Issue(\"i1\")", nil},
	{"label_arg_ref", "p = Project(\"p1\")\nIssue.create(project_id=p.id, title=\"x\")", nil},
	{"label_limit1_ref", "top = Issue{status=\"open\"}.sort(votes, desc).limit(1)\nUser(top.assignee_id)[login]", nil},
	{"parallel_roots", `Issue("i1"), Project("p1")`, nil},
	{"blank_lines", "\n\na = Project(\"p1\")\n\n a.issues.limit(3)[id]\n\n", nil},
	{"page", `page(s0_pg2, limit=50)`, nil},
	{"page_plain", `page(s3_pg1)`, nil},
	{"qualified_both", `tracker:Issue("i1"), kanban:Issue("k1")`, bothEntries},
	{"query_most_pushdown", `kanban:Issue{team_id="t1", state="done"}`, bothEntries},
	{"alias_qualifier", `trk:Project("p1")`, nil},
	{"unique_bare_name", `Team`, bothEntries},
	{"unicode_string", `Issue{title="caf\u00e9 ☕ \"q\""}[id]`, nil},
	{"id_field_get", `Member("ann")`, nil},
	{"id_field_key", `Member(login="ann")[name]`, nil},
	{"id_field_hop", `Member("ann").badges`, nil},
	{"id_field_action", `Member("ann").suspend()`, nil},
	{"id_field_for_each", `Member.limit(2).rename(name="x")`, nil},
	// Hydration: fields a list does not provide are read through the get,
	// only when the program asks for them.
	{"hydrate_projection", `Issue{status="open"}.limit(3)[id, title, body]`, nil},
	{"hydrate_not_asked", `Issue{status="open"}.limit(3)[id, title]`, nil},
	{"hydrate_sort_unbounded", `Issue{project_id="p1"}.sort(body).limit(2)[id]`, nil},
	{"hydrate_filter", `Issue{status="open"}.limit(5).filter{body~"crash"}[id]`, nil},
	{"hydrate_label_ref", "top = Issue{status=\"open\"}.limit(1)\nComment.create(issue_id=top.id, body=top.body)", nil},
	{"hydrate_search", `Issue~"crash".limit(2)[title, body]`, nil},
	{"hydrate_no_provides", `Project.limit(2)[id, name]`, nil},
	{"hydrate_hop_target", `Issue{status="open"}.limit(5).assignee[id, login]`, nil},
	{"hydrate_embedded", `Project("p1").lead[id, login]`, nil},
	{"hydrate_embedded_id_only", `Project("p1").lead[id]`, nil},
	{"crlf", "a = Project(\"p1\")\r\na.issues.limit(1)[id]\r\n", nil},
	// Null equalities stay host filters: a null parameter is left out of the
	// request, which would list everything.
	{"query_null_equality", `Issue{status=null, assignee_id!=null, project_id="p1"}[id]`, nil},
	// A label-fed predicate reads through a non-null guard node.
	{"query_label_ref_guard", "top = Issue{status=\"open\"}.limit(1)\nIssue{assignee_id=top.assignee_id, project_id=top.project_id}.limit(5)[id]", nil},
	{"bare_symbol_shaped_values", `Issue{title=v7, assignee_id=["u1", e99]}.limit(1)[id]`, nil},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			entries := tc.entries
			if entries == nil {
				entries = onlyTracker
			}
			p, err := run(tc.program, entries, testSymbols())
			if err != nil {
				t.Fatalf("Plan(%q): %v (hint: %s)", tc.program, err, err.Hint)
			}
			checkInvariants(t, p)
			got, jerr := json.MarshalIndent(struct {
				Program string     `json:"program"`
				Plan    *plan.Plan `json:"plan"`
			}{tc.program, p}, "", "  ")
			if jerr != nil {
				t.Fatal(jerr)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatalf("%v (run with -update to create it)", rerr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan differs from %s (run with -update after checking):\n%s", path, got)
			}
		})
	}
}

// checkInvariants asserts the structural promises the executor relies on.
func checkInvariants(t testing.TB, p *plan.Plan) {
	t.Helper()
	if len(p.Order) != len(p.Nodes) || len(p.Roots) == 0 {
		t.Fatalf("order %v / roots %v for %d nodes", p.Order, p.Roots, len(p.Nodes))
	}
	for i, n := range p.Nodes {
		if n.ID != i {
			t.Fatalf("node %d has id %d", i, n.ID)
		}
		if n.Input >= i || n.Input < -1 {
			t.Fatalf("node %d input %d", i, n.Input)
		}
		for _, d := range n.Deps {
			if d < 0 || d >= i {
				t.Fatalf("node %d dep %d", i, d)
			}
		}
		for _, r := range n.ArgRefs {
			if r.Node < 0 || r.Node >= i {
				t.Fatalf("node %d argref %+v", i, r)
			}
		}
		if n.Line < 1 || n.Column < 1 {
			t.Fatalf("node %d has no position", i)
		}
		if n.Effect != plan.EffectRead && n.Effect != plan.EffectWrite {
			t.Fatalf("node %d effect %q", i, n.Effect)
		}
	}
	for _, r := range p.Roots {
		if r.Node < 0 || r.Node >= len(p.Nodes) || r.Label == "" {
			t.Fatalf("bad root %+v", r)
		}
	}
	if !strings.HasPrefix(p.Summary, "plan "+p.Verdict+" · ") {
		t.Fatalf("summary %q", p.Summary)
	}
}

// A program written with the session's symbols plans exactly like its
// wire-name form (positions and root labels aside, which follow the text).
func TestSymbolsEqualWireNames(t *testing.T) {
	cases := []struct{ sym, wire string }{
		{`e4("i1")`, `tracker:Issue("i1")`},
		{`e4{p4="open"}`, `tracker:Issue{status="open"}`},
		{`e4("i1").r1[p1]`, `tracker:Issue("i1").comments[id]`},
		{`e4("i1").m3()`, `tracker:Issue("i1").close()`},
		{`e4("i1").m2(p2="bug")`, `tracker:Issue("i1").add-label(label="bug")`},
		{`e4.m4(p3="p1", p5="x")`, `tracker:Issue.create(project_id="p1", title="x")`},
		{`e4(p1="i1").m5(p5="y")`, `tracker:Issue(id="i1").update(title="y")`},
		{`e5("p1").r3.limit(2)[p1, p5]`, `tracker:Project("p1").issues.limit(2)[id, title]`},
		{`e1{team_id="t"}.m1()`, `kanban:Issue{team_id="t"}.close()`},
		{`e4{p5~"e4 p1 m3"}`, `tracker:Issue{title~"e4 p1 m3"}`},
		{"a = e4{p4=\"open\"}.limit(1)\ne4.m4(p3=a.p3, p5=<<T\ne4 stays\nT)", "a = tracker:Issue{status=\"open\"}.limit(1)\ntracker:Issue.create(project_id=a.project_id, title=<<T\ne4 stays\nT)"},
		{`e6(p1="u1")`, `tracker:User(id="u1")`},
		{`tracker:e4("i1")`, `tracker:Issue("i1")`},
		{`trk:e4("i1")`, `tracker:Issue("i1")`},
		{`tracker:Issue.create(project_id=p77, title=e99)`, `tracker:Issue.create(project_id="p77", title="e99")`},
	}
	syms := testSymbols()
	for _, tc := range cases {
		ps, err := run(tc.sym, bothEntries, syms)
		if err != nil {
			t.Fatalf("%s: %v (hint %s)", tc.sym, err, err.Hint)
		}
		pw, err := run(tc.wire, bothEntries, syms)
		if err != nil {
			t.Fatalf("%s: %v (hint %s)", tc.wire, err, err.Hint)
		}
		a, b := normalise(ps), normalise(pw)
		if a != b {
			t.Errorf("%s\n  %s\n!= %s\n  %s", tc.sym, a, tc.wire, b)
		}
	}
}

func normalise(p *plan.Plan) string {
	for i := range p.Nodes {
		p.Nodes[i].Line, p.Nodes[i].Column = 0, 0
	}
	for i := range p.Roots {
		p.Roots[i].Label = ""
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func TestVerdictAndSummary(t *testing.T) {
	cases := []struct {
		program, summary string
		reasons          []string
	}{
		{`Issue("i1")`, "plan ok · 1n 1r → single", nil},
		{`Issue{status="open"}.limit(5)[id]`, "plan ok · 1n 1r → single", nil},
		{`Issue{status="open"}`, "plan review · 1n 1r → single", []string{"unprojected read: Issue", "unbounded read: Issue"}},
		{`Issue{status="open"}[id]`, "plan review · 1n 1r → single", []string{"unbounded read: Issue"}},
		{`Issue("i1").close()`, "plan review · 1n 1r → single", []string{"mutation: issue_close"}},
		{`Issue("i1"), Project("p1")`, "plan ok · 2n 2r → parallel(2)", nil},
		{"a = Issue{status=\"open\"}\nb = a.limit(1)\nb.comments, a", "plan review · 3n 2r → sequence(3)",
			[]string{"unprojected read: Comment", "unbounded read: Comment", "unprojected read: Issue", "unbounded read: Issue"}},
		{`Issue("i1").comments.limit(3)[body]`, "plan ok · 2n 1r → sequence(2)", nil},
		{`page(s0_pg1, limit=20)`, "plan ok · 1n 1r → single", nil},
		{`page(s0_pg1)`, "plan review · 1n 1r → single", []string{"unbounded read: page s0_pg1"}},
		// A hop runs once per input row: limiting its output does not bound
		// the calls it makes over an unbounded list.
		{`Project.issues.limit(3)[id]`, "plan review · 2n 1r → sequence(2)", []string{"fan-out over unbounded input: Project.issues"}},
		{`Project.limit(2).issues.limit(3)[id]`, "plan ok · 2n 1r → sequence(2)", nil},
		{"a = Project.limit(2)\nb = a[id]\nb.issues.limit(3)[id]", "plan ok · 3n 1r → sequence(3)", nil},
		{"a = Issue{status=\"open\"}.limit(3)\na[id]", "plan ok · 2n 1r → sequence(2)", nil},
		{`Issue{status="open"}.close()`, "plan review · 2n 1r → sequence(2)", []string{"mutation: issue_close", "fan-out over unbounded input: issue_close"}},
		{`Issue{status="open"}.limit(5).close()`, "plan review · 2n 1r → sequence(2)", []string{"mutation: issue_close"}},
	}
	for _, tc := range cases {
		p, err := run(tc.program, onlyTracker, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.program, err)
		}
		if p.Summary != tc.summary || strings.Join(p.Reasons, "|") != strings.Join(tc.reasons, "|") {
			t.Errorf("%s:\n got %q %q\nwant %q %q", tc.program, p.Summary, p.Reasons, tc.summary, tc.reasons)
		}
	}
}

func TestEntriesDefaultToAllLoaded(t *testing.T) {
	p, err := run(`Team`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Nodes[0].EntryID != "kanban" {
		t.Fatalf("entry %q", p.Nodes[0].EntryID)
	}
	if _, err := Plan(nil, testCatalogs()); err == nil || err.Code != abi.CodeBadRequest {
		t.Fatalf("nil request: %v", err)
	}
}

func BenchmarkPlan(b *testing.B) {
	req := &abi.PlanRequest{
		Program: "a = Issue{project_id=\"p1\", status=\"open\"}.limit(10)\nc = a.comments\nc[id, body], a[id, title]",
		Entries: onlyTracker,
		Symbols: testSymbols(),
	}
	cats := testCatalogs()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Plan(req, cats); err != nil {
			b.Fatal(err)
		}
	}
}
