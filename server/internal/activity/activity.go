// Package activity is the server's short memory of what agents did: a
// bounded journal of recent runs (with their plans, steps, results and
// errors), sandbox failures and egress denials, and the live event feed the
// console streams over SSE. It keeps no more than its caps, so it never
// grows with traffic; the session store stays the system of record for
// run artifacts.
package activity

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/session"
)

// Default caps. Rows are capped per root so one huge result cannot hold
// megabytes in the journal; the full artifact stays in the session store.
const (
	DefaultRuns    = 500
	DefaultFaults  = 200
	DefaultRowsCap = 200
)

// Problem is a failed run's error as a client saw it.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Hint   string `json:"hint,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Run is one run as the journal remembers it, failed or not.
type Run struct {
	// ID is the run id of a stored run, or a journal id for a failed one.
	ID         string
	Tenant     string
	LogicalID  string
	Intent     string
	PromptHash string
	SessionID  string
	N          int
	Program    string
	Plan       *plan.Plan
	Steps      []executor.Step
	Roots      []session.RunRoot
	// Truncated says some root kept only its first RowsCap rows here.
	Truncated bool
	Err       *Problem
	TraceID   string
	Started   time.Time
	Duration  time.Duration
}

// Failed reports whether the run ended in an error.
func (r *Run) Failed() bool { return r.Err != nil }

// Fault is a sandbox call failure or an egress denial.
type Fault struct {
	Tenant string // "" when the source does not know it (egress denials)
	Kind   string // "sandbox" or "egress"
	What   string // export or denial reason
	Result string // sandbox result class
	At     time.Time
}

// Event is one item of the live feed.
type Event struct {
	Kind   string // "run", "fault" or a source's kind (e.g. "invalidation")
	Tenant string // "" means every operator, no tenant
	Run    *Run   // for "run"
	Fault  *Fault // for "fault"
	// Text is a one-line description for other kinds.
	Text string
	At   time.Time
}

// Source is an external event feed the journal relays, such as the
// cross-replica invalidation bus: Subscribe delivers events until ctx ends.
type Source interface {
	Subscribe(ctx context.Context, deliver func(Event))
}

// Journal is safe for concurrent use.
type Journal struct {
	runsCap, faultsCap, rowsCap int
	now                         func() time.Time

	mu       sync.Mutex
	sessions []Session // oldest first, one per execute session
	runs     []*Run    // oldest first
	faults   []Fault
	subs     map[chan Event]string // channel → tenant ("" operator: all)
}

// Options configure a Journal; zero fields take defaults.
type Options struct {
	Runs, Faults, RowsCap int
	Now                   func() time.Time
}

