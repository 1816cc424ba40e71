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
	"strings"
	"sync"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
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
	Skip    int         `json:"skip,omitempty"`
	Filters []plan.Pred `json:"filters,omitempty"`
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
	Node     int           `json:"node"`
	Op       string        `json:"op"`
	Entity   string        `json:"entity,omitempty"`
	Calls    int           `json:"calls"`
	Rows     int           `json:"rows"`
	Duration time.Duration `json:"duration_ns"`
}

// Mutation names an entity a run changed (for invalidation events).
type Mutation struct {
	EntryID string `json:"entry_id"`
	Entity  string `json:"entity"`
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
			r := &run{x: x, env: env, sem: sem, states: states, meter: m, paged: paged}
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
			res.Mutations = append(res.Mutations, Mutation{EntryID: n.EntryID, Entity: n.Entity})
		}
	}
	for _, root := range p.Roots {
		n := p.Nodes[root.Node]
		st := states[root.Node]
		res.Roots = append(res.Roots, RootResult{Label: root.Label, EntryID: n.EntryID, Entity: n.Entity, Table: st.table, Next: st.next})
	}
	return res, nil
}

func deps(n *plan.Node) []int {
	out := append([]int(nil), n.Deps...)
	if n.Input >= 0 {
		out = append(out, n.Input)
	}
	for _, r := range n.ArgRefs {
		out = append(out, r.Node)
	}
	return out
}

// validate checks a plan's structure: node ids match positions, every
// dependency and root names an existing node, and the graph is acyclic.
// Plans come out of a guest, so nothing here may panic or recurse deeply.
func validate(p *plan.Plan) error {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.ID != i {
			return fmt.Errorf("malformed plan: node %d has id %d", i, n.ID)
		}
		for _, d := range deps(n) {
			if d < 0 || d >= len(p.Nodes) || d == i {
				return fmt.Errorf("malformed plan: node %d depends on %d", i, d)
			}
		}
	}
	for _, root := range p.Roots {
		if root.Node < 0 || root.Node >= len(p.Nodes) {
			return fmt.Errorf("malformed plan: root %q names node %d", root.Label, root.Node)
		}
	}
	return checkAcyclic(p)
}

