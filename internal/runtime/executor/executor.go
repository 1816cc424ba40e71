// Package executor runs plans: it walks the DAG a guest planned, asks the
// tenant's engine to compile each backend request and decode each response,
// performs the HTTP itself through egress, fans relation hops and hydration
// gets out over rows with bounded concurrency, and applies host-side filters
// and postfix transforms. It holds no catalog semantics of its own: every node is
// self-describing.
package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// Engine compiles requests and decodes responses inside the tenant's sandbox.
type Engine interface {
	Compile(ctx context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error)
	Decode(ctx context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error)
}

// Sender performs backend HTTP under the egress policy.
type Sender interface {
	Do(ctx context.Context, req *abi.CompiledRequest, allowed []egress.Origin, secrets egress.Secrets) (*egress.Response, error)
}

// Continuation is everything needed to fetch the next page of a list.
type Continuation struct {
	EntryID    string         `json:"entry_id"`
	Entity     string         `json:"entity"`
	Capability string         `json:"capability"`
	Columns    []string       `json:"columns"`
	Vars       map[string]any `json:"vars,omitempty"`
	Page       map[string]any `json:"page"`
	// Skip is how many rows of the page at Page were already returned: a
	// page(handle, limit=n) that ends inside a page continues there.
	Skip int `json:"skip,omitempty"`
	// Seen keys the ids of the rows of the page before Page, so a next
	// page that mostly repeats them is refused (OverlapError), and rows a
	// shift repeats are not returned twice, across handles too.
	Seen []string `json:"seen,omitempty"`
	// SeenTail keys the last maxSeen ids of that page when it had more
	// than maxSeen (Seen then holds its first maxSeen): a shift repeats
	// its tail.
	SeenTail []string `json:"seen_tail,omitempty"`
	// Returned keys the ids of the Skip rows of the page at Page already
	// returned, so an insert that moves them further into the page before
	// the next call does not answer them twice.
	Returned []string    `json:"returned,omitempty"`
	Filters  []plan.Pred `json:"filters,omitempty"`
	// Transforms are the postfix steps the first page went through
	// (.filter, .sort, projection, .limit); every later page gets them too,
	// so page(handle) answers in the same shape.
	Transforms []plan.Transform `json:"transforms,omitempty"`
	// PageSize continues a .page_size(n) list: each answer holds at most
	// PageSize rows.
	PageSize int `json:"page_size,omitempty"`
}

// Env is what one run may use: the tenant's engine, its secrets as each
// catalog may see them, the origins each catalog may reach, and the
// session's continuation handles.
type Env struct {
	Engine Engine
	// SecretsFor returns the secrets a call for entry_id may use: only the
	// names that catalog declares (egress.ScopeSecrets). The secret a
	// request names comes out of a guest (the engine or a vendor hook), so
	// the scope is applied per entry here rather than trusted from the
	// request. Nil, or a nil result, resolves nothing.
	SecretsFor func(entryID string) egress.Secrets
	// Origins maps entry_id to the origins its catalog declares.
	Origins map[string][]egress.Origin
	// ResolvePage returns the continuation behind a handle (for page(...)).
	ResolvePage func(handle string) (*Continuation, error)
	// Hooks maps entry_id to its catalog's vendor-module hooks (see Hooks).
	Hooks map[string]*Hooks
	// Budget bounds what the run may read (zero fields: DefaultBudget).
	Budget Budget
	// OnStep, if set, is called as each node starts (tracing): the node
	// runs under the context it returns, and done gets its report.
	OnStep func(ctx context.Context, n *plan.Node) (_ context.Context, done func(Step, error))
	// Identity returns the ways an entity's rows are identified, best
	// first (the key fields of a compound key, then its id field), so a
	// list's pages are compared by id (see OverlapError): the first whose
	// fields are all columns of the list is used. Nil, or none of them:
	// rows carry no identity and pages are not compared.
	Identity func(entryID, entity string) [][]string
	// Dates returns the date fields of an entity's rows, each with its
	// catalog value_format ("" when it declares none), so filters, sorts
	// and the other comparisons read them as instants (datecompare.go).
	// Nil, or a nil result: no column is compared as a date.
	Dates func(entryID, entity string) map[string]string
}

// Limits bound one run.
type Limits struct {
	MaxFanOut   int // parent rows a hop or for-each may fan out over
	Concurrency int // backend calls in flight per run
	MaxRows     int // rows one node may hold
}

// DefaultLimits for zero fields.
func DefaultLimits() Limits { return Limits{MaxFanOut: 100, Concurrency: 8, MaxRows: 10000} }

