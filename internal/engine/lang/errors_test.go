package lang

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

type errCase struct {
	name, program string
	entries       []string
	nilSymbols    bool
	code          string
	line, col     int
	msg, hint     string // substrings
}

var errorCases = []errCase{
	// lexing and symbols
	{name: "empty", program: " \n\t\n", code: abi.CodeSyntax, line: 1, col: 1, msg: "empty program"},
	{name: "empty_search", program: `Issue~""`, code: abi.CodeType, line: 1, col: 7, msg: "a search needs words", hint: `Issue~"some words"`},
	{name: "blank_search", program: `Issue~"  "`, code: abi.CodeType, line: 1, col: 7, msg: "a search needs words"},
	{name: "bare_dollar", program: `Issue{status=$}`, code: abi.CodeSyntax, line: 1, col: 14, msg: "fill-in cue", hint: "replace $"},
	{name: "literal_newline", program: `a = Project("p1")\na.issues`, code: abi.CodeSyntax, line: 1, col: 18, msg: `literal two-character "\n"`, hint: "real newlines"},
	{name: "stray_backslash", program: `Issue(\x)`, code: abi.CodeSyntax, line: 1, col: 7},
	{name: "double_escaped", program: `Issue(\"i1\")`, code: abi.CodeSyntax, line: 1, col: 7, hint: "escaped twice"},
	{name: "unterminated_string", program: "Issue(\"i1)\nProject", code: abi.CodeSyntax, line: 1, col: 7, msg: "unterminated string"},
	{name: "bad_escape", program: `Issue("a\qb")`, code: abi.CodeSyntax, line: 1, col: 9, msg: `unknown escape \q`},
	{name: "group_by_without_aggregate", program: `Issue.group_by(status)`, code: abi.CodeSyntax, line: 1, col: 22, msg: "group_by needs at least one aggregate", hint: ".group_by(status, n=count)"},
	{name: "invalid_utf8_in_string", program: "Issue(\"iss-\xff1\")", code: abi.CodeSyntax, line: 1, col: 12, msg: "invalid UTF-8: byte 0xff", hint: "not replaced"},
	{name: "invalid_utf8_line_2", program: "a = Issue(\"é\")\nIssue(owner=\"o\xc3\")", code: abi.CodeSyntax, line: 2, col: 15, msg: "byte 0xc3"},
	{name: "invalid_utf8_in_comment", program: "Issue(\"i1\") ;; \xfe", code: abi.CodeSyntax, line: 1, col: 16, msg: "byte 0xfe"},
	{name: "bad_unicode_escape", program: `Issue("\u12")`, code: abi.CodeSyntax, line: 1, col: 8, msg: `malformed \u`},
	{name: "heredoc_unclosed", program: "Issue.create(title=<<MD\nhello\n", code: abi.CodeSyntax, line: 1, col: 20, msg: "never closed", hint: "only MD"},
	{name: "heredoc_trailing", program: "Issue.create(title=<<MD x\nhello\nMD)", code: abi.CodeSyntax, line: 1, col: 25, msg: "must end its line"},
	{name: "unknown_symbol", program: `e99("x")`, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "unknown symbol e99", hint: "call plasm_context again"},
	{name: "symbol_without_map", program: `Issue("i1").m3()`, nilSymbols: true, code: abi.CodeUnknownMethod, line: 1, col: 13, msg: "unknown symbol m3", hint: "teaching table"},
	{name: "value_symbol", program: `Issue{status=v1}`, code: abi.CodeSyntax, line: 1, col: 14, msg: "value-domain symbol", hint: "use the value itself"},
	{name: "method_wrong_entity", program: `e4("i1").m1()`, entries: bothEntries, code: abi.CodeUnknownMethod, line: 1, col: 10, msg: "m1 (close) is a method of kanban:Issue, not of tracker:Issue", hint: "kanban:Issue (e1)"},
	{name: "relation_wrong_entity", program: `e5("p1").r1`, entries: bothEntries, code: abi.CodeUnknownField, line: 1, col: 10, msg: "r1 is a relation of tracker:Issue", hint: "e4"},
	{name: "method_symbol_as_entity", program: `m3("i1")`, entries: bothEntries, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "method symbol", hint: "e4.m3(…)"},
	{name: "slot_symbol_as_value", program: `Issue{status=p4}`, code: abi.CodeType, line: 1, col: 14, msg: "p4 is a session symbol", hint: `"p4"`},
	{name: "entity_symbol_as_value", program: `Issue{title=e1}`, code: abi.CodeType, line: 1, col: 13, msg: "e1 is a session symbol for an entity", hint: `"e1"`},
	{name: "known_value_symbol_as_value", program: `Issue{title=v1}`, code: abi.CodeSyntax, line: 1, col: 13, msg: "value-domain symbol"},
	// Unknown symbol-shaped words are literal only as bare values.
	{name: "unknown_symbol_field", program: `Issue{p99="x"}`, code: abi.CodeUnknownField, line: 1, col: 7, msg: "unknown symbol p99", hint: "plasm_context"},
	{name: "unknown_symbol_relation", program: `Issue("i1").r99`, code: abi.CodeUnknownField, line: 1, col: 13, msg: "unknown symbol r99"},
	{name: "unknown_symbol_method", program: `Issue("i1").m99()`, code: abi.CodeUnknownMethod, line: 1, col: 13, msg: "unknown symbol m99"},
	{name: "unknown_symbol_param", program: `Issue.create(p99="x")`, code: abi.CodeUnknownField, line: 1, col: 14, msg: "unknown symbol p99"},
	{name: "unknown_symbol_projection", program: `Issue("i1")[p99]`, code: abi.CodeUnknownField, line: 1, col: 13, msg: "unknown symbol p99"},
	{name: "unknown_symbol_label_field", program: `Issue.create(project_id=e99.id, title="x")`, code: abi.CodeUnknownEntity, line: 1, col: 25, msg: "unknown symbol e99"},
	{name: "unknown_symbol_entity_value", program: `Issue.create(project_id=e99("p1"), title="x")`, code: abi.CodeUnknownEntity, line: 1, col: 25, msg: "unknown symbol e99"},
	{name: "unknown_symbol_qualified", program: `kanban:e99("x")`, entries: bothEntries, code: abi.CodeUnknownEntity, line: 1, col: 8, msg: "unknown symbol e99"},
	{name: "value_symbol_entity_no_map", program: `v2("x")`, nilSymbols: true, code: abi.CodeSyntax, line: 1, col: 1, msg: "value-domain symbol"},
	{name: "qualifier_symbol_mismatch", program: `kanban:e4("x")`, entries: bothEntries, code: abi.CodeUnknownEntity, line: 1, col: 1,
		msg: "e4 is tracker:Issue, not an entity of kanban", hint: "e4 belongs to catalog tracker; write e4 alone, or kanban:Issue"},
	{name: "qualifier_symbol_unknown_catalog", program: `github:e4("x")`, entries: bothEntries, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "e4 is tracker:Issue", hint: "belongs to catalog tracker"},

	// syntax
	{name: "missing_comma", program: `Issue{status="open" votes>1}`, code: abi.CodeSyntax, line: 1, col: 21, msg: `expected "}", found "votes"`},
	{name: "unclosed_paren", program: "a = Issue(\"i1\"\nb", code: abi.CodeSyntax, line: 1, col: 10, msg: "never closed"},
	{name: "unmatched_close", program: `Issue("i1"))`, code: abi.CodeSyntax, line: 1, col: 12, msg: "no matching opening"},
	{name: "roots_not_last", program: "Issue(\"i1\")\nProject(\"p1\")", code: abi.CodeSyntax, line: 1, col: 1, msg: "only the last line", hint: "bind this line"},
	{name: "binding_two_roots", program: `a = Issue("i1"), Project("p1")`, code: abi.CodeSyntax, line: 1, col: 16, msg: "expected end of line", hint: "binding holds one expression"},
	{name: "positional_arg", program: `Issue("i1").add-label("bug")`, code: abi.CodeSyntax, line: 1, col: 23, msg: "expected name=value", hint: "param=value"},
	{name: "bad_operator", program: `Issue{status:"open"}`, code: abi.CodeSyntax, line: 1, col: 13, msg: "expected an operator"},
	{name: "bad_sort_direction", program: `Issue{status="open"}.sort(votes, up)`, code: abi.CodeSyntax, line: 1, col: 34, msg: "asc or desc"},
	{name: "limit_zero", program: `Project.limit(0)`, code: abi.CodeType, line: 1, col: 15, msg: "positive whole number"},
	{name: "malformed_number", program: `Issue(12ab)`, code: abi.CodeSyntax, line: 1, col: 7, msg: "malformed number"},
	// A whole number beyond int64 became a float64 (rounded), and 007
	// became 7: Issue(007) asked the backend for id "7".
	{name: "leading_zero_id", program: `Issue(007)`, code: abi.CodeSyntax, line: 1, col: 7, msg: "number 007 has a leading zero", hint: `write 7 for the number, or "007" (quoted)`},
	{name: "leading_zero_negative", program: `Issue{votes=-01.5}`, code: abi.CodeSyntax, line: 1, col: 13, msg: "number -01.5 has a leading zero", hint: "write -1.5 for the number"},
	{name: "leading_zero_zero", program: `Issue{votes=00}`, code: abi.CodeSyntax, line: 1, col: 13, hint: "write 0 for the number"},
	{name: "whole_number_out_of_range", program: `Issue{votes=12345678901234567890}`, code: abi.CodeSyntax, line: 1, col: 13, msg: "whole number 12345678901234567890 is out of range", hint: `"12345678901234567890"`},
	{name: "empty_id", program: `Issue("")`, code: abi.CodeType, line: 1, col: 7, msg: "Issue id is empty"},
	{name: "empty_id_as_value", program: `Comment{issue_id=Issue("")}[id]`, code: abi.CodeType, line: 1, col: 24, msg: "Issue id is empty"},
	{name: "empty_id_in_chain", program: "a = Project(\"p1\")\nIssue(\"\").comments", code: abi.CodeType, line: 2, col: 7, msg: "Issue id is empty"},
	{name: "limit_over_int32", program: `Project.limit(99999999999)`, code: abi.CodeType, line: 1, col: 15, msg: "at most 2147483647, found 99999999999"},
	{name: "limit_out_of_range", program: `Project.limit(99999999999999999999999)`, code: abi.CodeSyntax, line: 1, col: 15, msg: "out of range"},
	{name: "second_line_column", program: "a = Project(\"p1\")\na.issues.limit(1)[id,, title]", code: abi.CodeSyntax, line: 2, col: 22, msg: `expected a field name, found ","`},
	{name: "unknown_aggregate", program: `Issue.aggregate(n=median(votes))`, code: abi.CodeSyntax, line: 1, col: 19, msg: "unknown aggregate"},

	// unsupported constructs parse, then are refused where they stand
	{name: "page_size_late", program: `Project.limit(3).page_size(10)`, code: abi.CodeType, line: 1, col: 18, msg: "right after the read"},
	{name: "page_size_get", program: `Project("p1").page_size(10)`, code: abi.CodeType, line: 1, col: 15, msg: "right after the read"},
	{name: "wait", program: `wait(s0_o1)`, code: abi.CodeBadRequest, line: 1, col: 1, msg: "wait(…) must be the whole program", hint: "send wait(sN_oM) on its own"},
	{name: "cancel", program: `cancel(s0_o1)`, code: abi.CodeBadRequest, line: 1, col: 1, msg: "cancel(…) must be the whole program", hint: "send cancel(sN_oM) on its own"},
	{name: "wait_beside_a_root", program: "wait(s0_o1), Project(\"p1\")", code: abi.CodeBadRequest, line: 1, col: 1, msg: "wait(…) must be the whole program", hint: "plasm_run"},
	{name: "cancel_bound", program: "x = cancel(s0_o1)\nx", code: abi.CodeBadRequest, line: 1, col: 5, msg: "cancel(…) must be the whole program"},
	{name: "bad_page_handle", program: `page(s0_o1)`, code: abi.CodeBadRequest, line: 1, col: 6, msg: "invalid page handle", hint: "operation handle"},

	// names
	{name: "unknown_entity_suggestion", program: `Isue("i1")`, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "unknown entity or label Isue", hint: "did you mean Issue?"},
	{name: "ambiguous_issue", program: `Issue("i1")`, entries: bothEntries, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "ambiguous entity Issue", hint: "tracker:Issue (e4) or kanban:Issue (e1)"},
	{name: "ambiguous_issue_no_symbols", program: "x = Project(\"p\")\nUser(\"u\")", entries: bothEntries, nilSymbols: true, code: abi.CodeUnknownEntity, line: 2, col: 1, hint: "tracker:User or kanban:User"},
	{name: "abstract_entity", program: `Node`, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "abstract"},
	{name: "unknown_catalog", program: `github:Issue("1")`, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "catalog github is not part of this session", hint: "catalogs: tracker"},
	{name: "qualified_missing_entity", program: `kanban:Comment`, entries: bothEntries, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "catalog kanban has no entity Comment", hint: "entities of kanban: Issue, Team, User"},
	{name: "entity_not_in_session", program: `e1("k1")`, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "not part of this session"},
	{name: "undefined_label", program: `a.comments`, code: abi.CodeUnknownEntity, line: 1, col: 1, msg: "unknown entity or label a"},
	{name: "label_before_binding", program: "x = b.comments\nb = Issue(\"i1\")\nx", code: abi.CodeUnknownEntity, line: 1, col: 5, msg: "used before it is bound (line 2)"},
	{name: "label_is_entity", program: "Issue = Project(\"p\")\nIssue", code: abi.CodeSyntax, line: 1, col: 1, msg: "entity name"},
	{name: "label_is_symbol", program: "p9 = Project(\"p\")\np9", nilSymbols: true, code: abi.CodeUnknownField, line: 1, col: 1, msg: "unknown symbol p9"},
	{name: "label_rebound", program: "a = Project(\"p\")\na = Project(\"q\")\na", code: abi.CodeSyntax, line: 2, col: 1, msg: "already bound at line 1"},
	{name: "label_with_parens", program: "a = Project(\"p\")\na(\"x\")", code: abi.CodeSyntax, line: 2, col: 1, msg: "label a is not an entity"},
	{name: "unknown_field_pred", program: `Issue{stauts="open"}`, code: abi.CodeUnknownField, line: 1, col: 7, msg: "Issue has no field stauts", hint: "did you mean status? fields of Issue: id, project_id, title, status"},
	{name: "unknown_projection_field", program: `Issue("i1")[id, titel]`, code: abi.CodeUnknownField, line: 1, col: 17, hint: "did you mean title?"},
	{name: "unknown_sort_field", program: `Project.sort(nme)`, code: abi.CodeUnknownField, line: 1, col: 14, hint: "did you mean name?"},
	{name: "field_not_relation", program: `Issue("i1").title`, code: abi.CodeUnknownField, line: 1, col: 13, msg: "title is a field of Issue, not a relation", hint: "[title]"},
	{name: "unknown_relation", program: `Issue("i1").coments`, code: abi.CodeUnknownField, line: 1, col: 13, msg: "Issue has no relation coments", hint: "did you mean comments? relations of Issue: comments, labels, assignee"},
	{name: "relation_with_parens", program: `Issue("i1").comments()`, code: abi.CodeUnknownMethod, line: 1, col: 13, msg: "comments is a relation", hint: ".comments"},
	{name: "unknown_method", program: `Issue("i1").clos()`, code: abi.CodeUnknownMethod, line: 1, col: 13, msg: "Issue has no method clos", hint: "did you mean close?"},
	{name: "read_as_method", program: `Issue("i1").get()`, code: abi.CodeUnknownMethod, line: 1, col: 13, msg: "get is a get"},
	{name: "projection_drops_hop_field", program: `Issue{status="open"}[title].comments`, code: abi.CodeType, line: 1, col: 29, msg: "dropped it"},

	// types and arity
	{name: "missing_required_query", program: `Comment{body~"x"}`, code: abi.CodeType, line: 1, col: 1, msg: "Comment query needs issue_id (comment_query)"},
	{name: "bare_needs_params", program: `Comment`, code: abi.CodeType, line: 1, col: 1, msg: "listing every Comment needs issue_id", hint: "Comment{issue_id=…}"},
	{name: "null_param_not_field", program: `User{user_id=null}`, code: abi.CodeType, line: 1, col: 14, msg: "user_id=null cannot be sent", hint: "drop user_id"},
	{name: "search_missing", program: `Comment~"x"`, code: abi.CodeUnknownMethod, line: 1, col: 1, msg: "Comment has no search capability", hint: "Comment{issue_id=…}"},
	{name: "no_get", program: `Comment("c1")`, code: abi.CodeUnknownMethod, line: 1, col: 1, msg: "no get capability"},
	{name: "select_value", program: `Issue{status="opne"}`, code: abi.CodeType, line: 1, col: 14, msg: "status expects one of its allowed values", hint: "did you mean open? allowed values: open, closed"},
	{name: "number_value", program: `Issue{score>"high"}`, code: abi.CodeType, line: 1, col: 13, msg: "score expects a number"},
	{name: "create_missing_required", program: `Issue.create(title="x")`, code: abi.CodeType, line: 1, col: 7, msg: "Issue.create is missing project_id", hint: "required: project_id; optional: body, assignee_id"},
	{name: "create_unknown_param", program: `Issue.create(project_id="p", title="x", color="red")`, code: abi.CodeUnknownField, line: 1, col: 41, msg: "Issue.create has no parameter color", hint: "parameters of create: project_id, title, body, assignee_id"},
	{name: "duplicate_param", program: `Issue.create(project_id="p", title="x", title="y")`, code: abi.CodeType, line: 1, col: 41, msg: "given twice"},
	{name: "action_needs_receiver", program: `Issue.close()`, code: abi.CodeType, line: 1, col: 7, msg: "close needs a receiver row", hint: `Issue("id").close(…)`},
	{name: "create_on_row", program: `Issue("i1").create(title="x")`, code: abi.CodeType, line: 1, col: 13, msg: "call it on the entity itself"},
	{name: "list_label_field", program: "a = Issue{status=\"open\"}\nIssue.create(project_id=a.project_id, title=\"x\")", code: abi.CodeType, line: 2, col: 25, msg: "a is a list", hint: ".limit(1)"},
	{name: "unknown_label_field_value", program: `Issue.create(project_id=b.id, title="x")`, code: abi.CodeUnknownEntity, line: 1, col: 25, msg: "unknown label b"},
	{name: "compound_key_single_id", program: `Repo("x")`, code: abi.CodeType, line: 1, col: 1, msg: "compound key", hint: "Repo(owner=…, name=…)"},
	{name: "compound_key_missing", program: `Repo(owner="x")`, code: abi.CodeType, line: 1, col: 1, msg: "missing its key name"},
	{name: "unknown_key", program: `Issue(ident="x")`, code: abi.CodeUnknownField, line: 1, col: 7, msg: "Issue has no key ident"},
	{name: "duplicate_pushdown", program: `Issue{status="open", status="closed"}`, code: abi.CodeType, line: 1, col: 22, msg: "status is given twice"},
	{name: "filter_label_ref", program: "a = Issue(\"i\")\nIssue{title=a.title}", code: abi.CodeType, line: 2, col: 13, msg: "only a parameter equality"},
	{name: "underscore_outside", program: `Issue{title=_.title}`, code: abi.CodeSyntax, line: 1, col: 13, msg: "only has a meaning inside a derive"},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			entries := tc.entries
			if entries == nil {
				entries = onlyTracker
			}
			syms := testSymbols()
			if tc.nilSymbols {
				syms = nil
			}
			p, err := run(tc.program, entries, syms)
			if err == nil {
				t.Fatalf("Plan(%q) = %s, want error", tc.program, p.Summary)
			}
			if p != nil {
				t.Fatal("plan and error both returned")
			}
			if err.Code != tc.code || err.Line != tc.line || err.Column != tc.col ||
				!strings.Contains(err.Message, tc.msg) || !strings.Contains(err.Hint, tc.hint) {
				t.Errorf("Plan(%q):\n got %s %d:%d %q hint %q\nwant %s %d:%d %q hint %q",
					tc.program, err.Code, err.Line, err.Column, err.Message, err.Hint,
					tc.code, tc.line, tc.col, tc.msg, tc.hint)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	big := strings.Repeat(`Project("p1"), `, MaxProgram/15+1)
	if _, err := run(big, onlyTracker, nil); err == nil || err.Code != abi.CodeBadRequest || err.Line != 1 || !strings.Contains(err.Message, "limit") {
		t.Fatalf("oversized program: %v", err)
	}
	many := strings.TrimSuffix(strings.Repeat(`Project("p1"), `, 300), ", ")
	if _, err := run(many, onlyTracker, nil); err == nil || err.Code != abi.CodeBadRequest || !strings.Contains(err.Message, "256") {
		t.Fatalf("too many nodes: %v", err)
	}
	deep := "Issue{status=" + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "}"
	if _, err := run(deep, onlyTracker, nil); err == nil || err.Code != abi.CodeBadRequest || !strings.Contains(err.Message, "64 deep") {
		t.Fatalf("deep nesting: %v", err)
	}
	var lines []string
	for i := range 300 {
		lines = append(lines, "a"+strings.Repeat("x", i%5)+"_"+itoa3(i)+" = Project(\"p\")")
	}
	if _, err := run(strings.Join(lines, "\n"), onlyTracker, nil); err == nil || err.Code != abi.CodeBadRequest {
		t.Fatalf("too many statements: %v", err)
	}
}

func itoa3(i int) string {
	return string(rune('a'+i/100)) + string(rune('a'+i/10%10)) + string(rune('a'+i%10))
}

// A search that declares nothing to carry the phrase is a catalog defect the
// planner must refuse rather than run as an unfiltered list. The shared
// fixture is valid, so the defect is made on this test's own copy.
func TestSearchWithoutPhraseParam(t *testing.T) {
	cats := testCatalogs()
	cats["tracker"].Capabilities["label_search"].Parameters = nil
	_, err := Plan(&abi.PlanRequest{Program: `Label~"red"`, Entries: onlyTracker, Symbols: testSymbols()}, cats)
	if err == nil || err.Code != abi.CodeCatalog || err.Line != 1 || err.Column != 7 ||
		!strings.Contains(err.Message, "Label search label_search declares no parameter to carry the search phrase") ||
		!strings.Contains(err.Hint, "filter on the host") {
		t.Fatalf("got %v", err)
	}
}
