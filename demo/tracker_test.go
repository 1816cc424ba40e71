package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestTrackerAuth(t *testing.T) {
	b := newTestBackend(t)
	cases := []struct {
		name, header string
		want         int
	}{
		{"missing", "", http.StatusUnauthorized},
		{"wrong scheme", "Basic " + DefaultTrackerToken, http.StatusUnauthorized},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"token prefix", "Bearer " + DefaultTrackerToken[:5], http.StatusUnauthorized},
		{"no token", "Bearer", http.StatusUnauthorized},
		{"valid", "Bearer " + DefaultTrackerToken, http.StatusOK},
		{"scheme is case-insensitive", "bearer " + DefaultTrackerToken, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", TrackerPrefix+"/projects", nil)
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			rec := newRecorder(b, req)
			if rec.status != c.want {
				t.Fatalf("status = %d, want %d (%s)", rec.status, c.want, rec.body)
			}
			if c.want == http.StatusUnauthorized {
				if !strings.HasPrefix(rec.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("missing WWW-Authenticate header")
				}
				var e errorJSON
				rec.decode(t, &e)
				if e.Error == "" {
					t.Errorf("401 body has no error message: %s", rec.body)
				}
			}
		})
	}
	// Unknown paths and ids must not be distinguishable without a token.
	for _, p := range []string{"/nope", "/issues/iss-9999", "/issues/iss-1"} {
		if r := call(t, b, "GET", TrackerPrefix+p, nil, ""); r.status != http.StatusUnauthorized {
			t.Errorf("GET %s without token = %d, want 401", p, r.status)
		}
	}
	custom := NewBackend(Options{TrackerToken: "s3cret"})
	mustStatus(t, call(t, custom, "GET", TrackerPrefix+"/labels", nil, "s3cret"), http.StatusOK)
	mustStatus(t, call(t, custom, "GET", TrackerPrefix+"/labels", nil, DefaultTrackerToken), http.StatusUnauthorized)
	if got := custom.Secrets()[TrackerTokenEnv]; got != "s3cret" {
		t.Errorf("Secrets()[%s] = %q", TrackerTokenEnv, got)
	}
}

func newRecorder(h http.Handler, req *http.Request) resp {
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	return resp{status: rec.status, header: rec.header, body: rec.buf.Bytes()}
}

type recorder struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.buf.Write(p)
}
func (r *recorder) WriteHeader(code int) { r.status = code }