// New returns an empty journal.
func New(o Options) *Journal {
	if o.Runs <= 0 {
		o.Runs = DefaultRuns
	}
	if o.Faults <= 0 {
		o.Faults = DefaultFaults
	}
	if o.RowsCap <= 0 {
		o.RowsCap = DefaultRowsCap
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Journal{runsCap: o.Runs, faultsCap: o.Faults, rowsCap: o.RowsCap, now: o.Now, subs: map[chan Event]string{}}
}

// Relay forwards a source's events to subscribers until ctx ends.
func (j *Journal) Relay(ctx context.Context, s Source) {
	go s.Subscribe(ctx, j.publish)
}

// AddRun records a run. The journal keeps its own copy of the rows it shows.
func (j *Journal) AddRun(r Run) {
	roots := make([]session.RunRoot, len(r.Roots))
	for i, root := range r.Roots {
		roots[i] = root
		roots[i].Table.Columns = slices.Clone(root.Table.Columns)
		rows := root.Table.Rows
		if len(rows) > j.rowsCap {
			rows = rows[:j.rowsCap]
			r.Truncated = true
		}
		roots[i].Table.Rows = slices.Clone(rows)
	}
	r.Roots = roots
	r.Steps = slices.Clone(r.Steps)
	rp := &r
	j.mu.Lock()
	j.runs = append(j.runs, rp)
	if len(j.runs) > j.runsCap {
		j.runs = slices.Delete(j.runs, 0, len(j.runs)-j.runsCap)
	}
	j.mu.Unlock()
	j.publish(Event{Kind: "run", Tenant: r.Tenant, Run: rp, At: r.Started})
}

// Session is an execute session as the console lists it before (and
// besides) its runs.
type Session struct {
	Tenant, LogicalID, Intent, PromptHash, SessionID string
	Opened                                           time.Time
}

// AddSession records a session opened or extended; one entry per execute
// session, the latest wins, bounded like runs.
func (j *Journal) AddSession(s Session) {
	if s.Opened.IsZero() {
		s.Opened = j.now()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.sessions = slices.DeleteFunc(j.sessions, func(o Session) bool { return o.Tenant == s.Tenant && o.SessionID == s.SessionID })
	j.sessions = append(j.sessions, s)
	if len(j.sessions) > j.runsCap {
		j.sessions = slices.Delete(j.sessions, 0, len(j.sessions)-j.runsCap)
	}
}

// Sessions returns the sessions a viewer may see, newest first.
func (j *Journal) Sessions(viewer string) []Session {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Session
	for i := len(j.sessions) - 1; i >= 0; i-- {
		if visible(viewer, j.sessions[i].Tenant) {
			out = append(out, j.sessions[i])
		}
	}
	return out
}

// AddFault records a sandbox failure or egress denial.
func (j *Journal) AddFault(f Fault) {
	if f.At.IsZero() {
		f.At = j.now()
	}
	j.mu.Lock()
	j.faults = append(j.faults, f)
	if len(j.faults) > j.faultsCap {
		j.faults = slices.Delete(j.faults, 0, len(j.faults)-j.faultsCap)
	}
	j.mu.Unlock()
	j.publish(Event{Kind: "fault", Tenant: f.Tenant, Fault: &f, At: f.At})
}

// visible says whether a tenant's viewer may see an item of owner; the
// empty viewer is an operator and sees everything.
func visible(viewer, owner string) bool { return viewer == "" || viewer == owner }

// Runs returns the runs a viewer may see that match keep, newest first.
func (j *Journal) Runs(viewer string, keep func(*Run) bool) []*Run {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []*Run
	for i := len(j.runs) - 1; i >= 0; i-- {
		r := j.runs[i]
		if visible(viewer, r.Tenant) && (keep == nil || keep(r)) {
			out = append(out, r)
		}
	}
	return out
}

// Run returns one run a viewer may see; another tenant's run is not found.
func (j *Journal) Run(viewer, id string) (*Run, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range j.runs {
		if r.ID == id && visible(viewer, r.Tenant) {
			return r, true
		}
	}
	return nil, false
}

// Faults returns the faults a viewer may see, newest first. Faults with no
// tenant (egress denials) are shown to operators only.
func (j *Journal) Faults(viewer string) []Fault {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Fault
	for i := len(j.faults) - 1; i >= 0; i-- {
		if visible(viewer, j.faults[i].Tenant) {
			out = append(out, j.faults[i])
		}
	}
	return out
}

// Subscribe returns a channel of live events a viewer may see and a cancel
// func. Slow subscribers miss events rather than blocking runs.
func (j *Journal) Subscribe(viewer string) (<-chan Event, func()) {
	ch := make(chan Event, 64)
	j.mu.Lock()
	j.subs[ch] = viewer
	j.mu.Unlock()
	return ch, func() {
		j.mu.Lock()
		if _, ok := j.subs[ch]; ok {
			delete(j.subs, ch)
			close(ch)
		}
		j.mu.Unlock()
	}
}

func (j *Journal) publish(e Event) {
	if e.At.IsZero() {
		e.At = j.now()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for ch, viewer := range j.subs {
		if !visible(viewer, e.Tenant) {
			continue
		}
		select {
		case ch <- e:
		default:
		}
	}
}