// checkAcyclic runs Kahn's algorithm: iterative, so a long hostile chain
// cannot exhaust the stack.
func checkAcyclic(p *plan.Plan) error {
	pending := make([]int, len(p.Nodes)) // unfinished dependencies per node
	dependents := make([][]int, len(p.Nodes))
	for i := range p.Nodes {
		for _, d := range deps(&p.Nodes[i]) {
			pending[i]++
			dependents[d] = append(dependents[d], i)
		}
	}
	var ready []int
	for i, n := range pending {
		if n == 0 {
			ready = append(ready, i)
		}
	}
	done := 0
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		done++
		for _, j := range dependents[i] {
			if pending[j]--; pending[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	if done != len(p.Nodes) {
		for i, n := range pending {
			if n > 0 {
				return fmt.Errorf("malformed plan: cycle through node %d", i)
			}
		}
	}
	return nil
}

type run struct {
	mu     sync.Mutex // guards Step.Calls across fan-out goroutines
	x      *Executor
	env    *Env
	sem    chan struct{}
	states []*nodeState
	meter  *meter // the run's read budget
	paged  []bool // per node: may answer one page with a continuation (pagedNodes)
}

func (r *run) node(ctx context.Context, n *plan.Node, step *Step) (abi.Table, *Continuation, error) {
	switch n.Op {
	case plan.OpFetch:
		return r.fetch(ctx, n, step)
	case plan.OpPage:
		return r.page(ctx, n, step)
	case plan.OpHop:
		t, err := r.hop(ctx, n, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, err = shape(t, n)
		return t, nil, err
	case plan.OpHydrate:
		// No continuation: a later page would come back without the
		// hydrated fields.
		t, err := r.hydrate(ctx, n, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, err = shape(t, n)
		return t, nil, err
	case plan.OpText:
		return textTable(n), nil, nil
	case plan.OpMutate:
		t, err := r.mutate(ctx, n, step)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, err = shape(t, n)
		return t, nil, err
	case plan.OpTransform:
		tin, next, err := r.transformInput(n)
		if err != nil {
			return abi.Table{}, nil, err
		}
		t, limited, err := shapeLimited(tin, n)
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

func (r *run) hop(ctx context.Context, n *plan.Node, step *Step) (abi.Table, error) {
	if n.Hop == nil || n.Input < 0 {
		return abi.Table{}, errors.New("hop without relation or input")
	}
	parents := r.states[n.Input].table
	calls, err := hopParents(n, parents)
	if err != nil {
		return abi.Table{}, err
	}
	// Every parent called needs at least one read: refuse before the first
	// call when they cannot all be read within the run's budget.
	if err := r.meter.reserve(len(calls), n.Entity); err != nil {
		return abi.Table{}, err
	}
	relation := ""
	if n.Hop.Materialize == "from_parent_get" {
		relation = n.Hop.Relation
	}
	t, err := r.fanOut(ctx, n, n.Hop.Capability, relation, len(calls), step, func(i int) (map[string]any, error) {
		i = calls[i]
		vars := literalArgs(n)
		for _, b := range n.Hop.Binds {
			c := parents.Col(b.Field)
			if c < 0 {
				return nil, fmt.Errorf("relation %s: parent rows have no field %q", n.Hop.Relation, b.Field)
			}
			v := parents.Rows[i][c]
			if v == nil {
				return nil, nil // a parent without the key has no related rows
			}
			vars[b.Var] = v
		}
		return vars, nil
	})
	if err != nil || n.Hop.DistinctBy == "" {
		return t, err
	}
	return distinct(t, n.Hop.DistinctBy)
}

// distinct keeps the first row per value of field. Many parents of a
// cardinality-one relation often share their target (thirty transactions,
// six accounts); the relation's rows are the targets, not one per parent.
// Rows without the field's value cannot be told apart and are all kept.
func distinct(t abi.Table, field string) (abi.Table, error) {
	c := t.Col(field)
	if c < 0 {
		if len(t.Rows) == 0 {
			return t, nil
		}
		return abi.Table{}, fmt.Errorf("relation rows have no id field %q to tell targets apart", field)
	}
	seen := make(map[string]bool, len(t.Rows))
	rows := t.Rows[:0:0]
	for _, row := range t.Rows {
		if v := row[c]; v != nil {
			// The type is part of the key: 1 and "1" are different ids.
			k := fmt.Sprintf("%T\x00%v", v, v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		rows = append(rows, row)
	}
	t.Rows = rows
	return t, nil
}

// hydrate completes Input's rows: for every row lacking one of the fields
// to fill, it runs the entity's get with the row's key and copies those
// fields from the answer, keeping the row's other cells and its position.
// Rows that already carry every field are not read again. A get answering
// 404 leaves its row as it was (the row was listed, so it is kept rather
// than silently dropped); any other failure fails the run.
func (r *run) hydrate(ctx context.Context, n *plan.Node, step *Step) (abi.Table, error) {
	h := n.Hydrate
	if h == nil || n.Input < 0 {
		return abi.Table{}, errors.New("hydrate without fields or input")
	}
	in := r.states[n.Input].table
	t := abi.Table{Columns: slices.Clone(in.Columns), Rows: make([][]any, len(in.Rows))}
	cols := make([]int, len(h.Fields))
	for i, f := range h.Fields {
		if cols[i] = t.Col(f); cols[i] < 0 {
			t.Columns = append(t.Columns, f)
			cols[i] = len(t.Columns) - 1
		}
	}
	for i, row := range in.Rows {
		// Each row is copied: hydration writes into it, and the input's
		// rows may be shared with other nodes and roots.
		t.Rows[i] = append(make([]any, 0, len(t.Columns)), row...)
		t.Rows[i] = t.Rows[i][:len(t.Columns)]
	}
	binds := make([]int, len(h.Binds))
	for i, b := range h.Binds {
		if binds[i] = in.Col(b.Field); binds[i] < 0 {
			return abi.Table{}, fmt.Errorf("hydrate %s: rows have no key field %q", n.Entity, b.Field)
		}
	}
	var todo []int
	for i, row := range t.Rows {
		if slices.ContainsFunc(cols, func(c int) bool { return row[c] == nil }) {
			todo = append(todo, i)
		}
	}
	if len(todo) > r.x.limits.MaxFanOut {
		return abi.Table{}, fmt.Errorf("%w: reading %d %s rows in full (max %d); add .limit(n) before asking for %s", ErrFanOut, len(todo), n.Entity, r.x.limits.MaxFanOut, strings.Join(h.Fields, ", "))
	}
	if err := r.meter.reserve(len(todo), n.Entity); err != nil {
		return abi.Table{}, err
	}
	err := r.forEach(ctx, len(todo), func(ctx context.Context, k int) error {
		row := t.Rows[todo[k]]
		vars := literalArgs(n)
		for i, b := range h.Binds {
			if row[binds[i]] == nil {
				return nil // a row without its key cannot be read again
			}
			vars[b.Var] = row[binds[i]]
		}
		if err := r.meter.take(n.Entity); err != nil {
			return err
		}
		dec, _, err := r.call(ctx, n.EntryID, n.Capability, vars, nil, "", step)
		var be *BackendError
		if errors.As(err, &be) && be.Status == http.StatusNotFound {
			return nil
		}
		if err != nil {
			return fmt.Errorf("hydrate %s row %d: %w", n.Entity, todo[k]+1, err)
		}
		if len(dec.Table.Rows) == 0 {
			return nil
		}
		got := dec.Table.Rows[0]
		for i, f := range h.Fields {
			if c := dec.Table.Col(f); c >= 0 {
				row[cols[i]] = got[c]
			}
		}
		return nil
	})
	if err != nil {
		return abi.Table{}, err
	}
	return t, nil
}

// fanOut calls capability once per i in [0, count) with the variables
// varsFor returns (nil skips that i), concurrently within the run's bound,
// and concatenates the answers onto one row shape.
func (r *run) fanOut(ctx context.Context, n *plan.Node, capability, relation string, count int, step *Step, varsFor func(i int) (map[string]any, error)) (abi.Table, error) {
	tables := make([]abi.Table, count)
	err := r.forEach(ctx, count, func(ctx context.Context, i int) error {
		vars, err := varsFor(i)
		if err != nil || vars == nil {
			return err
		}
		if n.Op == plan.OpHop {
			// A relation is all of the parent's related rows, not the
			// first page of them.
			l, _, err := r.readList(ctx, n.EntryID, capability, n.Entity, vars, nil, 0, relation, step, nil)
			if err != nil {
				return err
			}
			tables[i] = l.table
			return nil
		}
		dec, _, err := r.call(ctx, n.EntryID, capability, vars, nil, relation, step)
		if err != nil {
			return err
		}
		t := dec.Table
		tables[i] = t
		return nil
	})
	if err != nil {
		return abi.Table{}, err
	}
	out := abi.Table{Columns: concatColumns(n.Columns, tables)}
	for _, t := range tables {
		out.Rows = append(out.Rows, reorder(t, out.Columns)...)
		if len(out.Rows) > r.x.limits.MaxRows {
			return abi.Table{}, fmt.Errorf("%s yields more than %d rows", capability, r.x.limits.MaxRows)
		}
	}
	return out, nil
}

// concatColumns picks the row shape for tables fanned in from several calls:
// the plan's, else the first call's that has one. Every table is then
// reordered onto it, so calls answering in different column orders (or a
// skipped parent's empty table) cannot misalign rows.
func concatColumns(planned []string, tables []abi.Table) []string {
	if planned != nil {
		return planned
	}
	for _, t := range tables {
		if t.Columns != nil {
			return t.Columns
		}
	}
	return nil
}

func (r *run) mutate(ctx context.Context, n *plan.Node, step *Step) (abi.Table, error) {
	base, err := r.vars(n)
	if err != nil {
		return abi.Table{}, err
	}
	if n.EachRow != nil {
		return r.eachRow(ctx, n, base, step)
	}
	if n.ForEach == nil {
		dec, _, err := r.call(ctx, n.EntryID, n.Capability, base, nil, "", step)
		if err != nil {
			return abi.Table{}, err
		}
		if n.Kind == catalog.KindDelete {
			return deleted([]any{base["id"]}), nil
		}
		return dec.Table, nil
	}
	if n.Input < 0 {
		return abi.Table{}, errors.New("for-each mutation without input")
	}
	in := r.states[n.Input].table
	if len(in.Rows) > r.x.limits.MaxFanOut {
		return abi.Table{}, fmt.Errorf("%w: %d receiver rows (max %d)", ErrFanOut, len(in.Rows), r.x.limits.MaxFanOut)
	}
	c := in.Col(n.ForEach.Field)
	if c < 0 {
		return abi.Table{}, fmt.Errorf("receiver rows have no field %q", n.ForEach.Field)
	}
	// Checked before any call: a change applied to some receivers and then
	// refused for a keyless one would leave the backend half-changed.
	for i, row := range in.Rows {
		if row[c] == nil {
			return abi.Table{}, fmt.Errorf("receiver row %d has no %s; nothing was changed", i+1, n.ForEach.Field)
		}
	}
	t, err := r.fanOut(ctx, n, n.Capability, "", len(in.Rows), step, func(i int) (map[string]any, error) {
		vars := maps.Clone(base)
		vars[n.ForEach.Var] = in.Rows[i][c]
		return vars, nil
	})
	if err != nil || n.Kind != catalog.KindDelete {
		return t, err
	}
	ids := make([]any, len(in.Rows))
	for i, row := range in.Rows {
		ids[i] = row[c]
	}
	return deleted(ids), nil
}

// forEach runs fn for 0..n-1 with the run's concurrency bound; the first
// error cancels the others.
func (r *run) forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}(i)
	}
	wg.Wait()
	return first
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
		var ae *abi.Error
		if errors.As(err, &ae) && (resp.Status < 200 || resp.Status > 299) {
			msg := redactSecret(ae.Message, creq, r.secretsFor(entry))
			return nil, nil, &BackendError{Capability: capability, Status: resp.Status, Message: msg, RetryAfter: resp.Headers.Get("Retry-After")}
		}
		return nil, nil, fmt.Errorf("decode %s: %w", capability, err)
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