// Executor runs plans. It is safe for concurrent use.
type Executor struct {
	sender   Sender
	limits   Limits
	observer Observer
}

// Observer hears about every backend call the executor makes, with the
// catalog entry it was made for (metrics label calls by entry without
// parsing URLs).
type Observer interface {
	BackendCall(entry string, status int, err error)
}

// Option configures an Executor.
type Option func(*Executor)

// WithObserver reports every backend call to o.
func WithObserver(o Observer) Option { return func(x *Executor) { x.observer = o } }

// New returns an executor sending through s.
func New(s Sender, l Limits, opts ...Option) *Executor {
	d := DefaultLimits()
	if l.MaxFanOut <= 0 {
		l.MaxFanOut = d.MaxFanOut
	}
	if l.Concurrency <= 0 {
		l.Concurrency = d.Concurrency
	}
	if l.MaxRows <= 0 {
		l.MaxRows = d.MaxRows
	}
	x := &Executor{sender: s, limits: l}
	for _, o := range opts {
		o(x)
	}
	return x
}

// RootResult is one returned result.
type RootResult struct {
	Label   string    `json:"label"`
	EntryID string    `json:"entry_id,omitempty"`
	Entity  string    `json:"entity,omitempty"`
	Table   abi.Table `json:"table"`
	// Next, when set, continues the list (the session mints a handle for it).
	Next *Continuation `json:"-"`
}

// Step reports one node's work.
type Step struct {
	Node   int    `json:"node"`
	Op     string `json:"op"`
	Entity string `json:"entity,omitempty"`
	Calls  int    `json:"calls"`
	// Pages counts the responses that were pages of a paginated list
	// (the request carried paging state or the answer named a next page).
	Pages    int           `json:"pages"`
	Rows     int           `json:"rows"`
	Duration time.Duration `json:"duration_ns"`
}

// Mutation names an entity a run changed (for invalidation events).
type Mutation struct {
	EntryID    string   `json:"entry_id"`
	Entity     string   `json:"entity"`
	Capability string   `json:"capability,omitempty"`
	IDs        []string `json:"ids,omitempty"`
}

// Result is a finished run.
type Result struct {
	Roots     []RootResult `json:"roots"`
	Steps     []Step       `json:"steps"`
	Mutations []Mutation   `json:"mutations,omitempty"`
}

// Error is a run failure tied to a plan node.
type Error struct {
	Node   int
	Op     string
	Entity string
	Err    error
}

