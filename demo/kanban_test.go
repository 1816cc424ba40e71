package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

type gqlResult struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// gql posts a GraphQL request and decodes data into out (when non-nil).
func gql(t testing.TB, h http.Handler, query string, vars map[string]any, wantStatus int, out any) gqlResult {
	t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	r := call(t, h, "POST", KanbanPath, body, "")
	mustStatus(t, r, wantStatus)
	var res gqlResult
	r.decode(t, &res)
	if wantStatus == http.StatusOK && len(res.Errors) > 0 {
		t.Fatalf("unexpected errors: %s", r.body)
	}
	if wantStatus != http.StatusOK && len(res.Errors) == 0 {
		t.Fatalf("status %d without errors: %s", wantStatus, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			t.Fatalf("decoding data %s: %v", res.Data, err)
		}
	}
	return res
}

type pageInfo struct {
	EndCursor   *string `json:"endCursor"`
	HasNextPage bool    `json:"hasNextPage"`
}

type kIssueConn struct {
	Issues struct {
		Nodes      []kIssue `json:"nodes"`
		PageInfo   pageInfo `json:"pageInfo"`
		TotalCount int      `json:"totalCount"`
	} `json:"issues"`
}

const issuesQuery = `query($teamId: ID, $state: String, $assigneeId: ID, $first: Int, $after: String) {
  issues(teamId: $teamId, state: $state, assigneeId: $assigneeId, first: $first, after: $after) {
    nodes { id title state estimate createdAt team { id name } assignee { id name } }
    pageInfo { endCursor hasNextPage }
    totalCount
  }
}`

// walkIssues follows endCursor until hasNextPage is false.
func walkIssues(t testing.TB, h http.Handler, vars map[string]any, first int) []kIssue {
	t.Helper()
	var out []kIssue
	v := map[string]any{"first": first}
	for k, x := range vars {
		v[k] = x
	}
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("pagination does not end")
		}
		var c kIssueConn
		gql(t, h, issuesQuery, v, http.StatusOK, &c)
		out = append(out, c.Issues.Nodes...)
		if !c.Issues.PageInfo.HasNextPage {
			return out
		}
		if c.Issues.PageInfo.EndCursor == nil {
			t.Fatal("hasNextPage without endCursor")
		}
		v["after"] = *c.Issues.PageInfo.EndCursor
	}
}

func TestKanbanTeams(t *testing.T) {
	b := newTestBackend(t)
	var p1, p2 struct {
		Teams struct {
			Nodes    []kTeam  `json:"nodes"`
			PageInfo pageInfo `json:"pageInfo"`
		} `json:"teams"`
	}
	q := `query($first: Int, $after: String) { teams(first: $first, after: $after) { nodes { id key name } pageInfo { endCursor hasNextPage } } }`
	gql(t, b, q, map[string]any{"first": 2}, http.StatusOK, &p1)
	if len(p1.Teams.Nodes) != 2 || !p1.Teams.PageInfo.HasNextPage || p1.Teams.Nodes[0].ID != "team-1" {
		t.Fatalf("first page = %+v", p1.Teams)
	}
	gql(t, b, q, map[string]any{"first": 2, "after": *p1.Teams.PageInfo.EndCursor}, http.StatusOK, &p2)
	if len(p2.Teams.Nodes) != 1 || p2.Teams.PageInfo.HasNextPage || p2.Teams.Nodes[0].ID != "team-3" {
		t.Fatalf("second page = %+v", p2.Teams)
	}

	var one struct{ Team *kTeam }
	gql(t, b, `{ team(id: "team-2") { id key name } }`, nil, http.StatusOK, &one)
	if one.Team == nil || one.Team.Key != "GRW" {
		t.Fatalf("team = %+v", one.Team)
	}
	gql(t, b, `{ team(id: "team-9") { id } }`, nil, http.StatusOK, &one)
	if one.Team != nil {
		t.Fatalf("unknown team = %+v", one.Team)
	}

	var users struct {
		Users struct{ Nodes []kUser } `json:"users"`
	}
	gql(t, b, `{ users { nodes { id name email } } }`, nil, http.StatusOK, &users)
	if len(users.Users.Nodes) != len(kanbanUserSeeds) || users.Users.Nodes[1].ID != "kusr-2" {
		t.Fatalf("users = %+v", users)
	}
}

