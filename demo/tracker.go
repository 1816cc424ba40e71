package demo

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TrackerPrefix is the path under which the tracker REST API is served.
const TrackerPrefix = "/tracker/api"

// Paging defaults of the tracker list endpoints.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

const defaultCommentAuthor = "usr-1"

// listJSON is the envelope of every tracker list endpoint.
type listJSON[T any] struct {
	Items   []T  `json:"items"`
	Total   int  `json:"total"`
	Offset  int  `json:"offset"`
	Limit   int  `json:"limit"`
	HasMore bool `json:"has_more"`
}

type pageReq struct{ offset, limit int }

// parsePage reads ?offset=&limit=. A limit above MaxPageLimit is clamped,
// like most public APIs do; anything unparsable or negative is refused.
func parsePage(q url.Values) (pageReq, *apiError) {
	p := pageReq{offset: 0, limit: DefaultPageLimit}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, &apiError{Status: http.StatusBadRequest, Field: "offset", Message: "must be a non-negative integer"}
		}
		p.offset = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, &apiError{Status: http.StatusBadRequest, Field: "limit", Message: "must be an integer between 1 and 100"}
		}
		p.limit = min(n, MaxPageLimit)
	}
	return p, nil
}

// window returns the slice bounds [lo, hi) of page p over total rows.
func (p pageReq) window(total int) (lo, hi int) {
	lo = min(p.offset, total)
	hi = lo + min(p.limit, total-lo)
	return lo, hi
}

func pageOf[R, T any](rows []R, p pageReq, view func(R) T) listJSON[T] {
	lo, hi := p.window(len(rows))
	out := listJSON[T]{Items: make([]T, 0, hi-lo), Total: len(rows), Offset: p.offset, Limit: p.limit, HasMore: hi < len(rows)}
	for _, r := range rows[lo:hi] {
		out.Items = append(out.Items, view(r))
	}
	return out
}

// authorized checks the bearer token in constant time.
func (b *Backend) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), b.token) == 1
}

// serveTracker routes the tracker API. rest is the path after TrackerPrefix.
// Authentication comes before routing so that an unauthenticated caller
// cannot probe which paths or ids exist.
func (b *Backend) serveTracker(w http.ResponseWriter, r *http.Request, rest string) {
	if !b.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tracker"`)
		writeError(w, errorf(http.StatusUnauthorized, "missing or invalid bearer token"))
		return
	}
	seg := strings.Split(strings.Trim(rest, "/"), "/")
	m := r.Method
	switch {
	case len(seg) == 1 && seg[0] == "projects":
		b.onlyGET(w, r, b.listProjects)
	case len(seg) == 2 && seg[0] == "projects":
		b.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { b.getProject(w, seg[1]) })
	case len(seg) == 1 && seg[0] == "users":
		b.onlyGET(w, r, b.listUsers)
	case len(seg) == 2 && seg[0] == "users":
		b.onlyGET(w, r, func(w http.ResponseWriter, r *http.Request) { b.getUser(w, seg[1]) })
	case len(seg) == 1 && seg[0] == "labels":
		b.onlyGET(w, r, b.listLabels)
	case len(seg) == 1 && seg[0] == "issues":
		switch m {
		case http.MethodGet:
			b.listIssues(w, r)
		case http.MethodPost:
			b.createIssue(w, r)
		default:
			methodNotAllowed(w, http.MethodGet, http.MethodPost)
		}
	case len(seg) == 2 && seg[0] == "issues" && seg[1] == "search":
		b.onlyGET(w, r, b.searchIssues)
	case len(seg) == 2 && seg[0] == "issues":
		switch m {
		case http.MethodGet:
			b.getIssue(w, seg[1])
		case http.MethodPatch:
			b.updateIssue(w, r, seg[1])
		case http.MethodDelete:
			b.deleteIssue(w, seg[1])
		default:
			methodNotAllowed(w, http.MethodGet, http.MethodPatch, http.MethodDelete)
		}
	case len(seg) == 3 && seg[0] == "issues" && seg[2] == "close":
		if m != http.MethodPost {
			methodNotAllowed(w, http.MethodPost)
			return
		}
		b.closeIssue(w, seg[1])
	case len(seg) == 1 && seg[0] == "comments":
		switch m {
		case http.MethodGet:
			b.listComments(w, r)
		case http.MethodPost:
			b.createComment(w, r)
		default:
			methodNotAllowed(w, http.MethodGet, http.MethodPost)
		}
	default:
		writeError(w, errorf(http.StatusNotFound, "no such endpoint: %s %s", m, TrackerPrefix+"/"+strings.Join(seg, "/")))
	}
}