func TestTrackerPaging(t *testing.T) {
	b := newTestBackend(t)

	t.Run("pages of users", func(t *testing.T) {
		var seen []string
		sizes := []int{}
		more := []bool{}
		for offset := 0; offset < 9; offset += 3 {
			r := api(t, b, "GET", fmt.Sprintf("/users?offset=%d&limit=3", offset), nil)
			mustStatus(t, r, http.StatusOK)
			var l listJSON[userJSON]
			r.decode(t, &l)
			if l.Total != 8 || l.Offset != offset || l.Limit != 3 {
				t.Fatalf("envelope = total %d offset %d limit %d", l.Total, l.Offset, l.Limit)
			}
			sizes = append(sizes, len(l.Items))
			more = append(more, l.HasMore)
			for _, u := range l.Items {
				seen = append(seen, u.ID)
			}
		}
		if !slices.Equal(sizes, []int{3, 3, 2}) || !slices.Equal(more, []bool{true, true, false}) {
			t.Fatalf("sizes %v has_more %v, want [3 3 2] [true true false]", sizes, more)
		}
		want := []string{"usr-1", "usr-2", "usr-3", "usr-4", "usr-5", "usr-6", "usr-7", "usr-8"}
		if !slices.Equal(seen, want) {
			t.Fatalf("ids %v, want %v", seen, want)
		}
	})

	cases := []struct {
		query           string
		wantLen, offset int
		limit           int
		more            bool
	}{
		{"", 20, 0, 20, true},
		{"?offset=40", 20, 40, 20, false},
		{"?offset=50", 10, 50, 20, false},
		{"?offset=59&limit=5", 1, 59, 5, false},
		{"?offset=60", 0, 60, 20, false},
		{"?offset=1000", 0, 1000, 20, false},
		{"?limit=500", 60, 0, 100, false},
		{"?limit=100", 60, 0, 100, false},
	}
	for _, c := range cases {
		t.Run("issues"+c.query, func(t *testing.T) {
			l := listIssues(t, b, c.query)
			if len(l.Items) != c.wantLen || l.Total != 60 || l.Offset != c.offset || l.Limit != c.limit || l.HasMore != c.more {
				t.Fatalf("got len %d total %d offset %d limit %d more %v", len(l.Items), l.Total, l.Offset, l.Limit, l.HasMore)
			}
		})
	}

	for _, q := range []string{"?offset=-1", "?offset=x", "?limit=0", "?limit=-3", "?limit=ten"} {
		r := api(t, b, "GET", "/issues"+q, nil)
		mustStatus(t, r, http.StatusBadRequest)
	}

	// Walking the catalog's own paging (step 20) yields every issue once.
	var ids []string
	for offset := 0; ; offset += 20 {
		l := listIssues(t, b, fmt.Sprintf("?offset=%d&limit=20", offset))
		for _, i := range l.Items {
			ids = append(ids, i.ID)
		}
		if !l.HasMore {
			break
		}
	}
	if len(ids) != 60 || len(slices.Compact(slices.Clone(ids))) != 60 {
		t.Fatalf("walked %d ids (%d unique), want 60", len(ids), len(slices.Compact(slices.Clone(ids))))
	}
}