func (e *Error) Error() string {
	if e.Entity != "" {
		return fmt.Sprintf("step %d (%s %s): %v", e.Node, e.Op, e.Entity, e.Err)
	}
	return fmt.Sprintf("step %d (%s): %v", e.Node, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// literalArgs is a fresh, writable copy of a node's literal arguments.
func literalArgs(n *plan.Node) map[string]any {
	if len(n.Args) == 0 {
		return map[string]any{}
	}
	return maps.Clone(n.Args)
}

// filterStep turns host-side filters into a transform, so they can ride
// along in a continuation's transforms.
func filterStep(preds []plan.Pred) []plan.Transform {
	if len(preds) == 0 {
		return nil
	}
	return []plan.Transform{{Kind: plan.TFilter, Preds: preds}}
}

// ErrBackend wraps a backend's non-success answer as decoded by the guest.
var ErrBackend = errors.New("backend error")

// BackendError is a backend's non-success answer; it matches ErrBackend, and
// Status lets callers tell a missing row (404) from a failure.
type BackendError struct {
	Capability string
	Status     int
	Message    string // the guest's reading of the error body
	RetryAfter string // the backend's Retry-After header, if any
}

func (e *BackendError) Error() string {
	msg := fmt.Sprintf("%v: %s answered %d %s", ErrBackend, e.Capability, e.Status, http.StatusText(e.Status))
	if d := e.Detail(); d != "" {
		msg += ": " + d
	}
	return msg
}

// Is makes errors.Is(err, ErrBackend) hold.
func (e *BackendError) Is(target error) bool { return target == ErrBackend }

// ErrFanOut means a hop or for-each had more parent rows than allowed.
var ErrFanOut = errors.New("fan-out limit exceeded")

type nodeState struct {
	done  chan struct{}
	table abi.Table
	next  *Continuation
	err   error
	step  Step
	// related holds, on a view node, the rows each relation output leads to.
	related map[string]abi.Table
}

// Run executes p. Independent nodes run concurrently; a node starts when
// everything it depends on has finished. The first error cancels the rest.
func (x *Executor) Run(ctx context.Context, p *plan.Plan, env *Env) (*Result, error) {
	if p == nil {
		return nil, errors.New("malformed plan: no plan")
	}
	// Everything is validated before the first call: a plan that fails
	// validation must not have performed any (possibly mutating) request.
	if err := validate(p); err != nil {
		return nil, err
	}
	if len(p.Nodes) == 0 {
		return &Result{}, nil
	}
	if env == nil || env.Engine == nil {
		return nil, errors.New("executor: run without an engine")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	states := make([]*nodeState, len(p.Nodes))
	for i := range states {
		states[i] = &nodeState{done: make(chan struct{})}
	}
	sem := make(chan struct{}, x.limits.Concurrency)
	m, paged := newMeter(env.Budget), pagedNodes(p)
	dates := nodeDates(p.Nodes, env.Dates)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for i := range p.Nodes {
		wg.Add(1)
		go func(n *plan.Node, st *nodeState) {
			defer wg.Done()
			defer close(st.done)
			for _, d := range deps(n) {
				select {
				case <-states[d].done:
					if states[d].err != nil {
						st.err = context.Canceled
						return
					}
				case <-ctx.Done():
					st.err = ctx.Err()
					return
				}
			}
			start := time.Now()
			r := &run{x: x, env: env, sem: sem, states: states, meter: m, paged: paged, nodes: p.Nodes, dates: dates}
			nctx, done := ctx, func(Step, error) {}
			if env.OnStep != nil {
				nctx, done = env.OnStep(ctx, n)
			}
			st.table, st.next, st.err = r.node(nctx, n, &st.step)
			st.step.Node, st.step.Op, st.step.Entity = n.ID, n.Op, n.Entity
			st.step.Rows = len(st.table.Rows)
			st.step.Duration = time.Since(start)
			done(st.step, st.err)
			if st.err != nil {
				st.err = &Error{Node: n.ID, Op: n.Op, Entity: n.Entity, Err: st.err}
				errOnce.Do(func() { firstErr = st.err; cancel() })
			}
		}(&p.Nodes[i], states[i])
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res := &Result{}
	for _, st := range states {
		res.Steps = append(res.Steps, st.step)
	}
	for _, n := range p.Nodes {
		if n.Op == plan.OpMutate {
			res.Mutations = append(res.Mutations, mutation(n, states))
		}
	}
	for _, root := range p.Roots {
		n := p.Nodes[root.Node]
		st := states[root.Node]
		res.Roots = append(res.Roots, RootResult{Label: root.Label, EntryID: n.EntryID, Entity: n.Entity, Table: st.table, Next: st.next})
	}
	return res, nil
}

type run struct {
	mu     sync.Mutex // guards Step.Calls across fan-out goroutines
	x      *Executor
	env    *Env
	sem    chan struct{}
	states []*nodeState
	meter  *meter // the run's read budget
	paged  []bool // per node: may answer one page with a continuation (pagedNodes)
	nodes  []plan.Node
	dates  []dateCols // per node: the date columns its steps see (nodeDates)
}

func (r *run) node(ctx context.Context, n *plan.Node, step *Step) (abi.Table, *Continuation, error) {
	switch n.Op {
	case plan.OpFetch:
		return r.fetch(ctx, n, step)
	case plan.OpPage:
		return r.page(ctx, n, step)
	case plan.OpView:
		return r.view(ctx, n, step)
	case plan.OpHop:
		t, err := r.hop(ctx, n, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, err = shape(t, n, r.datesOf(n))
		return t, nil, err
	case plan.OpHydrate:
		// No continuation: a later page would come back without the
		// hydrated fields.
		t, err := r.hydrate(ctx, n, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, err = shape(t, n, r.datesOf(n))
		return t, nil, err
	case plan.OpText:
		return textTable(n), nil, nil
	case plan.OpMutate:
		t, err := r.mutate(ctx, n, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, err = shape(t, n, r.datesOf(n))
		return t, nil, err
	case plan.OpTransform:
		tin, next, err := r.transformInput(n)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, limited, err := shapeLimited(tin, n, r.datesOf(n))
		if limited {
			next = nil
		}
		if next != nil && len(n.Filters)+len(n.Transforms) > 0 {
			// Later pages of this view go through this node's steps too.
			c := *next
			c.Transforms = slices.Concat(c.Transforms, filterStep(n.Filters), n.Transforms)
			next = &c
		}
		return t, next, err
	}
	return abi.Table{}, nil, fmt.Errorf("unknown plan op %q", n.Op)
}

// vars merges literal args with values taken from earlier nodes' rows.
func (r *run) vars(n *plan.Node) (map[string]any, error) {
	vars := literalArgs(n)
	for _, ref := range n.ArgRefs {
		src := r.states[ref.Node].table
		if len(src.Rows) != 1 {
			if len(src.Rows) == 0 {
				// Also what a planner guard yields for a null value: a
				// predicate fed by it would otherwise be dropped and widen
				// the query to every row.
				return nil, fmt.Errorf("argument %s takes %s from a result with no row (the source is empty or its %s is null), so nothing was run", ref.Var, ref.Field, ref.Field)
			}
			return nil, fmt.Errorf("argument %s takes %s from a result with %d rows; it needs exactly one (add .limit(1) or get by id)", ref.Var, ref.Field, len(src.Rows))
		}
		c := src.Col(ref.Field)
		if c < 0 {
			return nil, fmt.Errorf("argument %s: field %q is not in the referenced result", ref.Var, ref.Field)
		}
		vars[ref.Var] = src.Rows[0][c]
	}
	return vars, r.fillTemplates(n, vars, abi.Table{}, nil)
}

// call compiles, sends and decodes one backend request. The semaphore
// bounds backend calls in flight across the whole run.
func (r *run) call(ctx context.Context, entry, capability string, vars, page map[string]any, relation string, step *Step) (*abi.DecodeResponse, *abi.CompiledRequest, error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	defer func() { <-r.sem }()
	hooks := r.env.Hooks[entry]
	creqIn := &abi.CompileRequest{EntryID: entry, Capability: capability, Vars: vars, Page: page}
	var dec *abi.DecodeResponse
	var creq *abi.CompiledRequest
	var err error
	if hooks.invokes(capability) {
		dec, err = r.invoke(ctx, hooks, creqIn, step)
		if err != nil {
			return nil, nil, err
		}
		creq = &abi.CompiledRequest{Page: page}
		return r.checkDecoded(capability, dec, creq)
	}
	creq, err = r.compile(ctx, hooks, creqIn)
	if err != nil {
		return nil, nil, err
	}
	resp, err := r.x.sender.Do(ctx, creq, r.env.Origins[entry], r.secretsFor(entry))
	if r.x.observer != nil {
		status := 0
		if resp != nil {
			status = resp.Status
		}
		r.x.observer.BackendCall(entry, status, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", creq.Method, capability, err)
	}
	r.mu.Lock()
	step.Calls++
	r.mu.Unlock()
	hdr := map[string]string{}
	if l := resp.Headers.Get("Link"); l != "" {
		hdr["Link"] = l
	}
	// RequestURL is the compiled URL, before egress adds any query-string
	// credential, so relative next links resolve against what was asked
	// for and no secret crosses into the guest.
	dec, err = r.decoder(hooks)(ctx, &abi.DecodeRequest{
		EntryID: entry, Capability: capability, Status: resp.Status, Headers: hdr, Relation: relation, Page: creq.Page,
		RequestURL: creq.URL, Vars: vars,
	}, resp.Body)
	if err != nil {
		return nil, nil, r.decodeError(capability, entry, creq, resp, err)
	}
	if len(creq.Page) > 0 || (dec != nil && dec.Next != nil) {
		r.mu.Lock()
		step.Pages++
		r.mu.Unlock()
	}
	return r.checkDecoded(capability, dec, creq)
}

// secretsFor returns the secrets the calls for entry may use.
func (r *run) secretsFor(entry string) egress.Secrets {
	if r.env.SecretsFor == nil {
		return nil
	}
	return r.env.SecretsFor(entry)
}

// checkDecoded refuses a decoded result the later steps cannot index.
func (r *run) checkDecoded(capability string, dec *abi.DecodeResponse, creq *abi.CompiledRequest) (*abi.DecodeResponse, *abi.CompiledRequest, error) {
	if dec == nil {
		return nil, nil, fmt.Errorf("decode %s: no result", capability)
	}
	// Decoded tables come out of the guest; every later step indexes rows by
	// column position, so a ragged row must stop here rather than panic there.
	for i, row := range dec.Table.Rows {
		if len(row) != len(dec.Table.Columns) {
			return nil, nil, fmt.Errorf("decode %s: row %d has %d cells for %d columns", capability, i+1, len(row), len(dec.Table.Columns))
		}
	}
	return dec, creq, nil
}
