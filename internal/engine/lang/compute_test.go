package lang

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// The forms of Plasm's wider grammar: computes, derive, effects, render,
// reverse traversal, foreign predicates and the small syntax additions.
func init() {
	goldenCases = append(goldenCases, []struct {
		name, program string
		entries       []string
	}{
		{"aggregate", `Issue{status="open"}.aggregate(n=count, t=sum(score), hi=max(votes))`, nil},
		{"aggregate_sugar", `Issue{status="open"}.limit(10).aggregate(count, sum(votes))`, nil},
		{"group_by_sort", `Issue{project_id="p1"}.group_by(status, n=count).sort(n, desc)[status, n]`, nil},
		{"singleton", `Issue{status="open"}.limit(5).singleton()`, nil},
		{"sort_words", `Project.sort(name, descending).limit(3)[id, name]`, nil},
		{"derive", "hits = Issue~\"crash\".limit(5)\ncards = hits => {t: _.title, kind: \"bug\"}\nhits[id], cards", nil},
		{"effect_update", "open = Issue{status=\"open\"}.limit(3)\nsync = open => Issue(_.id).update(title=_.title, status=\"closed\")\nsync", nil},
		{"effect_fixed_receiver", "items = Issue(\"i1\")[id, title]\nsync = items => Issue(\"i1\").update(title=_.title)\nsync", nil},
		{"effect_create", "src = Issue{status=\"open\"}.limit(2)\nc = src => Comment.create(issue_id=_.id, body=_.title)\nc", nil},
		{"render", "hdr = Issue(\"i1\")[id, title] <<MD\n{{len .rows}} row(s): {{range .rows}}{{.id}}{{end}}\nMD\nhdr", nil},
		{"render_content", "hdr = Issue{status=\"open\"}.limit(1)[title] <<T\n{{(index .rows 0).title}}\nT\nIssue.create(project_id=\"p1\", title=hdr.content)", nil},
		{"text_binding", "note = <<EOF\nhello\nEOF\none = Project.limit(1)[name]\none, note", nil},
		{"reverse_param", `Issue("i1").^Comment{body~"ok"}`, nil},
		{"reverse_field", `Project("p1").^Issue{status="open"}[id]`, nil},
		{"foreign_pred", `Issue{Project.name="Core", status="open"}.limit(5)[id]`, nil},
		{"foreign_pred_field_name", `Comment{issue_id="i1", issue.status="open"}[id]`, nil},
		{"label_as_ref", "top = Issue(\"i1\")\nComment{issue_id=top}[id]", nil},
		{"method_no_parens", `Issue("i1").close`, nil},
		{"comments", ";; list projects\nProject.limit(2)[id] ;; trailing ;; more\n;; end", nil},
		{"dotdot_args", `Issue.create(project_id="p1", title="x", ..)`, nil},
		{"phrase_value", `Issue{title=crash on login}.limit(1)[id]`, nil},
		{"phrase_search", `Issue~login bug`, nil},
		{"phrase_search_postfix", `Issue~login bug.limit(2)[id]`, nil},
		{"page_size", `e4{p4="open"}.page_size(10)[id, title]`, nil},
		{"interpolate_label", "top = Issue(\"i1\")\nComment.create(issue_id=top, body=\"Re: ${top.title} (${top})\")", nil},
		{"interpolate_row", "src = Issue{status=\"open\"}.limit(2)\nc = src => Comment.create(issue_id=_.id, body=<<T\nabout ${_.title}\nT)\nc", nil},
		{"follow_ref_field", `Issue{status="open"}.limit(3).project_id[id, name]`, nil},
		{"dedupe", `Issue{project_id="p1"}.dedupe(status)[id, status]`, nil},
		{"label_named_like_tag", "note = <<note\nx\nnote\nnote", nil},
	}...)
	errorCases = append(errorCases, []errCase{
		// agent mistakes, each with its own hint
		{name: "dollar_search", program: `Issue~$`, code: abi.CodeSyntax, line: 1, col: 7, msg: "`~$` was copied", hint: `in quotes after ~`},
		{name: "dollar_search_symbol", program: `e4~$`, code: abi.CodeSyntax, line: 1, col: 4, msg: "`~$`", hint: "quotes"},
		{name: "dotdot_pred", program: `Issue{status=..}`, code: abi.CodeSyntax, line: 1, col: 14, msg: "only allowed as the last argument", hint: "remove `..`"},
		{name: "dotdot_first", program: `Issue.create(.., title="x")`, code: abi.CodeSyntax, line: 1, col: 14, hint: "remove `..`"},
		{name: "heredoc_tag_in_body", program: "Issue.create(project_id=\"p1\", title=<<MD\nline\nMD\nmore text\nMD)", code: abi.CodeSyntax, line: 5, col: 1, msg: "already closed at line 3", hint: "pick a tag that never appears alone"},
		{name: "heredoc_tag_in_body_lexerr", program: "Issue.create(project_id=\"p1\", title=<<MD\nMD\ncosts $5\nMD)", code: abi.CodeSyntax, line: 4, col: 1, msg: "already closed at line 2"},
		{name: "slot_as_relation", program: `e4("i1").p5`, code: abi.CodeUnknownField, line: 1, col: 10, msg: "p5 is a field symbol (p#)", hint: "[p5]"},
		{name: "relation_as_field", program: `e4("i1")[r1]`, code: abi.CodeUnknownField, line: 1, col: 10, msg: "r1 is a relation symbol (r#)", hint: ".r1"},
		{name: "relation_as_pred", program: `e4{r1="x"}`, code: abi.CodeUnknownField, line: 1, col: 4, msg: "relation symbol", hint: ".r1"},
		{name: "single_semicolon", program: `Project;`, code: abi.CodeSyntax, line: 1, col: 8, hint: ";;"},
		// new forms, refused where they cannot mean anything
		{name: "union_ctor", program: `Issue("i1").update(v1{title="x"})`, code: abi.CodeType, line: 1, col: 20, msg: "union constructor v1"},
		{name: "union_ctor_mixed", program: `Issue("i1").update(v1{title="x"}, status="open")`, code: abi.CodeSyntax, line: 1, col: 33, msg: "only argument"},
		{name: "sum_of_text", program: `Issue{status="open"}.aggregate(s=sum(title))`, code: abi.CodeType, line: 1, col: 38, msg: "needs a number"},
		{name: "aggregate_unknown_field", program: `Project.aggregate(s=max(stars))`, code: abi.CodeUnknownField, line: 1, col: 25, hint: "fields"},
		{name: "group_column_twice", program: `Project.group_by(name, name=count)`, code: abi.CodeType, line: 1, col: 24, msg: "named twice"},
		{name: "render_jinja", program: "r = Project[name] <<MD\n{{ rows|length }} projects\nMD\nr", code: abi.CodeSyntax, line: 2, col: 1, msg: "Jinja", hint: "len .rows"},
		{name: "render_define", program: "r = Project[name] <<MD\nok\n{{define \"x\"}}y{{end}}\nMD\nr", code: abi.CodeSyntax, line: 2, col: 1, msg: "define"},
		{name: "render_label_whole", program: "hdr = Project.limit(1)[name] <<T\n{{len .rows}}\nT\nIssue.create(project_id=\"p1\", title=hdr)", code: abi.CodeType, line: 4, col: 37, hint: "hdr.content"},
		{name: "render_list_content", program: "txt = Project.limit(2)[name] <<T\nx\nT\nall = Project.limit(1)[name, id]\nIssue.create(project_id=all.id, title=txt.contnt)", code: abi.CodeUnknownField, line: 5, col: 43, hint: "content"},
		{name: "effect_read_per_row", program: "a = Issue.limit(2)\nb = a => Comment{issue_id=_.id}\nb", code: abi.CodeType, line: 2, col: 27, msg: "only fill a method's arguments"},
		{name: "effect_get_per_row", program: "a = Issue.limit(2)\nb = a => Issue(_.id)\nb", code: abi.CodeType, line: 2, col: 10, msg: "only fill a method's arguments"},
		{name: "effect_no_method", program: "a = Issue.limit(2)\nb = a => Project(\"p1\")\nb", code: abi.CodeType, line: 2, col: 10, msg: "must call a method"},
		{name: "effect_unknown_label", program: "b = a => Issue(_.id).close()\nb", code: abi.CodeUnknownEntity, line: 1, col: 5, msg: "unknown label a"},
		{name: "effect_unknown_field", program: "a = Issue.limit(2)\nb = a => Issue(_.id).update(title=_.titel)\nb", code: abi.CodeUnknownField, line: 2, col: 37, hint: "did you mean title?"},
		{name: "derive_projection_dropped", program: "a = Issue.limit(2)[id]\nb = a => {t: _.title}\nb", code: abi.CodeUnknownField, line: 2, col: 16, msg: "dropped by the projection"},
		{name: "foreign_unknown", program: `Issue{Team.name="x"}`, code: abi.CodeUnknownField, line: 1, col: 7, msg: "Issue has no reference to Team", hint: "project_id → Project"},
		{name: "foreign_unknown_field", program: `Issue{Project.nme="x"}`, code: abi.CodeUnknownField, line: 1, col: 15, hint: "did you mean name?"},
		{name: "reverse_no_ref", program: `Project("p1").^User`, code: abi.CodeType, line: 1, col: 16, msg: "no field or query parameter referencing Project"},
		{name: "computed_unknown_column", program: `Project.group_by(name, n=count).sort(m)`, code: abi.CodeUnknownField, line: 1, col: 38, msg: "no column m"},
		{name: "dedupe_unknown", program: `Project.dedupe(nam)`, code: abi.CodeUnknownField, line: 1, col: 16, hint: "did you mean name?"},
		{name: "interp_outside_call", program: `Issue{title="${a.b}"}`, code: abi.CodeType, line: 1, col: 13, msg: "only in a method's arguments"},
		{name: "interp_unknown_label", program: `Comment.create(issue_id="i1", body="${nope.title}")`, code: abi.CodeUnknownEntity, line: 1, col: 36, msg: "names no bound label"},
		{name: "interp_bad", program: `Comment.create(issue_id="i1", body="${1x}")`, code: abi.CodeSyntax, line: 1, col: 36, msg: "not a reference"},
		{name: "interp_unclosed", program: `Comment.create(issue_id="i1", body="${top.title")`, code: abi.CodeSyntax, line: 1, col: 36, msg: "unclosed"},
		{name: "interp_row_outside_effect", program: `Comment.create(issue_id="i1", body="${_.title}")`, code: abi.CodeSyntax, line: 1, col: 36, msg: "only has a meaning inside"},
		{name: "interp_list", program: "a = Issue{status=\"open\"}\nComment.create(issue_id=\"i1\", body=\"${a.title}\")", code: abi.CodeType, line: 2, col: 36, msg: "a is a list"},
		{name: "singleton_list_ref_ok_but_list", program: "a = Issue{status=\"open\"}.limit(2)\nIssue.create(project_id=a.project_id, title=\"x\")", code: abi.CodeType, line: 2, col: 25, msg: "a is a list"},
	}...)
}