func (b *Backend) onlyGET(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	h(w, r)
}

func (b *Backend) listProjects(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	s := b.tracker
	s.mu.Lock()
	rows := s.projects
	if ids := q["id"]; len(ids) > 0 {
		rows = slices.DeleteFunc(slices.Clone(rows), func(x *trackerProject) bool { return !slices.Contains(ids, x.id()) })
	}
	out := pageOf(rows, p, s.projectView)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) getProject(w http.ResponseWriter, id string) {
	s := b.tracker
	s.mu.Lock()
	p := s.projectByID[id]
	var out projectDetailJSON
	if p != nil {
		out = s.projectDetail(p)
	}
	s.mu.Unlock()
	if p == nil {
		writeError(w, errorf(http.StatusNotFound, "project %q not found", id))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) listUsers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	s := b.tracker
	s.mu.Lock()
	rows := s.users
	if ids := q["id"]; len(ids) > 0 {
		rows = slices.DeleteFunc(slices.Clone(rows), func(x *trackerUser) bool { return !slices.Contains(ids, x.id()) })
	}
	out := pageOf(rows, p, s.userView)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) getUser(w http.ResponseWriter, id string) {
	s := b.tracker
	s.mu.Lock()
	u := s.userByID[id]
	var out userJSON
	if u != nil {
		out = s.userView(u)
	}
	s.mu.Unlock()
	if u == nil {
		writeError(w, errorf(http.StatusNotFound, "user %q not found", id))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) listLabels(w http.ResponseWriter, r *http.Request) {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	s := b.tracker
	s.mu.Lock()
	out := pageOf(s.labels, p, s.labelView)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// parseIssueFilter reads the list filters. An empty value means "no filter"
// because clients often send every key of a form.
func parseIssueFilter(q url.Values) (issueFilter, *apiError) {
	nonEmpty := func(vs []string) []string {
		return slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return v == "" })
	}
	f := issueFilter{
		projectIDs:  nonEmpty(q["project_id"]),
		statuses:    nonEmpty(q["status"]),
		assigneeIDs: nonEmpty(q["assignee_id"]),
		labels:      nonEmpty(q["label"]),
	}
	for _, st := range f.statuses {
		if !slices.Contains(trackerStatuses, st) {
			return f, &apiError{Status: http.StatusBadRequest, Field: "status", Message: "must be one of " + strings.Join(trackerStatuses, ", ")}
		}
	}
	for _, v := range nonEmpty(q["priority"]) {
		n, err := strconv.Atoi(v)
		if err != nil || n < minPriority || n > maxPriority {
			return f, &apiError{Status: http.StatusBadRequest, Field: "priority", Message: "must be an integer between 1 and 4"}
		}
		f.priorities = append(f.priorities, n)
	}
	return f, nil
}

func (b *Backend) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err == nil {
		var f issueFilter
		f, err = parseIssueFilter(q)
		if err == nil {
			s := b.tracker
			s.mu.Lock()
			rows := slices.DeleteFunc(slices.Clone(s.issues), func(i *trackerIssue) bool { return !s.matches(i, f) })
			out := pageOf(rows, p, func(i *trackerIssue) issueJSON { return s.issueView(i, false) })
			s.mu.Unlock()
			writeJSON(w, http.StatusOK, out)
			return
		}
	}
	writeError(w, err)
}

