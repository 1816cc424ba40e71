package demo

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Issue statuses of the tracker API.
const (
	statusOpen       = "open"
	statusInProgress = "in_progress"
	statusClosed     = "closed"
)

var trackerStatuses = []string{statusOpen, statusInProgress, statusClosed}

// Limits on client-supplied text. They keep the in-memory store bounded no
// matter what a client posts.
const (
	maxTitleLen   = 200
	maxBodyLen    = 20000
	maxLabelsSet  = 10
	minPriority   = 1
	maxPriority   = 4
	defaultPrio   = 3
	maxIssueCount = 10000 // refuse creates beyond this to bound memory
)

func userID(n int) string    { return "usr-" + strconv.Itoa(n) }
func projectID(n int) string { return "prj-" + strconv.Itoa(n) }
func issueID(n int) string   { return "iss-" + strconv.Itoa(n) }
func commentID(n int) string { return "cmt-" + strconv.Itoa(n) }
func labelID(n int) string   { return "lbl-" + strconv.Itoa(n) }

func labelIDByName(name string) string {
	for i, l := range trackerLabelSeeds {
		if l.name == name {
			return labelID(i + 1)
		}
	}
	return ""
}

type trackerUser struct {
	Num                       int
	Name, Handle, Email, Role string
	CreatedAt                 time.Time
}

func (u *trackerUser) id() string { return userID(u.Num) }

type trackerProject struct {
	Num                    int
	Key, Name, Description string
	MemberIDs              []string
	CreatedAt              time.Time
}

func (p *trackerProject) id() string { return projectID(p.Num) }

type trackerLabel struct {
	Num                      int
	Name, Color, Description string
}

func (l *trackerLabel) id() string { return labelID(l.Num) }

type trackerIssue struct {
	Num                  int
	ProjectID            string // "" when the issue belongs to no project
	Title, Body, Status  string
	Priority             int
	AssigneeID           string // "" when unassigned
	LabelIDs             []string
	CreatedAt, UpdatedAt time.Time
	ClosedAt             *time.Time
}

func (i *trackerIssue) id() string { return issueID(i.Num) }

type trackerComment struct {
	Num                     int
	IssueID, AuthorID, Body string
	CreatedAt               time.Time
}

func (c *trackerComment) id() string { return commentID(c.Num) }

// trackerStore is the tracker's in-memory database. Slices keep rows in id
// order (the order lists are served in); maps give O(1) lookups. mu guards
// everything; every exported view is built under the lock as a copy, so
// encoding happens without holding it.
type trackerStore struct {
	mu sync.Mutex

	users    []*trackerUser
	projects []*trackerProject
	labels   []*trackerLabel
	issues   []*trackerIssue
	comments []*trackerComment

	userByID    map[string]*trackerUser
	projectByID map[string]*trackerProject
	labelByID   map[string]*trackerLabel
	issueByID   map[string]*trackerIssue
	commentByID map[string]*trackerComment

	nextIssue, nextComment int
}

func newTrackerStore() *trackerStore {
	return &trackerStore{
		userByID:    map[string]*trackerUser{},
		projectByID: map[string]*trackerProject{},
		labelByID:   map[string]*trackerLabel{},
		issueByID:   map[string]*trackerIssue{},
		commentByID: map[string]*trackerComment{},
		nextIssue:   1,
		nextComment: 1,
	}
}

func (s *trackerStore) addUser(u *trackerUser) {
	s.users = append(s.users, u)
	s.userByID[u.id()] = u
}

func (s *trackerStore) addProject(p *trackerProject) {
	s.projects = append(s.projects, p)
	s.projectByID[p.id()] = p
}

func (s *trackerStore) addLabel(l *trackerLabel) {
	s.labels = append(s.labels, l)
	s.labelByID[l.id()] = l
}

func (s *trackerStore) addIssue(i *trackerIssue) {
	s.issues = append(s.issues, i)
	s.issueByID[i.id()] = i
}

func (s *trackerStore) addComment(c *trackerComment) {
	s.comments = append(s.comments, c)
	s.commentByID[c.id()] = c
}

// labelByRef resolves a label by id ("lbl-2") or by name ("bug"), the two
// forms clients naturally use.
func (s *trackerStore) labelByRef(ref string) *trackerLabel {
	if l := s.labelByID[ref]; l != nil {
		return l
	}
	for _, l := range s.labels {
		if strings.EqualFold(l.Name, ref) {
			return l
		}
	}
	return nil
}

func (s *trackerStore) commentCount(issue string) int {
	n := 0
	for _, c := range s.comments {
		if c.IssueID == issue {
			n++
		}
	}
	return n
}

// Wire shapes. Field order here is the order clients see.

type userJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Handle    string `json:"handle"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
}

type projectJSON struct {
	ID          string `json:"id"`
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   string `json:"created_at"`
}

type projectDetailJSON struct {
	projectJSON
	Members []userJSON `json:"members"`
}

type labelJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Color       string `json:"color"`
	Description string `json:"description"`
}

type labelRefJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
}

type refJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// issueJSON is both the list row and the detail; list rows leave Body nil so
// that clients hydrate through GET /issues/{id} when they need it.
type issueJSON struct {
	ID           string         `json:"id"`
	Number       int            `json:"number"`
	ProjectID    *string        `json:"project_id"`
	Title        string         `json:"title"`
	Body         *string        `json:"body,omitempty"`
	Status       string         `json:"status"`
	Priority     int            `json:"priority"`
	Assignee     *refJSON       `json:"assignee"`
	Labels       []labelRefJSON `json:"labels"`
	CommentCount int            `json:"comment_count"`
	CreatedAt    string         `json:"created_at"`
	UpdatedAt    string         `json:"updated_at"`
	ClosedAt     *string        `json:"closed_at"`
}

type commentJSON struct {
	ID        string  `json:"id"`
	IssueID   string  `json:"issue_id"`
	Author    refJSON `json:"author"`
	Body      string  `json:"body"`
	CreatedAt string  `json:"created_at"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *trackerStore) userView(u *trackerUser) userJSON {
	return userJSON{ID: u.id(), Name: u.Name, Handle: u.Handle, Email: u.Email, Role: u.Role, CreatedAt: stamp(u.CreatedAt)}
}