// Verdicts of the new forms: a compute over a whole collection and a
// mutating for-each are review; bounded computes are not.
func TestComputeVerdicts(t *testing.T) {
	cases := []struct {
		program, verdict, reason string
	}{
		{`Issue{status="open"}.aggregate(n=count)`, plan.VerdictReview, "full-collection compute: aggregate over Issue"},
		{`Project.limit(10).aggregate(n=count)`, plan.VerdictOK, ""},
		{`Issue.group_by(status, n=count)`, plan.VerdictReview, "full-collection compute: group_by over Issue"},
		{"a = Project.limit(3)\nb = a => {n: _.name}\nb", plan.VerdictOK, ""},
		{"a = Project\nb = a => {n: _.name}\nb", plan.VerdictReview, "full-collection compute: derive over Project"},
		{"a = Issue{status=\"open\"}\nb = a => Issue(_.id).close()\nb", plan.VerdictReview, "for-each over unbounded input: issue_close"},
		{"a = Issue(\"i1\")[id]\nb = a => Issue(_.id).close()\nb", plan.VerdictReview, "mutation: issue_close"},
		{"t = Issue(\"i1\")[title] <<T\n{{len .rows}}\nT\nt", plan.VerdictOK, ""},
		{`Issue("i1").singleton()`, plan.VerdictOK, ""},
		{"note = <<EOF\nx\nEOF\nnote", plan.VerdictOK, ""},
	}
	for _, tc := range cases {
		p, err := run(tc.program, onlyTracker, testSymbols())
		if err != nil {
			t.Fatalf("%q: %v", tc.program, err)
		}
		if p.Verdict != tc.verdict || tc.reason != "" && !strings.Contains(strings.Join(p.Reasons, "|"), tc.reason) {
			t.Errorf("%q: %s %v, want %s with %q", tc.program, p.Verdict, p.Reasons, tc.verdict, tc.reason)
		}
	}
}