func TestKanbanIssuePaging(t *testing.T) {
	b := newTestBackend(t)
	for _, first := range []int{1, 7, 20, 100} {
		all := walkIssues(t, b, nil, first)
		got := make([]string, len(all))
		for k, i := range all {
			got[k] = i.ID
		}
		if len(got) != seedKanbanIssues {
			t.Fatalf("first=%d: walked %d issues, want %d", first, len(got), seedKanbanIssues)
		}
		uniq := slices.Clone(got)
		slices.Sort(uniq)
		if len(slices.Compact(uniq)) != len(got) {
			t.Fatalf("first=%d: duplicates in %v", first, got)
		}
	}

	// Filters partition the board.
	total := 0
	for _, team := range []string{"team-1", "team-2", "team-3"} {
		for _, i := range walkIssues(t, b, map[string]any{"teamId": team}, 20) {
			if i.Team == nil || i.Team.ID != team {
				t.Fatalf("team filter %s returned %+v", team, i)
			}
			total++
		}
	}
	if total != seedKanbanIssues {
		t.Errorf("team partitions sum to %d", total)
	}
	states := 0
	for _, st := range kanbanStates {
		got := walkIssues(t, b, map[string]any{"state": st}, 20)
		if len(got) == 0 {
			t.Errorf("no seeded card in %s", st)
		}
		for _, i := range got {
			if i.State != st {
				t.Fatalf("state filter %s returned %+v", st, i)
			}
		}
		states += len(got)
	}
	if states != seedKanbanIssues {
		t.Errorf("state partitions sum to %d", states)
	}
	for _, i := range walkIssues(t, b, map[string]any{"assigneeId": "kusr-1"}, 20) {
		if i.Assignee == nil || i.Assignee.ID != "kusr-1" {
			t.Fatalf("assignee filter returned %+v", i)
		}
	}

	var empty kIssueConn
	gql(t, b, issuesQuery, map[string]any{"first": 0}, http.StatusOK, &empty)
	if len(empty.Issues.Nodes) != 0 || !empty.Issues.PageInfo.HasNextPage || empty.Issues.PageInfo.EndCursor != nil {
		t.Errorf("first: 0 = %+v", empty.Issues)
	}
	gql(t, b, issuesQuery, map[string]any{"teamId": "team-42"}, http.StatusOK, &empty)
	if len(empty.Issues.Nodes) != 0 || empty.Issues.PageInfo.HasNextPage || empty.Issues.TotalCount != 0 {
		t.Errorf("unknown team = %+v", empty.Issues)
	}
}

func TestKanbanIssueAndCreate(t *testing.T) {
	b := newTestBackend(t)
	var one struct{ Issue *kIssue }
	gql(t, b, `query($id: ID!) { issue(id: $id) { id title state estimate createdAt team { id name } assignee { id name } } }`,
		map[string]any{"id": "kiss-5"}, http.StatusOK, &one)
	if one.Issue == nil || one.Issue.ID != "kiss-5" || one.Issue.Title == "" || one.Issue.Team == nil ||
		!slices.Contains(kanbanStates, one.Issue.State) {
		t.Fatalf("issue = %+v", one.Issue)
	}
	gql(t, b, `{ issue(id: "kiss-999") { id } }`, nil, http.StatusOK, &one)
	if one.Issue != nil {
		t.Fatalf("unknown issue = %+v", one.Issue)
	}

	var created struct{ CreateIssue *kIssue }
	gql(t, b, `mutation($teamId: ID!, $title: String!, $estimate: Int, $assigneeId: ID) {
	  createIssue(teamId: $teamId, title: $title, estimate: $estimate, assigneeId: $assigneeId) { id title state estimate team { id name } assignee { id name } }
	}`, map[string]any{"teamId": "team-3", "title": " Draft empty states ", "estimate": 3, "assigneeId": "kusr-6"}, http.StatusOK, &created)
	c := created.CreateIssue
	if c == nil || c.ID != "kiss-41" || c.Title != "Draft empty states" || c.State != stateTodo ||
		c.Estimate == nil || *c.Estimate != 3 || c.Team.ID != "team-3" || c.Assignee == nil || c.Assignee.ID != "kusr-6" {
		t.Fatalf("created = %+v", c)
	}
	gql(t, b, `{ issue(id: "kiss-41") { id title team { id } } }`, nil, http.StatusOK, &one)
	if one.Issue == nil || one.Issue.Title != "Draft empty states" {
		t.Fatalf("issue after create = %+v", one.Issue)
	}
	inTeam := walkIssues(t, b, map[string]any{"teamId": "team-3", "state": "todo"}, 5)
	if !slices.ContainsFunc(inTeam, func(i kIssue) bool { return i.ID == "kiss-41" }) {
		t.Fatalf("team-3 todo list misses kiss-41")
	}
	if n := len(walkIssues(t, b, nil, 100)); n != seedKanbanIssues+1 {
		t.Fatalf("board has %d issues after one create", n)
	}
}

