package demo

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"
)

// KanbanPath is where the kanban GraphQL endpoint is served.
const KanbanPath = "/kanban/graphql"

// Kanban issue states.
const (
	stateTodo  = "todo"
	stateDoing = "doing"
	stateDone  = "done"
)

var kanbanStates = []string{stateTodo, stateDoing, stateDone}

// Connection paging defaults.
const (
	defaultFirst = 20
	maxFirst     = 100
)

// Bounds on GraphQL requests. graphql-go parses and validates recursively
// and trusts its input: nesting is checked before parsing, and fragment
// cycles and expansion size before validation (a self-spreading fragment
// otherwise overflows the stack in its overlapping-fields rule, which kills
// the process).
const (
	maxQueryBytes   = 64 << 10
	maxQueryNesting = 32
	maxFragments    = 32
	maxSelections   = 1000 // fields after inlining every fragment spread
)

func kanbanTeamID(n int) string  { return "team-" + strconv.Itoa(n) }
func kanbanUserID(n int) string  { return "kusr-" + strconv.Itoa(n) }
func kanbanIssueID(n int) string { return "kiss-" + strconv.Itoa(n) }

type kanbanTeam struct {
	Num       int
	Key, Name string
}

type kanbanUser struct {
	Num         int
	Name, Email string
}

type kanbanIssue struct {
	Num                int
	Title, State       string
	Estimate           *int
	TeamID, AssigneeID string // AssigneeID is "" when unassigned
	CreatedAt          time.Time
}

// kanbanStore is the board's in-memory database; mu guards everything.
// Resolvers copy rows out under the lock, so nested fields resolve from
// copies without locking.
type kanbanStore struct {
	mu        sync.Mutex
	teams     []*kanbanTeam
	users     []*kanbanUser
	issues    []*kanbanIssue
	teamByID  map[string]*kanbanTeam
	userByID  map[string]*kanbanUser
	nextIssue int
}

func newKanbanStore() *kanbanStore {
	return &kanbanStore{teamByID: map[string]*kanbanTeam{}, userByID: map[string]*kanbanUser{}, nextIssue: 1}
}

func (s *kanbanStore) addTeam(t *kanbanTeam) {
	s.teams = append(s.teams, t)
	s.teamByID[kanbanTeamID(t.Num)] = t
}

func (s *kanbanStore) addUser(u *kanbanUser) {
	s.users = append(s.users, u)
	s.userByID[kanbanUserID(u.Num)] = u
}

func (s *kanbanStore) addIssue(i *kanbanIssue) { s.issues = append(s.issues, i) }

func (s *kanbanStore) issueByID(id string) *kanbanIssue {
	for _, i := range s.issues {
		if kanbanIssueID(i.Num) == id {
			return i
		}
	}
	return nil
}

// GraphQL sources. graphql-go's default resolver reads these by json tag.

type kTeam struct {
	ID   string `json:"id"`
	Key  string `json:"key"`
	Name string `json:"name"`
}

type kUser struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

type kIssue struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	State     string `json:"state"`
	Estimate  *int   `json:"estimate"`
	CreatedAt string `json:"createdAt"`
	Team      *kTeam `json:"team"`
	Assignee  *kUser `json:"assignee"`
}

type kPageInfo struct {
	EndCursor   *string `json:"endCursor"`
	HasNextPage bool    `json:"hasNextPage"`
}

type kConnection[T any] struct {
	Nodes      []T       `json:"nodes"`
	PageInfo   kPageInfo `json:"pageInfo"`
	TotalCount int       `json:"totalCount"`
}

func (s *kanbanStore) teamView(t *kanbanTeam) *kTeam {
	return &kTeam{ID: kanbanTeamID(t.Num), Key: t.Key, Name: t.Name}
}

func (s *kanbanStore) userView(u *kanbanUser) *kUser {
	return &kUser{ID: kanbanUserID(u.Num), Name: u.Name, Email: u.Email}
}