func (s *trackerStore) projectView(p *trackerProject) projectJSON {
	return projectJSON{ID: p.id(), Key: p.Key, Name: p.Name, Description: p.Description, CreatedAt: stamp(p.CreatedAt)}
}

func (s *trackerStore) projectDetail(p *trackerProject) projectDetailJSON {
	d := projectDetailJSON{projectJSON: s.projectView(p), Members: []userJSON{}}
	for _, id := range p.MemberIDs {
		if u := s.userByID[id]; u != nil {
			d.Members = append(d.Members, s.userView(u))
		}
	}
	return d
}

func (s *trackerStore) labelView(l *trackerLabel) labelJSON {
	return labelJSON{ID: l.id(), Name: l.Name, Color: l.Color, Description: l.Description}
}

func (s *trackerStore) issueView(i *trackerIssue, withBody bool) issueJSON {
	v := issueJSON{
		ID:           i.id(),
		Number:       i.Num,
		Title:        i.Title,
		Status:       i.Status,
		Priority:     i.Priority,
		Labels:       []labelRefJSON{},
		CommentCount: s.commentCount(i.id()),
		CreatedAt:    stamp(i.CreatedAt),
		UpdatedAt:    stamp(i.UpdatedAt),
	}
	if i.ProjectID != "" {
		p := i.ProjectID
		v.ProjectID = &p
	}
	if withBody {
		b := i.Body
		v.Body = &b
	}
	if u := s.userByID[i.AssigneeID]; u != nil {
		v.Assignee = &refJSON{ID: u.id(), Name: u.Name}
	}
	for _, id := range i.LabelIDs {
		if l := s.labelByID[id]; l != nil {
			v.Labels = append(v.Labels, labelRefJSON{ID: l.id(), Name: l.Name, Color: l.Color})
		}
	}
	if i.ClosedAt != nil {
		c := stamp(*i.ClosedAt)
		v.ClosedAt = &c
	}
	return v
}

func (s *trackerStore) commentView(c *trackerComment) commentJSON {
	v := commentJSON{ID: c.id(), IssueID: c.IssueID, Body: c.Body, CreatedAt: stamp(c.CreatedAt)}
	if u := s.userByID[c.AuthorID]; u != nil {
		v.Author = refJSON{ID: u.id(), Name: u.Name}
	} else {
		v.Author = refJSON{ID: c.AuthorID}
	}
	return v
}

// issueFilter is the conjunction of the list filters; within one filter,
// several values are alternatives (?status=open&status=in_progress).
type issueFilter struct {
	projectIDs, statuses, assigneeIDs, labels []string
	priorities                                []int
}

func (s *trackerStore) matches(i *trackerIssue, f issueFilter) bool {
	if len(f.projectIDs) > 0 && !slices.Contains(f.projectIDs, i.ProjectID) {
		return false
	}
	if len(f.statuses) > 0 && !slices.Contains(f.statuses, i.Status) {
		return false
	}
	if len(f.assigneeIDs) > 0 && !slices.Contains(f.assigneeIDs, i.AssigneeID) {
		return false
	}
	if len(f.priorities) > 0 && !slices.Contains(f.priorities, i.Priority) {
		return false
	}
	if len(f.labels) > 0 {
		hit := false
		for _, ref := range f.labels {
			if l := s.labelByRef(ref); l != nil && slices.Contains(i.LabelIDs, l.id()) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// searchTerms splits a query into lower-case words. Punctuation separates
// words, so "crash," and "crash" are the same term.
func searchTerms(q string) []string {
	all := words(q)
	seen := map[string]bool{}
	out := all[:0]
	for _, w := range all {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// searchScore counts whole-word occurrences of the terms; a title hit counts
// three times a body hit because titles are what people remember.
func searchScore(i *trackerIssue, terms []string) int {
	count := func(text string) map[string]int {
		m := map[string]int{}
		for _, w := range words(text) {
			m[w]++
		}
		return m
	}
	title, body := count(i.Title), count(i.Body)
	score := 0
	for _, t := range terms {
		score += 3*title[t] + body[t]
	}
	return score
}

// words lower-cases text and splits it on anything that is not a letter or
// a digit.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

type scored struct {
	issue *trackerIssue
	score int
}

func (s *trackerStore) search(terms []string) []*trackerIssue {
	var hits []scored
	for _, i := range s.issues {
		if sc := searchScore(i, terms); sc > 0 {
			hits = append(hits, scored{i, sc})
		}
	}
	// Stable sort over id order: ties keep ascending ids, so ranking is deterministic.
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	out := make([]*trackerIssue, len(hits))
	for k, h := range hits {
		out[k] = h.issue
	}
	return out
}

func (s *trackerStore) removeIssue(id string) {
	delete(s.issueByID, id)
	s.issues = slices.DeleteFunc(s.issues, func(i *trackerIssue) bool { return i.id() == id })
	s.comments = slices.DeleteFunc(s.comments, func(c *trackerComment) bool {
		if c.IssueID == id {
			delete(s.commentByID, c.id())
			return true
		}
		return false
	})
}