func (b *Backend) searchIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	terms := searchTerms(q.Get("q"))
	if len(terms) == 0 {
		writeError(w, &apiError{Status: http.StatusBadRequest, Field: "q", Message: "must contain at least one word"})
		return
	}
	s := b.tracker
	s.mu.Lock()
	rows := s.search(terms)
	out := pageOf(rows, p, func(i *trackerIssue) issueJSON { return s.issueView(i, false) })
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) getIssue(w http.ResponseWriter, id string) {
	s := b.tracker
	s.mu.Lock()
	i := s.issueByID[id]
	var out issueJSON
	if i != nil {
		out = s.issueView(i, true)
	}
	s.mu.Unlock()
	if i == nil {
		writeError(w, errorf(http.StatusNotFound, "issue %q not found", id))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// issueChanges is a validated-for-shape create or update request; references
// (project, assignee, labels) are checked against the store under its lock.
type issueChanges struct {
	title, body, status   *string
	projectID, assigneeID *string // "" clears
	priority              *int
	labels                []string
	labelsSet             bool
}

var issueInputFields = []string{"title", "body", "status", "priority", "project_id", "assignee_id", "labels"}

func parseIssueChanges(f bodyFields, create bool) (issueChanges, *apiError) {
	var c issueChanges
	if err := f.onlyKeys(issueInputFields...); err != nil {
		return c, err
	}
	title, set, err := f.str("title")
	if err != nil {
		return c, err
	}
	if set || create {
		if title == nil || strings.TrimSpace(*title) == "" {
			return c, fieldError("title", "is required and cannot be blank")
		}
		t := strings.TrimSpace(*title)
		if err := checkText("title", t, maxTitleLen); err != nil {
			return c, err
		}
		c.title = &t
	}
	body, set, err := f.str("body")
	if err != nil {
		return c, err
	}
	if set {
		s := ""
		if body != nil {
			s = *body
		}
		if err := checkText("body", s, maxBodyLen); err != nil {
			return c, err
		}
		c.body = &s
	}
	status, set, err := f.str("status")
	if err != nil {
		return c, err
	}
	if set {
		if status == nil || !slices.Contains(trackerStatuses, *status) {
			return c, fieldError("status", "must be one of %s", strings.Join(trackerStatuses, ", "))
		}
		c.status = status
	}
	prio, set, err := f.integer("priority")
	if err != nil {
		return c, err
	}
	if set {
		if prio == nil || *prio < minPriority || *prio > maxPriority {
			return c, fieldError("priority", "must be an integer between 1 (urgent) and 4 (low)")
		}
		c.priority = prio
	}
	for _, ref := range []struct {
		key string
		dst **string
	}{{"project_id", &c.projectID}, {"assignee_id", &c.assigneeID}} {
		v, set, err := f.str(ref.key)
		if err != nil {
			return c, err
		}
		if set {
			s := ""
			if v != nil {
				s = strings.TrimSpace(*v)
			}
			*ref.dst = &s
		}
	}
	labels, set, err := f.strList("labels")
	if err != nil {
		return c, err
	}
	if set {
		if len(labels) > maxLabelsSet {
			return c, fieldError("labels", "at most %d labels", maxLabelsSet)
		}
		c.labels, c.labelsSet = labels, true
	}
	return c, nil
}

// resolve checks every reference of c against the store and returns the
// label ids to set. The caller holds s.mu.
func (s *trackerStore) resolve(c issueChanges) ([]string, *apiError) {
	if c.projectID != nil && *c.projectID != "" && s.projectByID[*c.projectID] == nil {
		return nil, fieldError("project_id", "project %q does not exist", *c.projectID)
	}
	if c.assigneeID != nil && *c.assigneeID != "" && s.userByID[*c.assigneeID] == nil {
		return nil, fieldError("assignee_id", "user %q does not exist", *c.assigneeID)
	}
	var ids []string
	for _, ref := range c.labels {
		l := s.labelByRef(strings.TrimSpace(ref))
		if l == nil {
			return nil, fieldError("labels", "label %q does not exist", ref)
		}
		if !slices.Contains(ids, l.id()) {
			ids = append(ids, l.id())
		}
	}
	return ids, nil
}

// apply writes validated changes to i. Moving to closed stamps closed_at;
// reopening clears it.
func (c issueChanges) apply(i *trackerIssue, labelIDs []string, now func() time.Time) {
	t := now().UTC().Truncate(time.Second)
	if c.title != nil {
		i.Title = *c.title
	}
	if c.body != nil {
		i.Body = *c.body
	}
	if c.priority != nil {
		i.Priority = *c.priority
	}
	if c.projectID != nil {
		i.ProjectID = *c.projectID
	}
	if c.assigneeID != nil {
		i.AssigneeID = *c.assigneeID
	}
	if c.labelsSet {
		i.LabelIDs = labelIDs
	}
	if c.status != nil && *c.status != i.Status {
		i.Status = *c.status
		if i.Status == statusClosed {
			i.ClosedAt = &t
		} else {
			i.ClosedAt = nil
		}
	}
	i.UpdatedAt = t
}

func (b *Backend) createIssue(w http.ResponseWriter, r *http.Request) {
	f, err := readObject(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := parseIssueChanges(f, true)
	if err != nil {
		writeError(w, err)
		return
	}
	s := b.tracker
	s.mu.Lock()
	labels, err := s.resolve(c)
	if err == nil && len(s.issues) >= maxIssueCount {
		err = errorf(http.StatusInsufficientStorage, "the demo holds at most %d issues; delete some first", maxIssueCount)
	}
	var out issueJSON
	if err == nil {
		i := &trackerIssue{Num: s.nextIssue, Status: statusOpen, Priority: defaultPrio, LabelIDs: []string{}}
		s.nextIssue++
		c.apply(i, labels, b.now)
		i.CreatedAt = i.UpdatedAt
		s.addIssue(i)
		out = s.issueView(i, true)
	}
	s.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Location", TrackerPrefix+"/issues/"+out.ID)
	writeJSON(w, http.StatusCreated, out)
}

func (b *Backend) updateIssue(w http.ResponseWriter, r *http.Request, id string) {
	f, err := readObject(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := parseIssueChanges(f, false)
	if err != nil {
		writeError(w, err)
		return
	}
	s := b.tracker
	s.mu.Lock()
	i := s.issueByID[id]
	var out issueJSON
	if i == nil {
		err = errorf(http.StatusNotFound, "issue %q not found", id)
	} else {
		var labels []string
		if labels, err = s.resolve(c); err == nil {
			if len(f) > 0 {
				c.apply(i, labels, b.now)
			}
			out = s.issueView(i, true)
		}
	}
	s.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) deleteIssue(w http.ResponseWriter, id string) {
	s := b.tracker
	s.mu.Lock()
	found := s.issueByID[id] != nil
	if found {
		s.removeIssue(id)
	}
	s.mu.Unlock()
	if !found {
		writeError(w, errorf(http.StatusNotFound, "issue %q not found", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// closeIssue is idempotent: closing a closed issue returns it unchanged.
func (b *Backend) closeIssue(w http.ResponseWriter, id string) {
	s := b.tracker
	s.mu.Lock()
	i := s.issueByID[id]
	var out issueJSON
	if i != nil {
		if i.Status != statusClosed {
			closed := statusClosed
			issueChanges{status: &closed}.apply(i, nil, b.now)
		}
		out = s.issueView(i, true)
	}
	s.mu.Unlock()
	if i == nil {
		writeError(w, errorf(http.StatusNotFound, "issue %q not found", id))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (b *Backend) listComments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	issues := slices.DeleteFunc(slices.Clone(q["issue_id"]), func(v string) bool { return v == "" })
	authors := slices.DeleteFunc(slices.Clone(q["author_id"]), func(v string) bool { return v == "" })
	s := b.tracker
	s.mu.Lock()
	rows := slices.DeleteFunc(slices.Clone(s.comments), func(c *trackerComment) bool {
		return (len(issues) > 0 && !slices.Contains(issues, c.IssueID)) ||
			(len(authors) > 0 && !slices.Contains(authors, c.AuthorID))
	})
	out := pageOf(rows, p, s.commentView)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

const maxCommentCount = 50000

func (b *Backend) createComment(w http.ResponseWriter, r *http.Request) {
	f, err := readObject(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := f.onlyKeys("issue_id", "body", "author_id"); err != nil {
		writeError(w, err)
		return
	}
	issue, _, err := f.str("issue_id")
	if err == nil && (issue == nil || *issue == "") {
		err = fieldError("issue_id", "is required")
	}
	var body *string
	if err == nil {
		body, _, err = f.str("body")
		if err == nil && (body == nil || strings.TrimSpace(*body) == "") {
			err = fieldError("body", "is required and cannot be blank")
		}
		if err == nil {
			err = checkText("body", *body, maxBodyLen)
		}
	}
	author := defaultCommentAuthor
	if err == nil {
		var a *string
		if a, _, err = f.str("author_id"); err == nil && a != nil && *a != "" {
			author = *a
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s := b.tracker
	s.mu.Lock()
	var out commentJSON
	switch {
	case s.issueByID[*issue] == nil:
		err = fieldError("issue_id", "issue %q does not exist", *issue)
	case s.userByID[author] == nil:
		err = fieldError("author_id", "user %q does not exist", author)
	case len(s.comments) >= maxCommentCount:
		err = errorf(http.StatusInsufficientStorage, "the demo holds at most %d comments", maxCommentCount)
	default:
		c := &trackerComment{Num: s.nextComment, IssueID: *issue, AuthorID: author, Body: *body, CreatedAt: b.now().UTC().Truncate(time.Second)}
		s.nextComment++
		s.addComment(c)
		out = s.commentView(c)
	}
	s.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}