func (s *kanbanStore) issueView(i *kanbanIssue) *kIssue {
	v := &kIssue{ID: kanbanIssueID(i.Num), Title: i.Title, State: i.State, CreatedAt: stamp(i.CreatedAt)}
	if i.Estimate != nil {
		e := *i.Estimate
		v.Estimate = &e
	}
	if t := s.teamByID[i.TeamID]; t != nil {
		v.Team = s.teamView(t)
	}
	if u := s.userByID[i.AssigneeID]; u != nil {
		v.Assignee = s.userView(u)
	}
	return v
}

// errInvalidCursor is returned for an `after` that this server did not mint.
var errInvalidCursor = errors.New("invalid cursor")

const cursorPrefix = "kanban:v1:"

// encodeCursor makes an opaque cursor for the row at index.
func encodeCursor(index int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(index)))
}

// decodeCursor returns the index a cursor points at.
func decodeCursor(c string) (int, error) {
	// Strict: a cursor has exactly one spelling, so clients cannot forge
	// look-alikes that compare unequal but decode the same.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return 0, fmt.Errorf("%w: not base64", errInvalidCursor)
	}
	rest, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok {
		return 0, fmt.Errorf("%w: unknown format", errInvalidCursor)
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return 0, fmt.Errorf("%w: bad position", errInvalidCursor)
	}
	return n, nil
}

// connectionOf pages rows by Relay-style first/after arguments.
func connectionOf[R, T any](rows []R, args map[string]any, view func(R) T) (*kConnection[T], error) {
	first := defaultFirst
	if v, ok := args["first"].(int); ok {
		if v < 0 || v > maxFirst {
			return nil, fmt.Errorf("first must be between 0 and %d", maxFirst)
		}
		first = v
	}
	start := 0
	if a, ok := args["after"].(string); ok && a != "" {
		n, err := decodeCursor(a)
		if err != nil {
			return nil, err
		}
		// Compare before adding one: n may be math.MaxInt.
		if n < len(rows) {
			start = n + 1
		} else {
			start = len(rows)
		}
	}
	end := start + min(first, len(rows)-start)
	c := &kConnection[T]{Nodes: make([]T, 0, end-start), TotalCount: len(rows), PageInfo: kPageInfo{HasNextPage: end < len(rows)}}
	for _, r := range rows[start:end] {
		c.Nodes = append(c.Nodes, view(r))
	}
	if end > start {
		cur := encodeCursor(end - 1)
		c.PageInfo.EndCursor = &cur
	}
	return c, nil
}

// newKanbanSchema builds the board's GraphQL schema over s. The type graph
// has no cycles (an Issue's team does not list issues), so query depth is
// bounded by the schema itself.
func newKanbanSchema(s *kanbanStore, now func() time.Time) (graphql.Schema, error) {
	t := newKanbanTypes()
	return graphql.NewSchema(graphql.SchemaConfig{Query: kanbanQuery(s, t), Mutation: kanbanMutation(s, t, now)})
}

// kanbanTypes are the schema's object types and argument helpers.
type kanbanTypes struct {
	team, user, issue *graphql.Object
	connection        func(name string, node *graphql.Object) *graphql.Object
	pageArgs          func(extra graphql.FieldConfigArgument) graphql.FieldConfigArgument
	idArg             graphql.FieldConfigArgument
}