func TestTrackerFilters(t *testing.T) {
	b := newTestBackend(t)
	all := allIssues(t, b, "/issues", "")

	byStatus := 0
	for _, st := range trackerStatuses {
		got := allIssues(t, b, "/issues", "&status="+st)
		byStatus += len(got)
		if len(got) == 0 {
			t.Errorf("no seeded issue has status %s", st)
		}
		for _, i := range got {
			if i.Status != st {
				t.Errorf("status filter %s returned %s with %s", st, i.ID, i.Status)
			}
		}
	}
	if byStatus != len(all) {
		t.Errorf("status partitions sum to %d, want %d", byStatus, len(all))
	}

	filters := []struct {
		name  string
		query string
		keep  func(issueJSON) bool
	}{
		{"project", "&project_id=prj-2", func(i issueJSON) bool { return i.ProjectID != nil && *i.ProjectID == "prj-2" }},
		{"assignee", "&assignee_id=usr-3", func(i issueJSON) bool { return i.Assignee != nil && i.Assignee.ID == "usr-3" }},
		{"label by name", "&label=bug", func(i issueJSON) bool { return hasLabel(i, "bug") }},
		{"label by id", "&label=lbl-1", func(i issueJSON) bool { return hasLabel(i, "bug") }},
		{"priority", "&priority=2", func(i issueJSON) bool { return i.Priority == 2 }},
		{"two statuses", "&status=open&status=closed", func(i issueJSON) bool { return i.Status == "open" || i.Status == "closed" }},
		{"combined", "&project_id=prj-1&status=open&label=bug", func(i issueJSON) bool {
			return i.ProjectID != nil && *i.ProjectID == "prj-1" && i.Status == "open" && hasLabel(i, "bug")
		}},
		{"empty value is no filter", "&status=&project_id=", func(issueJSON) bool { return true }},
		{"unknown project", "&project_id=prj-99", func(issueJSON) bool { return false }},
	}
	for _, f := range filters {
		t.Run(f.name, func(t *testing.T) {
			var want []string
			for _, i := range all {
				if f.keep(i) {
					want = append(want, i.ID)
				}
			}
			var got []string
			for _, i := range allIssues(t, b, "/issues", f.query) {
				got = append(got, i.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		})
	}
	for _, q := range []string{"?status=pending", "?priority=9", "?priority=high"} {
		mustStatus(t, api(t, b, "GET", "/issues"+q, nil), http.StatusBadRequest)
	}
}

func hasLabel(i issueJSON, name string) bool {
	for _, l := range i.Labels {
		if l.Name == name {
			return true
		}
	}
	return false
}

func TestTrackerSearch(t *testing.T) {
	b := newTestBackend(t)

	score := func(id string, terms []string) int {
		var full issueJSON
		api(t, b, "GET", "/issues/"+id, nil).decode(t, &full)
		count := func(text, term string) int {
			n := 0
			for _, w := range words(text) {
				if w == term {
					n++
				}
			}
			return n
		}
		s := 0
		for _, term := range terms {
			s += 3*count(full.Title, term) + count(*full.Body, term)
		}
		return s
	}

	for _, q := range []string{"crashes", "LATENCY", "tokens logs", "login flow", "Safari"} {
		t.Run(q, func(t *testing.T) {
			got := allIssues(t, b, "/issues/search", "&q="+strings.ReplaceAll(q, " ", "+"))
			if len(got) == 0 {
				t.Fatalf("search %q found nothing in the seeded data", q)
			}
			terms := searchTerms(q)
			prev := 1 << 30
			prevID := 0
			for _, i := range got {
				s := score(i.ID, terms)
				if s == 0 {
					t.Fatalf("%s matched without containing %v", i.ID, terms)
				}
				if s > prev || (s == prev && i.Number < prevID) {
					t.Fatalf("ranking not by score desc then id asc at %s (score %d after %d)", i.ID, s, prev)
				}
				prev, prevID = s, i.Number
			}
			// Every issue that contains a term is found.
			want := 0
			for _, i := range allIssues(t, b, "/issues", "") {
				if score(i.ID, terms) > 0 {
					want++
				}
			}
			if len(got) != want {
				t.Fatalf("found %d, want %d", len(got), want)
			}
		})
	}

	t.Run("title outranks body", func(t *testing.T) {
		b := newTestBackend(t)
		var inBody, inTitle issueJSON
		r := api(t, b, "POST", "/issues", map[string]any{"title": "Quiet one", "body": "mentions wombat once"})
		mustStatus(t, r, http.StatusCreated)
		r.decode(t, &inBody)
		r = api(t, b, "POST", "/issues", map[string]any{"title": "Wombat in the title"})
		mustStatus(t, r, http.StatusCreated)
		r.decode(t, &inTitle)
		got := allIssues(t, b, "/issues/search", "&q=WOMBAT")
		if len(got) != 2 || got[0].ID != inTitle.ID || got[1].ID != inBody.ID {
			t.Fatalf("got %v, want [%s %s]", ids(got), inTitle.ID, inBody.ID)
		}
		if got[0].Body != nil {
			t.Errorf("search rows should not carry body")
		}
	})

	for _, q := range []string{"", "?q=", "?q=+!!+"} {
		mustStatus(t, api(t, b, "GET", "/issues/search"+q, nil), http.StatusBadRequest)
	}
}

func ids(is []issueJSON) []string {
	out := make([]string, len(is))
	for k, i := range is {
		out[k] = i.ID
	}
	return out
}

func TestTrackerEmbedded(t *testing.T) {
	b := newTestBackend(t)

	var p projectDetailJSON
	r := api(t, b, "GET", "/projects/prj-1", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &p)
	if p.ID != "prj-1" || p.Key != "CORE" || len(p.Members) < 3 {
		t.Fatalf("project = %+v", p)
	}
	for _, m := range p.Members {
		if m.ID == "" || m.Name == "" || m.Email == "" {
			t.Errorf("member not a full user: %+v", m)
		}
	}
	// Lists leave members out; they are a detail.
	if r := api(t, b, "GET", "/projects", nil); bytes.Contains(r.body, []byte(`"members"`)) {
		t.Errorf("project list rows carry members")
	}

	var withLabels, withAssignee bool
	for _, row := range allIssues(t, b, "/issues", "") {
		if row.Body != nil {
			t.Fatalf("list row %s carries body", row.ID)
		}
		var full issueJSON
		r := api(t, b, "GET", "/issues/"+row.ID, nil)
		mustStatus(t, r, http.StatusOK)
		r.decode(t, &full)
		if full.Body == nil || *full.Body == "" {
			t.Fatalf("%s: detail has no body", row.ID)
		}
		for _, l := range full.Labels {
			if !strings.HasPrefix(l.ID, "lbl-") || l.Name == "" || !strings.HasPrefix(l.Color, "#") {
				t.Errorf("%s: bad embedded label %+v", row.ID, l)
			}
			withLabels = true
		}
		if full.Assignee != nil {
			if !strings.HasPrefix(full.Assignee.ID, "usr-") || full.Assignee.Name == "" {
				t.Errorf("%s: bad assignee %+v", row.ID, full.Assignee)
			}
			withAssignee = true
		}
		if (full.Status == statusClosed) != (full.ClosedAt != nil) {
			t.Errorf("%s: status %s with closed_at %v", row.ID, full.Status, full.ClosedAt)
		}
	}
	if !withLabels || !withAssignee {
		t.Errorf("seed has no labelled (%v) or assigned (%v) issue", withLabels, withAssignee)
	}

	var u userJSON
	api(t, b, "GET", "/users/usr-3", nil).decode(t, &u)
	if u.ID != "usr-3" || u.Name == "" {
		t.Errorf("user = %+v", u)
	}
	var labels listJSON[labelJSON]
	api(t, b, "GET", "/labels", nil).decode(t, &labels)
	if labels.Total != len(trackerLabelSeeds) || labels.Items[0].Name != "bug" {
		t.Errorf("labels = %+v", labels)
	}
	var one listJSON[projectJSON]
	api(t, b, "GET", "/projects?id=prj-3", nil).decode(t, &one)
	if one.Total != 1 || one.Items[0].ID != "prj-3" {
		t.Errorf("project id filter = %+v", one)
	}
}

func TestTrackerLifecycle(t *testing.T) {
	b := newTestBackend(t)

	r := api(t, b, "POST", "/issues", map[string]any{
		"title": "  Wire the demo into the CLI  ", "body": "So `plasmd serve --demo` works.",
		"project_id": "prj-2", "priority": "1", "assignee_id": "usr-4", "labels": []string{"feature", "lbl-3"},
	})
	mustStatus(t, r, http.StatusCreated)
	var created issueJSON
	r.decode(t, &created)
	if created.ID != "iss-61" || created.Title != "Wire the demo into the CLI" || created.Status != statusOpen ||
		created.Priority != 1 || created.Assignee == nil || created.Assignee.ID != "usr-4" ||
		len(created.Labels) != 2 || created.Labels[1].Name != "docs" || created.ClosedAt != nil {
		t.Fatalf("created = %+v", created)
	}
	if loc := r.header.Get("Location"); loc != TrackerPrefix+"/issues/iss-61" {
		t.Errorf("Location = %q", loc)
	}

	var got issueJSON
	api(t, b, "GET", "/issues/iss-61", nil).decode(t, &got)
	if got.Title != created.Title || *got.Body != "So `plasmd serve --demo` works." {
		t.Fatalf("get after create = %+v", got)
	}
	if l := allIssues(t, b, "/issues", "&project_id=prj-2&assignee_id=usr-4"); !slices.Contains(ids(l), "iss-61") {
		t.Errorf("filtered list misses the new issue")
	}

	r = api(t, b, "PATCH", "/issues/iss-61", map[string]any{"title": "Wire the demo", "status": "in_progress", "labels": []string{"bug"}, "assignee_id": nil})
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &got)
	if got.Title != "Wire the demo" || got.Status != statusInProgress || len(got.Labels) != 1 || got.Labels[0].Name != "bug" ||
		got.Assignee != nil || got.Priority != 1 || got.UpdatedAt == created.UpdatedAt {
		t.Fatalf("after update = %+v", got)
	}
	r = api(t, b, "PATCH", "/issues/iss-61", map[string]any{"status": "closed"})
	r.decode(t, &got)
	if got.Status != statusClosed || got.ClosedAt == nil {
		t.Fatalf("closing through update = %+v", got)
	}
	r = api(t, b, "PATCH", "/issues/iss-61", map[string]any{"status": "open"})
	r.decode(t, &got)
	if got.Status != statusOpen || got.ClosedAt != nil {
		t.Fatalf("reopening = %+v", got)
	}

	r = api(t, b, "POST", "/issues/iss-61/close", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &got)
	if got.Status != statusClosed || got.ClosedAt == nil {
		t.Fatalf("close action = %+v", got)
	}
	closedAt := *got.ClosedAt
	api(t, b, "POST", "/issues/iss-61/close", nil).decode(t, &got)
	if *got.ClosedAt != closedAt {
		t.Errorf("closing twice moved closed_at from %s to %s", closedAt, *got.ClosedAt)
	}

	r = api(t, b, "POST", "/comments", map[string]any{"issue_id": "iss-61", "body": "LGTM"})
	mustStatus(t, r, http.StatusCreated)
	var c commentJSON
	r.decode(t, &c)
	if c.ID != "cmt-151" || c.Author.ID != defaultCommentAuthor || c.IssueID != "iss-61" {
		t.Fatalf("comment = %+v", c)
	}
	api(t, b, "GET", "/issues/iss-61", nil).decode(t, &got)
	if got.CommentCount != 1 {
		t.Errorf("comment_count = %d, want 1", got.CommentCount)
	}

	r = api(t, b, "DELETE", "/issues/iss-61", nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("204 with body %q", r.body)
	}
	mustStatus(t, api(t, b, "GET", "/issues/iss-61", nil), http.StatusNotFound)
	mustStatus(t, api(t, b, "DELETE", "/issues/iss-61", nil), http.StatusNotFound)
	mustStatus(t, api(t, b, "POST", "/issues/iss-61/close", nil), http.StatusNotFound)
	var cl listJSON[commentJSON]
	api(t, b, "GET", "/comments?issue_id=iss-61", nil).decode(t, &cl)
	if cl.Total != 0 {
		t.Errorf("comments of a deleted issue survive: %+v", cl)
	}
	// Ids are never reused.
	r = api(t, b, "POST", "/issues", map[string]any{"title": "next"})
	r.decode(t, &got)
	if got.ID != "iss-62" || got.ProjectID != nil || got.Priority != defaultPrio {
		t.Errorf("next create = %+v", got)
	}
}

func TestTrackerComments(t *testing.T) {
	b := newTestBackend(t)
	var all listJSON[commentJSON]
	api(t, b, "GET", "/comments?limit=100&offset=100", nil).decode(t, &all)
	if all.Total != seedTrackerComments || len(all.Items) != 50 {
		t.Fatalf("comments total %d page %d", all.Total, len(all.Items))
	}
	var full issueJSON
	api(t, b, "GET", "/issues/iss-1", nil).decode(t, &full)
	var mine listJSON[commentJSON]
	api(t, b, "GET", "/comments?issue_id=iss-1&limit=100", nil).decode(t, &mine)
	if mine.Total != full.CommentCount {
		t.Errorf("comments of iss-1: %d, comment_count %d", mine.Total, full.CommentCount)
	}
	for k, c := range mine.Items {
		if c.IssueID != "iss-1" || c.Author.Name == "" {
			t.Errorf("comment %+v", c)
		}
		if k > 0 && c.CreatedAt < mine.Items[k-1].CreatedAt {
			t.Errorf("comments not oldest first")
		}
	}
	var byAuthor listJSON[commentJSON]
	api(t, b, "GET", "/comments?author_id=usr-2&limit=100", nil).decode(t, &byAuthor)
	for _, c := range byAuthor.Items {
		if c.Author.ID != "usr-2" {
			t.Errorf("author filter returned %+v", c)
		}
	}
}

func TestTrackerErrors(t *testing.T) {
	b := newTestBackend(t)
	before := api(t, b, "GET", "/issues/iss-1", nil).body
	big := `{"title": "` + strings.Repeat("x", maxBodyBytes) + `"}`
	cases := []struct {
		name, method, path string
		body               any
		want               int
		field              string
	}{
		{"unknown issue", "GET", "/issues/iss-999", nil, 404, ""},
		{"unknown project", "GET", "/projects/prj-9", nil, 404, ""},
		{"unknown user", "GET", "/users/usr-0", nil, 404, ""},
		{"unknown endpoint", "GET", "/widgets", nil, 404, ""},
		{"too deep", "GET", "/issues/iss-1/comments/x", nil, 404, ""},
		{"patch unknown", "PATCH", "/issues/iss-999", map[string]any{"title": "x"}, 404, ""},
		{"method", "PUT", "/issues/iss-1", map[string]any{}, 405, ""},
		{"method on list", "DELETE", "/projects", nil, 405, ""},
		{"close with GET", "GET", "/issues/iss-1/close", nil, 405, ""},
		{"bad JSON", "POST", "/issues", `{"title": `, 400, ""},
		{"not an object", "POST", "/issues", `["title"]`, 400, ""},
		{"empty body", "POST", "/issues", ``, 400, ""},
		{"trailing data", "POST", "/issues", `{"title":"a"} {}`, 400, ""},
		{"too large", "POST", "/issues", big, 413, ""},
		{"missing title", "POST", "/issues", map[string]any{"body": "x"}, 422, "title"},
		{"blank title", "POST", "/issues", map[string]any{"title": "   "}, 422, "title"},
		{"null title", "PATCH", "/issues/iss-1", map[string]any{"title": nil}, 422, "title"},
		{"long title", "POST", "/issues", map[string]any{"title": strings.Repeat("é", maxTitleLen+1)}, 422, "title"},
		{"title type", "POST", "/issues", map[string]any{"title": 7}, 422, "title"},
		{"unknown field", "POST", "/issues", map[string]any{"title": "x", "assigne_id": "usr-1"}, 422, "assigne_id"},
		{"priority range", "POST", "/issues", map[string]any{"title": "x", "priority": 5}, 422, "priority"},
		{"priority type", "POST", "/issues", map[string]any{"title": "x", "priority": 1.5}, 422, "priority"},
		{"bad status", "PATCH", "/issues/iss-1", map[string]any{"status": "done"}, 422, "status"},
		{"unknown project ref", "POST", "/issues", map[string]any{"title": "x", "project_id": "prj-42"}, 422, "project_id"},
		{"unknown assignee", "PATCH", "/issues/iss-1", map[string]any{"assignee_id": "usr-42"}, 422, "assignee_id"},
		{"unknown label", "POST", "/issues", map[string]any{"title": "x", "labels": []string{"wontfix"}}, 422, "labels"},
		{"labels type", "POST", "/issues", map[string]any{"title": "x", "labels": 3}, 422, "labels"},
		{"comment without issue", "POST", "/comments", map[string]any{"body": "hi"}, 422, "issue_id"},
		{"comment on unknown issue", "POST", "/comments", map[string]any{"issue_id": "iss-0", "body": "hi"}, 422, "issue_id"},
		{"blank comment", "POST", "/comments", map[string]any{"issue_id": "iss-1", "body": " "}, 422, "body"},
		{"comment unknown author", "POST", "/comments", map[string]any{"issue_id": "iss-1", "body": "hi", "author_id": "x"}, 422, "author_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := api(t, b, c.method, c.path, c.body)
			mustStatus(t, r, c.want)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q", ct)
			}
			var e errorJSON
			r.decode(t, &e)
			if e.Error == "" || e.Field != c.field {
				t.Errorf("error body = %+v, want field %q", e, c.field)
			}
		})
	}
	// Failed writes leave no trace.
	if l := listIssues(t, b, ""); l.Total != 60 {
		t.Errorf("failed creates changed the issue count to %d", l.Total)
	}
	if after := api(t, b, "GET", "/issues/iss-1", nil).body; !bytes.Equal(before, after) {
		t.Errorf("failed updates changed iss-1:\n%s\n%s", before, after)
	}
}