// ${…} inside text names fields by wire name or by their taught p#.
func TestInterpolationSymbols(t *testing.T) {
	a, err := run("top = Issue(\"i1\")\nComment.create(issue_id=top, body=\"${top.p5}\")", onlyTracker, testSymbols())
	if err != nil {
		t.Fatal(err)
	}
	b, err := run("top = Issue(\"i1\")\nComment.create(issue_id=top, body=\"${top.title}\")", onlyTracker, testSymbols())
	if err != nil {
		t.Fatal(err)
	}
	if normalise(a) != normalise(b) {
		t.Fatalf("p5 and title differ:\n%s\n%s", normalise(a), normalise(b))
	}
}

// An effect runs once per input row, with _.field taken from the row.
func TestEffectPlan(t *testing.T) {
	p, err := run("open = Issue{status=\"open\"}.limit(3)\nsync = open => Issue(_.id).update(title=_.title, status=\"closed\")\nsync", onlyTracker, testSymbols())
	if err != nil {
		t.Fatal(err)
	}
	n := p.Nodes[p.Roots[0].Node]
	if n.Op != plan.OpMutate || n.EachRow == nil || n.Input < 0 || n.Args["status"] != "closed" || len(n.ArgRefs) != 0 {
		t.Fatalf("effect node %+v", n)
	}
	got := map[string]string{}
	for _, b := range n.EachRow.Binds {
		got[b.Var] = b.Field
	}
	if got["id"] != "id" || got["title"] != "title" {
		t.Fatalf("binds %v", n.EachRow.Binds)
	}
}