func newKanbanTypes() kanbanTypes {
	team := graphql.NewObject(graphql.ObjectConfig{Name: "Team", Fields: graphql.Fields{
		"id":   &graphql.Field{Type: graphql.NewNonNull(graphql.ID)},
		"key":  &graphql.Field{Type: graphql.NewNonNull(graphql.String)},
		"name": &graphql.Field{Type: graphql.NewNonNull(graphql.String)},
	}})
	user := graphql.NewObject(graphql.ObjectConfig{Name: "User", Fields: graphql.Fields{
		"id":    &graphql.Field{Type: graphql.NewNonNull(graphql.ID)},
		"name":  &graphql.Field{Type: graphql.NewNonNull(graphql.String)},
		"email": &graphql.Field{Type: graphql.NewNonNull(graphql.String)},
	}})
	issue := graphql.NewObject(graphql.ObjectConfig{Name: "Issue", Fields: graphql.Fields{
		"id":        &graphql.Field{Type: graphql.NewNonNull(graphql.ID)},
		"title":     &graphql.Field{Type: graphql.NewNonNull(graphql.String)},
		"state":     &graphql.Field{Type: graphql.NewNonNull(graphql.String), Description: "todo, doing or done"},
		"estimate":  &graphql.Field{Type: graphql.Int, Description: "story points; null when not estimated"},
		"createdAt": &graphql.Field{Type: graphql.NewNonNull(graphql.String), Description: "RFC 3339 timestamp"},
		"team":      &graphql.Field{Type: graphql.NewNonNull(team)},
		"assignee":  &graphql.Field{Type: user},
	}})
	pageInfo := graphql.NewObject(graphql.ObjectConfig{Name: "PageInfo", Fields: graphql.Fields{
		"endCursor":   &graphql.Field{Type: graphql.String},
		"hasNextPage": &graphql.Field{Type: graphql.NewNonNull(graphql.Boolean)},
	}})
	connection := func(name string, node *graphql.Object) *graphql.Object {
		return graphql.NewObject(graphql.ObjectConfig{Name: name, Fields: graphql.Fields{
			"nodes":      &graphql.Field{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(node)))},
			"pageInfo":   &graphql.Field{Type: graphql.NewNonNull(pageInfo)},
			"totalCount": &graphql.Field{Type: graphql.NewNonNull(graphql.Int)},
		}})
	}
	pageArgs := func(extra graphql.FieldConfigArgument) graphql.FieldConfigArgument {
		args := graphql.FieldConfigArgument{
			"first": &graphql.ArgumentConfig{Type: graphql.Int, Description: "page size, 0 to 100 (default 20)"},
			"after": &graphql.ArgumentConfig{Type: graphql.String, Description: "endCursor of the previous page"},
		}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	idArg := graphql.FieldConfigArgument{"id": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID)}}

	return kanbanTypes{team: team, user: user, issue: issue, connection: connection, pageArgs: pageArgs, idArg: idArg}
}

// kanbanQuery is the board's read side: paged lists and gets by id.
func kanbanQuery(s *kanbanStore, t kanbanTypes) *graphql.Object {
	team, user, issue, connection, pageArgs, idArg := t.team, t.user, t.issue, t.connection, t.pageArgs, t.idArg
	return graphql.NewObject(graphql.ObjectConfig{Name: "Query", Fields: graphql.Fields{
		"teams": &graphql.Field{
			Type: graphql.NewNonNull(connection("TeamConnection", team)),
			Args: pageArgs(nil),
			Resolve: func(p graphql.ResolveParams) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return connectionOf(s.teams, p.Args, s.teamView)
			},
		},
		"team": &graphql.Field{
			Type: team,
			Args: idArg,
			Resolve: func(p graphql.ResolveParams) (any, error) {
				id, _ := p.Args["id"].(string)
				s.mu.Lock()
				defer s.mu.Unlock()
				if t := s.teamByID[id]; t != nil {
					return s.teamView(t), nil
				}
				return nil, nil
			},
		},
		"users": &graphql.Field{
			Type: graphql.NewNonNull(connection("UserConnection", user)),
			Args: pageArgs(nil),
			Resolve: func(p graphql.ResolveParams) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return connectionOf(s.users, p.Args, s.userView)
			},
		},
		"issues": &graphql.Field{
			Type: graphql.NewNonNull(connection("IssueConnection", issue)),
			Args: pageArgs(graphql.FieldConfigArgument{
				"teamId":     &graphql.ArgumentConfig{Type: graphql.ID},
				"state":      &graphql.ArgumentConfig{Type: graphql.String, Description: "todo, doing or done"},
				"assigneeId": &graphql.ArgumentConfig{Type: graphql.ID},
			}),
			Resolve: func(p graphql.ResolveParams) (any, error) {
				teamID, _ := p.Args["teamId"].(string)
				state, _ := p.Args["state"].(string)
				assignee, _ := p.Args["assigneeId"].(string)
				if state != "" && !slices.Contains(kanbanStates, state) {
					return nil, fmt.Errorf("state must be one of %s", strings.Join(kanbanStates, ", "))
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				rows := slices.DeleteFunc(slices.Clone(s.issues), func(i *kanbanIssue) bool {
					return (teamID != "" && i.TeamID != teamID) || (state != "" && i.State != state) ||
						(assignee != "" && i.AssigneeID != assignee)
				})
				return connectionOf(rows, p.Args, s.issueView)
			},
		},
		"issue": &graphql.Field{
			Type: issue,
			Args: idArg,
			Resolve: func(p graphql.ResolveParams) (any, error) {
				id, _ := p.Args["id"].(string)
				s.mu.Lock()
				defer s.mu.Unlock()
				if i := s.issueByID(id); i != nil {
					return s.issueView(i), nil
				}
				return nil, nil
			},
		},
	}})
}