func TestHealthAndUnknownRoots(t *testing.T) {
	b := newTestBackend(t)
	r := call(t, b, "GET", "/healthz", nil, "")
	mustStatus(t, r, http.StatusOK)
	if strings.TrimSpace(string(r.body)) != `{"status":"ok"}` {
		t.Errorf("healthz body %s", r.body)
	}
	mustStatus(t, call(t, b, "POST", "/healthz", nil, ""), http.StatusMethodNotAllowed)
	mustStatus(t, call(t, b, "GET", "/", nil, ""), http.StatusNotFound)
	mustStatus(t, call(t, b, "GET", "/tracker/apix", nil, ""), http.StatusNotFound)
}

// TestDeterminism checks that the same seed serves the same bytes and that
// the seed actually matters.
func TestDeterminism(t *testing.T) {
	paths := []string{"/projects?limit=100", "/projects/prj-2", "/users?limit=100", "/labels", "/issues?limit=100",
		"/issues/iss-17", "/issues/search?q=crash+timeout", "/comments?limit=100&offset=50"}
	a, b := NewBackend(Options{}), NewBackend(Options{Seed: DefaultSeed})
	other := NewBackend(Options{Seed: 7})
	differs := false
	for _, p := range paths {
		ra, rb := api(t, a, "GET", p, nil), api(t, b, "GET", p, nil)
		mustStatus(t, ra, http.StatusOK)
		if !bytes.Equal(ra.body, rb.body) {
			t.Errorf("GET %s differs between two backends with the same seed", p)
		}
		if !bytes.Equal(ra.body, api(t, other, "GET", p, nil).body) {
			differs = true
		}
	}
	if !differs {
		t.Errorf("seed 7 serves the same data as the default seed")
	}
	q := `{"query":"{ teams { nodes { id name } } issues(first: 100) { nodes { id title state estimate createdAt team { id } assignee { id } } } }"}`
	ka, kb := call(t, a, "POST", KanbanPath, q, ""), call(t, b, "POST", KanbanPath, q, "")
	mustStatus(t, ka, http.StatusOK)
	if !bytes.Equal(ka.body, kb.body) {
		t.Errorf("kanban differs between two backends with the same seed")
	}
}