func TestKanbanErrors(t *testing.T) {
	b := newTestBackend(t)
	deep := "{" + strings.Repeat("a {", maxQueryNesting) + strings.Repeat("}", maxQueryNesting+1)
	cases := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"bad JSON", `{"query": `, 400, "invalid JSON"},
		{"no query", map[string]any{"variables": map[string]any{}}, 400, "query is required"},
		{"query type", map[string]any{"query": 3}, 400, "query must be a string"},
		{"variables type", map[string]any{"query": "{ teams { totalCount } }", "variables": []int{1}}, 400, "variables"},
		{"syntax", map[string]any{"query": "{ teams { "}, 400, "Syntax Error"},
		{"unknown field", map[string]any{"query": "{ widgets }"}, 400, "widgets"},
		{"too deep", map[string]any{"query": deep}, 400, "nests deeper"},
		{"invalid cursor", map[string]any{"query": `{ issues(after: "bogus") { totalCount } }`}, 400, "invalid cursor"},
		{"first too large", map[string]any{"query": `{ teams(first: 101) { totalCount } }`}, 400, "first must be"},
		{"bad state", map[string]any{"query": `{ issues(state: "blocked") { totalCount } }`}, 400, "state must be"},
		{"missing arg", map[string]any{"query": `mutation { createIssue(teamId: "team-1") { id } }`}, 400, "title"},
		{"unknown team", map[string]any{"query": `mutation { createIssue(teamId: "team-9", title: "x") { id } }`}, 422, "does not exist"},
		{"blank title", map[string]any{"query": `mutation { createIssue(teamId: "team-1", title: "  ") { id } }`}, 422, "blank"},
		{"bad estimate", map[string]any{"query": `mutation { createIssue(teamId: "team-1", title: "x", estimate: -1) { id } }`}, 422, "estimate"},
		{"unknown assignee", map[string]any{"query": `mutation { createIssue(teamId: "team-1", title: "x", assigneeId: "kusr-0") { id } }`}, 422, "does not exist"},
	}
	// Fragments that spread 2^12 fields, and fragment cycles, are refused
	// before graphql-go's validator (which would recurse forever) sees them.
	var explode strings.Builder
	explode.WriteString(`{ issue(id: "kiss-1") { ...F0 } }`)
	for k := range 12 {
		fmt.Fprintf(&explode, " fragment F%d on Issue { ...F%d ...F%d }", k, k+1, k+1)
	}
	explode.WriteString(" fragment F12 on Issue { id }")
	cases = append(cases, []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"fragment explosion", map[string]any{"query": explode.String()}, 400, "more than"},
		{"self fragment", map[string]any{"query": `fragment A on Issue { ...A } { issue(id: "kiss-1") { ...A } }`}, 400, "spreads itself"},
		{"fragment cycle", map[string]any{"query": `fragment A on Issue { id ...B } fragment B on Issue { ...A } { issue(id: "kiss-1") { id } }`}, 400, "spreads itself"},
		{"duplicate fragment", map[string]any{"query": `fragment A on Issue { id } fragment A on Issue { title } { issue(id: "kiss-1") { ...A } }`}, 400, "defined twice"},
		{"untyped variable", map[string]any{"query": "query($A:){A}"}, 400, ""},
		{"too many fields", map[string]any{"query": "{ teams { nodes { " + strings.Repeat("id ", maxSelections) + "} } }"}, 400, "more than"},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, b, "POST", KanbanPath, c.body, "")
			mustStatus(t, r, c.status)
			var res gqlResult
			r.decode(t, &res)
			if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, c.msg) {
				t.Fatalf("errors = %+v, want one containing %q", res.Errors, c.msg)
			}
		})
	}
	mustStatus(t, call(t, b, "GET", KanbanPath, nil, ""), http.StatusMethodNotAllowed)
	// A partial result is a success with errors.
	r := call(t, b, "POST", KanbanPath, map[string]any{"query": `mutation { a: createIssue(teamId: "team-1", title: "ok") { id } b: createIssue(teamId: "nope", title: "x") { id } }`}, "")
	mustStatus(t, r, http.StatusOK)
	if n := len(walkIssues(t, b, nil, 100)); n != seedKanbanIssues+1 {
		t.Fatalf("board has %d issues, want only the valid create", n)
	}
}