// kanbanMutation is the board's write side: creating an issue.
func kanbanMutation(s *kanbanStore, t kanbanTypes, now func() time.Time) *graphql.Object {
	issue := t.issue
	return graphql.NewObject(graphql.ObjectConfig{Name: "Mutation", Fields: graphql.Fields{
		"createIssue": &graphql.Field{
			Type: issue,
			Args: graphql.FieldConfigArgument{
				"teamId":     &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID)},
				"title":      &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)},
				"estimate":   &graphql.ArgumentConfig{Type: graphql.Int},
				"assigneeId": &graphql.ArgumentConfig{Type: graphql.ID},
			},
			Resolve: func(p graphql.ResolveParams) (any, error) {
				teamID, _ := p.Args["teamId"].(string)
				title, _ := p.Args["title"].(string)
				title = strings.TrimSpace(title)
				assignee, _ := p.Args["assigneeId"].(string)
				if title == "" {
					return nil, errors.New("title cannot be blank")
				}
				if !utf8.ValidString(title) || utf8.RuneCountInString(title) > maxTitleLen {
					return nil, fmt.Errorf("title must be valid UTF-8 of at most %d characters", maxTitleLen)
				}
				var estimate *int
				if e, ok := p.Args["estimate"].(int); ok {
					if e < 0 || e > 100 {
						return nil, errors.New("estimate must be between 0 and 100")
					}
					estimate = &e
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.teamByID[teamID] == nil {
					return nil, fmt.Errorf("team %q does not exist", teamID)
				}
				if assignee != "" && s.userByID[assignee] == nil {
					return nil, fmt.Errorf("user %q does not exist", assignee)
				}
				if len(s.issues) >= maxIssueCount {
					return nil, fmt.Errorf("the demo holds at most %d issues", maxIssueCount)
				}
				i := &kanbanIssue{
					Num: s.nextIssue, Title: title, State: stateTodo, Estimate: estimate,
					TeamID: teamID, AssigneeID: assignee, CreatedAt: now().UTC().Truncate(time.Second),
				}
				s.nextIssue++
				s.addIssue(i)
				return s.issueView(i), nil
			},
		},
	}})
}

// checkNesting rejects queries whose bracket nesting exceeds limit, ignoring
// brackets inside strings and comments. It runs before graphql-go's
// recursive parser sees the text.
func checkNesting(q string, limit int) error {
	depth := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '{', '(', '[':
			depth++
			if depth > limit {
				return fmt.Errorf("query nests deeper than %d levels", limit)
			}
		case '}', ')', ']':
			if depth > 0 {
				depth--
			}
		case '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case '"':
			block := strings.HasPrefix(q[i:], `"""`)
			if block {
				end := strings.Index(q[i+3:], `"""`)
				if end < 0 {
					return nil // unterminated: the parser reports it
				}
				i += 3 + end + 2
				continue
			}
			for i++; i < len(q) && q[i] != '"' && q[i] != '\n'; i++ {
				if q[i] == '\\' {
					i++
				}
			}
		}
	}
	return nil
}