// TestGoldenSeed pins the default dataset: the demo's docs and any recorded
// agent sessions quote these rows.
func TestGoldenSeed(t *testing.T) {
	b := newTestBackend(t)
	var out bytes.Buffer
	for _, p := range []string{"/projects/prj-1", "/issues/iss-1", "/issues/iss-17", "/issues?limit=100", "/issues/search?q=crashes&limit=5", "/comments?issue_id=iss-17"} {
		r := api(t, b, "GET", p, nil)
		mustStatus(t, r, http.StatusOK)
		fmt.Fprintf(&out, "GET %s\n", p)
		if err := json.Indent(&out, r.body, "", "  "); err != nil {
			t.Fatal(err)
		}
		out.WriteString("\n")
	}
	golden(t, "tracker_seed.golden", out.Bytes())

	out.Reset()
	q := `{"query":"{ teams { nodes { id key name } } users { nodes { id name email } } issues(first: 100) { nodes { id title state estimate createdAt team { id name } assignee { id name } } } }"}`
	r := call(t, b, "POST", KanbanPath, q, "")
	mustStatus(t, r, http.StatusOK)
	if err := json.Indent(&out, r.body, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden(t, "kanban_seed.golden", out.Bytes())
}

func TestConcurrentWrites(t *testing.T) {
	b := newTestBackend(t)
	const workers, each = 8, 10
	var wg sync.WaitGroup
	created := make(chan string, workers*each*2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				r := api(t, b, "POST", "/issues", map[string]any{"title": fmt.Sprintf("w%d-%d", w, k), "project_id": "prj-1"})
				if r.status != http.StatusCreated {
					t.Errorf("create: %d %s", r.status, r.body)
					return
				}
				var i issueJSON
				r.decode(t, &i)
				created <- i.ID
				q := fmt.Sprintf(`{"query":"mutation { createIssue(teamId: \"team-2\", title: \"w%d-%d\") { id } }"}`, w, k)
				kr := call(t, b, "POST", KanbanPath, q, "")
				if kr.status != http.StatusOK {
					t.Errorf("createIssue: %d %s", kr.status, kr.body)
					return
				}
				var res struct {
					Data struct{ CreateIssue struct{ ID string } }
				}
				kr.decode(t, &res)
				created <- res.Data.CreateIssue.ID
				// Reads interleave with writes.
				api(t, b, "GET", "/issues/search?q=w1", nil)
				api(t, b, "PATCH", "/issues/"+i.ID, map[string]any{"priority": 2})
			}
		}()
	}
	wg.Wait()
	close(created)
	seen := map[string]bool{}
	for id := range created {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
	if len(seen) != workers*each*2 {
		t.Fatalf("created %d rows, want %d", len(seen), workers*each*2)
	}
	if l := listIssues(t, b, ""); l.Total != seedTrackerIssues+workers*each {
		t.Errorf("tracker total %d", l.Total)
	}
}