// TestKanbanRootPagingKeys covers clients that merge paging values into the
// body root instead of variables.
func TestKanbanRootPagingKeys(t *testing.T) {
	b := newTestBackend(t)
	q := `query($first: Int, $after: String) { issues(first: $first, after: $after) { nodes { id } pageInfo { endCursor hasNextPage } } }`
	r := call(t, b, "POST", KanbanPath, map[string]any{"query": q, "variables": map[string]any{}, "first": 5}, "")
	mustStatus(t, r, http.StatusOK)
	var res struct {
		Data kIssueConn `json:"data"`
	}
	r.decode(t, &res)
	if len(res.Data.Issues.Nodes) != 5 {
		t.Fatalf("root first ignored: %s", r.body)
	}
	// variables win over root keys.
	r = call(t, b, "POST", KanbanPath, map[string]any{"query": q, "variables": map[string]any{"first": 2}, "first": 5, "after": *res.Data.Issues.PageInfo.EndCursor}, "")
	r.decode(t, &res)
	if len(res.Data.Issues.Nodes) != 2 || res.Data.Issues.Nodes[0].ID != "kiss-6" {
		t.Fatalf("merge = %s", r.body)
	}
}

func TestCursor(t *testing.T) {
	for _, n := range []int{0, 1, 19, 12345} {
		got, err := decodeCursor(encodeCursor(n))
		if err != nil || got != n {
			t.Errorf("roundtrip %d = %d, %v", n, got, err)
		}
	}
	for _, c := range []string{"", "!!", "a2FuYmFuOnYxOi0x", encodeCursor(3) + "!", "a2FuYmFuOnYxOjAx"} {
		if _, err := decodeCursor(c); !errors.Is(err, errInvalidCursor) {
			t.Errorf("decodeCursor(%q) err = %v, want errInvalidCursor", c, err)
		}
	}
}

func TestCheckNesting(t *testing.T) {
	cases := []struct {
		q  string
		ok bool
	}{
		{"{ a { b } }", true},
		{strings.Repeat("{", 33), false},
		{strings.Repeat("{", 32), true},
		{`{ a(s: "` + strings.Repeat("{", 100) + `") }`, true},
		{`{ a(s: """` + strings.Repeat("{", 100) + `""") }`, true},
		{"# " + strings.Repeat("{", 100) + "\n{ a }", true},
		{`{ a(s: "\"` + strings.Repeat("{", 40) + `") }`, true},
		{strings.Repeat("}", 50) + strings.Repeat("{", 20), true},
	}
	for _, c := range cases {
		if err := checkNesting(c.q, maxQueryNesting); (err == nil) != c.ok {
			t.Errorf("checkNesting(%.40q) = %v, want ok=%v", c.q, err, c.ok)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{encodeCursor(0), encodeCursor(99), "", "====", "a2FuYmFuOnYxOi0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		n, err := decodeCursor(c)
		if err != nil {
			return
		}
		if n < 0 || encodeCursor(n) != c {
			t.Fatalf("decodeCursor(%q) = %d, which does not re-encode to the input", c, n)
		}
	})
}

// FuzzKanbanRequest sends arbitrary bodies to the GraphQL endpoint: no panic,
// no 5xx, and always a JSON answer.
func FuzzKanbanRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ teams { nodes { id } } }"}`,
		`{"query":"query($f: Int){ issues(first: $f) { nodes { id } } }","variables":{"f":"x"}}`,
		`{"query":"mutation { createIssue(teamId: \"team-1\", title: \"t\") { id } }"}`,
		`{"query":"{ issue(id: 1) { id team { id } } }","operationName":"Nope"}`,
		`{"query":"{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{"}`,
		`{"query":"fragment A on Issue { ...A } { issue(id: \"kiss-1\") { ...A } }"}`,
		`{"query":"{ teams(after: \"a2FuYmFuOnYxOjk5OTk5OTk5OTk5OTk5OTk5OTk5\") { totalCount } }"}`,
		`[]`, `{"query": null}`,
		`{"query":"fragment A on Issue { id ...B } fragment B on Issue { ...A } { issue(id: \"kiss-1\") { ...A } }"}`,
		`{"query":"{ issues { nodes { ... on Issue { ... on Issue { id } } } } }"}`,
	} {
		f.Add(s)
	}
	b := newTestBackend(f)
	f.Fuzz(func(t *testing.T, body string) {
		req, _ := http.NewRequest("POST", "http://demo"+KanbanPath, strings.NewReader(body))
		r := newRecorder(b, req)
		if r.status >= 500 {
			t.Fatalf("%q → %d %s", body, r.status, r.body)
		}
		if !json.Valid(r.body) {
			t.Fatalf("%q → invalid JSON %s", body, r.body)
		}
	})
}

func FuzzCheckNesting(f *testing.F) {
	for _, s := range []string{"{}", `"{"`, `"""{"""`, "#{\n}", `"\`, `"""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		// Must terminate and never report depth beyond what the text has.
		if checkNesting(q, maxQueryNesting) != nil && strings.Count(q, "{")+strings.Count(q, "(")+strings.Count(q, "[") <= maxQueryNesting {
			t.Fatalf("rejected %q with too few brackets", q)
		}
	})
}