// graphqlRequest is the decoded body of a GraphQL POST.
type graphqlRequest struct {
	Query         string
	OperationName string
	Variables     map[string]any
}

// decodeGraphQLRequest parses {query, variables, operationName}. Other
// top-level keys are folded into variables when variables does not set
// them: some clients merge paging parameters (first, after) into the body
// root rather than into variables.
func decodeGraphQLRequest(data []byte) (graphqlRequest, *apiError) {
	var req graphqlRequest
	f, apiErr := decodeObject(data)
	if apiErr != nil {
		return req, apiErr
	}
	q, _, apiErr := f.str("query")
	if apiErr != nil {
		return req, &apiError{Status: http.StatusBadRequest, Field: "query", Message: "must be a string"}
	}
	if q == nil || strings.TrimSpace(*q) == "" {
		return req, &apiError{Status: http.StatusBadRequest, Field: "query", Message: "is required"}
	}
	req.Query = *q
	if op, _, err := f.str("operationName"); err != nil {
		return req, &apiError{Status: http.StatusBadRequest, Field: "operationName", Message: "must be a string"}
	} else if op != nil {
		req.OperationName = *op
	}
	req.Variables = map[string]any{}
	if raw, ok := f["variables"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &req.Variables) != nil {
			return req, &apiError{Status: http.StatusBadRequest, Field: "variables", Message: "must be a JSON object"}
		}
		if req.Variables == nil {
			req.Variables = map[string]any{}
		}
	}
	for k, raw := range f {
		switch k {
		case "query", "operationName", "variables", "extensions":
			continue
		}
		if _, set := req.Variables[k]; set {
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) == nil {
			req.Variables[k] = v
		}
	}
	return req, nil
}

// serveKanban answers GraphQL over HTTP. Request errors (bad JSON, a query
// that does not parse or validate) are 400; a request whose every top-level
// field failed is 422, so that a failed mutation is never mistaken for an
// empty success; partial results are 200 with "errors", as GraphQL intends.
func (b *Backend) serveKanban(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, http.MethodPost)
		return
	}
	data, apiErr := readBody(w, r)
	if apiErr != nil {
		writeGraphQLError(w, apiErr)
		return
	}
	req, apiErr := decodeGraphQLRequest(data)
	if apiErr == nil && len(req.Query) > maxQueryBytes {
		apiErr = &apiError{Status: http.StatusBadRequest, Field: "query", Message: fmt.Sprintf("exceeds %d bytes", maxQueryBytes)}
	}
	if apiErr == nil {
		if err := checkNesting(req.Query, maxQueryNesting); err != nil {
			apiErr = &apiError{Status: http.StatusBadRequest, Field: "query", Message: err.Error()}
		}
	}
	if apiErr != nil {
		writeGraphQLError(w, apiErr)
		return
	}
	res := b.runGraphQL(r, req)
	status := http.StatusOK
	if res.HasErrors() {
		switch data := res.Data.(type) {
		case nil:
			status = http.StatusBadRequest
		case map[string]any:
			allNull := true
			for _, v := range data {
				if v != nil {
					allNull = false
					break
				}
			}
			if allNull {
				status = http.StatusUnprocessableEntity
			}
		}
	}
	writeJSON(w, status, res)
}

// writeGraphQLError reports a request error in the GraphQL response shape,
// which is what GraphQL clients look for.
func writeGraphQLError(w http.ResponseWriter, e *apiError) {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + " " + e.Message
	}
	writeJSON(w, e.Status, map[string]any{"errors": []map[string]string{{"message": msg}}})
}