// FuzzTrackerRequest throws arbitrary methods, paths and bodies at the
// tracker: it must never panic or answer 5xx, and must always answer JSON.
func FuzzTrackerRequest(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"GET", "/issues?offset=3&limit=2&status=open", ""},
		{"POST", "/issues", `{"title":"x","labels":["bug"],"priority":"2"}`},
		{"PATCH", "/issues/iss-3", `{"status":"closed","assignee_id":null}`},
		{"POST", "/comments", `{"issue_id":"iss-1","body":"hi"}`},
		{"DELETE", "/issues/iss-2", ""},
		{"POST", "/issues/iss-2/close", "{}"},
		{"GET", "/issues/search?q=%ff%fe", ""},
		{"POST", "/issues", `{"title":"\ud800"}`},
		{"PATCH", "/issues/iss-1", `{"labels":"bug"}`},
		{"POST", "/issues", `{"title":[[[[[[[[]]]]]]]]}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	b := newTestBackend(f)
	f.Fuzz(func(t *testing.T, method, path, body string) {
		switch method {
		case "GET", "POST", "PATCH", "DELETE", "PUT":
		default:
			method = "GET"
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://demo"+TrackerPrefix+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+DefaultTrackerToken)
		r := newRecorder(b, req)
		if r.status >= 500 && r.status != http.StatusInsufficientStorage {
			t.Fatalf("%s %s %q → %d %s", method, path, body, r.status, r.body)
		}
		if r.status != http.StatusNoContent && !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("non-JSON answer %d %q", r.status, r.header.Get("Content-Type"))
		}
	})
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":null}`, ` {"a":"b"} `, `[]`, `{`, `{"a":1}x`, `null`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeObject(data)
		if (m == nil) == (err == nil) {
			t.Fatalf("decodeObject(%q) = %v, %v", data, m, err)
		}
		if err != nil && err.Status != http.StatusBadRequest {
			t.Fatalf("status %d", err.Status)
		}
		if m != nil {
			for k := range m {
				m.str(k)
				m.integer(k)
				m.strList(k)
			}
		}
	})
}