// runGraphQL is graphql.Do with checkSelections between parsing and
// validation. graphql-go also dereferences nil on some malformed documents
// that its parser accepts (a variable without a type, for one); such a
// panic is turned into a request error rather than taking the handler down.
func (b *Backend) runGraphQL(r *http.Request, req graphqlRequest) (res *graphql.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = &graphql.Result{Errors: []gqlerrors.FormattedError{gqlerrors.NewFormattedError("malformed GraphQL document")}}
		}
	}()
	src := source.NewSource(&source.Source{Body: []byte(req.Query), Name: "GraphQL request"})
	doc, err := parser.Parse(parser.ParseParams{Source: src})
	if err != nil {
		return &graphql.Result{Errors: gqlerrors.FormatErrors(err)}
	}
	if err := checkSelections(doc); err != nil {
		return &graphql.Result{Errors: []gqlerrors.FormattedError{gqlerrors.NewFormattedError(err.Error())}}
	}
	if v := graphql.ValidateDocument(&b.schema, doc, nil); !v.IsValid {
		return &graphql.Result{Errors: v.Errors}
	}
	return graphql.Execute(graphql.ExecuteParams{
		Schema:        b.schema,
		AST:           doc,
		OperationName: req.OperationName,
		Args:          req.Variables,
		Context:       r.Context(),
	})
}

// Errors of checkSelections.
var (
	errQueryTooComplex = errors.New("query too complex")
	errMalformedQuery  = errors.New("malformed query")
)

// checkSelections rejects documents with duplicate or cyclic fragments, more
// than maxFragments fragments, or more than maxSelections fields once every
// fragment spread is inlined. Recursion is bounded: selection sets nest at
// most maxQueryNesting deep (checkNesting ran first) and fragment chains are
// acyclic and at most maxFragments long.
func checkSelections(doc *ast.Document) error {
	frags := map[string]*ast.FragmentDefinition{}
	var ops []*ast.OperationDefinition
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.FragmentDefinition:
			if d.Name == nil {
				continue
			}
			if frags[d.Name.Value] != nil {
				return fmt.Errorf("%w: fragment %q is defined twice", errQueryTooComplex, d.Name.Value)
			}
			frags[d.Name.Value] = d
		case *ast.OperationDefinition:
			for _, v := range d.VariableDefinitions {
				if v == nil || v.Variable == nil || v.Type == nil {
					return fmt.Errorf("%w: a variable definition has no type", errMalformedQuery)
				}
			}
			ops = append(ops, d)
		}
	}
	if len(frags) > maxFragments {
		return fmt.Errorf("%w: more than %d fragments", errQueryTooComplex, maxFragments)
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	memo := map[string]int{}
	var setSize func(ss *ast.SelectionSet) (int, error)
	fragSize := func(name string) (int, error) {
		switch state[name] {
		case visiting:
			return 0, fmt.Errorf("%w: fragment %q spreads itself", errQueryTooComplex, name)
		case done:
			return memo[name], nil
		}
		def := frags[name]
		if def == nil {
			return 0, nil // unknown fragment: validation reports it
		}
		state[name] = visiting
		n, err := setSize(def.SelectionSet)
		state[name] = done
		memo[name] = n
		return n, err
	}
	setSize = func(ss *ast.SelectionSet) (int, error) {
		if ss == nil {
			return 0, nil
		}
		total := 0
		for _, sel := range ss.Selections {
			var n int
			var err error
			switch s := sel.(type) {
			case *ast.Field:
				n, err = setSize(s.SelectionSet)
				n++
			case *ast.InlineFragment:
				n, err = setSize(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Name != nil {
					n, err = fragSize(s.Name.Value)
				}
			}
			if err != nil {
				return 0, err
			}
			total += n
			if total > maxSelections {
				return 0, fmt.Errorf("%w: more than %d fields", errQueryTooComplex, maxSelections)
			}
		}
		return total, nil
	}
	total := 0
	for name := range frags {
		if _, err := fragSize(name); err != nil {
			return err
		}
	}
	for _, op := range ops {
		n, err := setSize(op.SelectionSet)
		if err != nil {
			return err
		}
		if total += n; total > maxSelections {
			return fmt.Errorf("%w: more than %d fields", errQueryTooComplex, maxSelections)
		}
	}
	return nil
}
