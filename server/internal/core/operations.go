package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/results"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Long operations (language.md): a run started with wait=false, or an
// expensive plan, works in the background as an operation sN_oM. The
// program wait(sN_oM) answers its progress lines or, once it finished, its
// result; cancel(sN_oM) stops it before its next backend call (completed
// writes stay). Operation records live in the session store; the worker
// goroutine lives on the replica that started it and reads cancel requests
// from the store, so wait and cancel work from any connection or replica;
// it keeps a lease in the store while it runs (oplease.go), which is how
// another process tells a live owner from a dead one.

const (
	// maxRunningOps bounds the unfinished operations of one session.
	maxRunningOps = 16
	// defaultOpTimeout bounds one operation's run.
	defaultOpTimeout = 10 * time.Minute
	// defaultOpWait is how long wait(…) holds for an unfinished operation
	// before answering its progress.
	defaultOpWait = 10 * time.Second
)

var errOpCancelled = errors.New("operation cancelled")

// Answer is a live run's outcome: a finished run, an operation, or both
// (wait on an operation that finished).
type Answer struct {
	Outcome *RunOutcome
	Op      *session.Operation
	// Text is the operation's progress lines ("" for a plain run).
	Text string
}

// opRunner owns the operation workers of one App.
type opRunner struct {
	timeout, wait time.Duration
	base          context.Context
	stop          context.CancelCauseFunc
	wg            sync.WaitGroup
	// poll is how often wait(…) rereads an operation another process runs.
	poll time.Duration
	// leases keeps this process's operation owner leases (oplease.go).
	leases *leaseKeeper

	mu   sync.Mutex
	done map[opKey]chan struct{} // closed when a local worker finishes

	running  prometheus.Gauge
	finished *prometheus.CounterVec
}

type opKey struct {
	tenant, scope string
	n             int
}

// newOpRunner registers the operation metrics on reg (nil: unregistered);
// leases go to store.
func newOpRunner(reg prometheus.Registerer, store leaseStore, log *slog.Logger, timeout, wait time.Duration) *opRunner {
	if timeout <= 0 {
		timeout = defaultOpTimeout
	}
	if wait <= 0 {
		wait = defaultOpWait
	}
	base, stop := context.WithCancelCause(context.Background())
	r := &opRunner{
		timeout: timeout, wait: wait, base: base, stop: stop, done: map[opKey]chan struct{}{}, poll: 200 * time.Millisecond,
		leases:  newLeaseKeeper(store, log),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "plasmd_operations_running", Help: "Long operations working now."}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "plasmd_operations_total",
			Help: "Long operations that stopped, by final state."}, []string{"state"}),
	}
	if reg != nil {
		reg.MustRegister(r.running, r.finished)
	}
	return r
}

// errProcessEnded is why workers stop when their process shuts down.
var errProcessEnded = errors.New("the plasmd process running it shut down")

// close cancels every worker and waits for them; each records its end
// and deletes its lease, then lease renewal stops.
func (r *opRunner) close() {
	r.stop(errProcessEnded)
	r.wg.Wait()
	r.leases.close()
}

// drain waits until no worker runs or ctx ends, and returns how many
// still run. Each worker is bounded by its own time limit.
func (r *opRunner) drain(ctx context.Context) int {
	for {
		r.mu.Lock()
		n := len(r.done)
		var one chan struct{}
		for _, d := range r.done {
			one = d
			break
		}
		r.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-one:
		case <-ctx.Done():
			return n
		}
	}
}

// RunningOperations is how many operation workers this process runs.
func (s *Service) RunningOperations() int {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	return len(s.ops.done)
}

// DrainOperations lets this process's running operations finish (each
// within its own time limit) until ctx ends; it returns how many still
// run. Close then stops those, recording that the process ended.
func (s *Service) DrainOperations(ctx context.Context) int { return s.ops.drain(ctx) }

// continuationRe matches a whole program that is a wait(…) or cancel(…).
var continuationRe = regexp.MustCompile(`^\s*(wait|cancel)\(\s*([A-Za-z0-9_]+)\s*\)\s*$`)

// continuation reads a program that is one wait(…) or cancel(…), with any
// ;; comments the language allows around it. Matching the raw text alone
// sent `;; poll\nwait(s0_o1)` or `wait(s0_o1) ;; again` to the planner,
// which answered that this server has no operations to wait for. Cutting
// every line at ";;" cannot turn another program into a match: a cut
// inside a string leaves its opening quote, which the pattern refuses.
func continuation(program string) (verb, handle string, ok bool) {
	if !strings.Contains(program, ";;") {
		m := continuationRe.FindStringSubmatch(program)
		if m == nil {
			return "", "", false
		}
		return m[1], m[2], true
	}
	lines := strings.Split(program, "\n")
	for i, ln := range lines {
		lines[i], _, _ = strings.Cut(ln, ";;")
	}
	m := continuationRe.FindStringSubmatch(strings.Join(lines, "\n"))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Execute is a live run as both surfaces see it: wait(…) and cancel(…)
// programs, review gating, then a plain run or an operation. wait is the
// caller's choice (nil: the server decides by the plan's cost).
func (s *Service) Execute(ctx context.Context, t *tenant.Tenant, sc RunScope, program string, wait *bool) (*Answer, error) {
	if verb, handle, ok := continuation(program); ok {
		n, err := s.opHandle(ctx, t, sc, handle)
		if err != nil {
			return nil, err
		}
		if verb == "cancel" {
			return s.cancelOp(ctx, t, sc, n)
		}
		return s.waitOp(ctx, t, sc, n)
	}
	// Plan, gate and run inside one observed run, so the plan is traced in
	// the session's trace and refusals are journaled like any failed run.
	var started *Answer
	out, err := s.observeRun(ctx, t, sc, program, func(ctx context.Context) (*RunOutcome, error) {
		p, err := s.Plan(ctx, t, sc.Execute, program)
		if err != nil {
			return nil, err
		}
		if err := s.checkPageHandles(ctx, t, sc, p); err != nil {
			return &RunOutcome{Plan: p}, err
		}
		if err := s.checkGate(ctx, t, sc.scope(), p, sc.Gate); err != nil {
			return &RunOutcome{Plan: p}, err
		}
		// Rate limits admit the run once, whether it runs now or as an
		// operation.
		if err := s.admitPlan(ctx, t, p); err != nil {
			return &RunOutcome{Plan: p}, err
		}
		if wait != nil && !*wait || wait == nil && expensive(p) {
			started, err = s.startOp(ctx, t, sc, program, p)
			return nil, err
		}
		return s.runPlanned(ctx, t, sc, program, p)
	})
	if err != nil {
		return nil, err
	}
	if started != nil {
		return started, nil
	}
	return &Answer{Outcome: out}, nil
}

// expensive is the policy for runs that become operations unasked: a
// mutation once per row of an unbounded input (each row is a write, and
// the agent should be able to watch and stop it).
func expensive(p *plan.Plan) bool {
	for _, r := range p.Reasons {
		if strings.HasPrefix(r, "fan-out over unbounded input: ") {
			for _, n := range p.Nodes {
				if n.Op == plan.OpMutate && n.ForEach != nil {
					return true
				}
			}
		}
	}
	return false
}

// opHandle checks a handle sN_oM against the run's session and returns M.
func (s *Service) opHandle(ctx context.Context, t *tenant.Tenant, sc RunScope, handle string) (int, error) {
	ref, num, ok := strings.Cut(handle, "_o")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n <= 0 || !IsRef(ref) {
		return 0, &problem.Problem{Type: problem.Base + "bad-handle", Title: "Bad Request", Status: 400,
			Detail: fmt.Sprintf("%q is not an operation handle", handle), Hint: "operation handles look like s0_o1 and come from plasm_run with wait: false"}
	}
	if ref != sc.Ref && !s.foreignPageRef(ctx, t, sc, ref) {
		return 0, &problem.Problem{Type: problem.Base + "bad-handle", Title: "Bad Request", Status: 400,
			Detail: fmt.Sprintf("operation %s belongs to logical session %s, not %s", handle, ref, sc.Ref),
			Hint:   "use handles from this logical_session_ref's own results"}
	}
	return n, nil
}

func (s *Service) startOp(ctx context.Context, t *tenant.Tenant, sc RunScope, program string, p *plan.Plan) (*Answer, error) {
	n, err := s.store.NextSeq(ctx, t.ID, sc.scope(), "op")
	if err != nil {
		return nil, err
	}
	op := session.Operation{Tenant: t.ID, Scope: sc.scope(), N: n, Handle: fmt.Sprintf("%s_o%d", sc.Ref, n),
		Program: program, Summary: p.Summary, Verdict: p.Verdict, State: session.OpAccepted,
		Owner: ownerIdentity(), Deadline: time.Now().Add(s.ops.timeout).UTC(), Leased: true}
	r := s.ops
	// The lease exists before the record, so no waiter ever finds the
	// record without it; a worker that loses it stops (errLeaseLost).
	ref := session.OpRef{Tenant: t.ID, Scope: sc.scope(), N: n}
	wctx, lost := context.WithCancelCause(r.base)
	if err := r.leases.take(ctx, ref, lost); err != nil {
		lost(nil)
		return nil, err
	}
	if err := s.store.StartOperation(ctx, op, maxRunningOps); err != nil {
		r.leases.release(context.WithoutCancel(ctx), ref)
		lost(nil)
		if errors.Is(err, session.ErrTooManyOperations) {
			pr := problem.New(http.StatusTooManyRequests, "too-many-operations",
				fmt.Sprintf("this session already has %d unfinished operations", maxRunningOps))
			pr.Hint = "wait(…) for one to finish or cancel(…) one, then start this again"
			return nil, pr
		}
		return nil, err
	}
	key := opKey{t.ID, sc.scope(), n}
	done := make(chan struct{})
	r.mu.Lock()
	r.done[key] = done
	r.mu.Unlock()
	r.wg.Add(1)
	r.running.Inc()
	go s.work(wctx, lost, t, sc, op, p, done)
	return &Answer{Op: &op, Text: ProgressText(op)}, nil
}

// work runs one operation to its end and records the outcome. It never
// outlives the runner (App.Close), the operation timeout or its lease
// (base is cancelled with errLeaseLost when a renewal finds it gone).
// stop releases base when the worker ends.
func (s *Service) work(base context.Context, stop context.CancelCauseFunc, t *tenant.Tenant, sc RunScope, op session.Operation, p *plan.Plan, done chan struct{}) {
	r := s.ops
	ref := session.OpRef{Tenant: op.Tenant, Scope: op.Scope, N: op.N}
	defer stop(nil)
	defer func() {
		r.mu.Lock()
		delete(r.done, opKey{op.Tenant, op.Scope, op.N})
		r.mu.Unlock()
		close(done)
		r.wg.Done()
	}()
	ctx, cancel := context.WithTimeout(base, r.timeout)
	defer cancel()
	op.State = session.OpRunning
	s.updateOp(ctx, &op)
	var mu sync.Mutex
	probe := &RunProbe{
		Before: func(ctx context.Context) error {
			// A cancel state it cannot read stops the call too: going on
			// would make a backend call (maybe a write) the caller may
			// have cancelled. On Redis the read fails once the run's
			// context ends, which a sibling call's cancel does.
			cur, err := s.store.GetOperation(ctx, op.Tenant, op.Scope, op.N)
			if err != nil {
				return fmt.Errorf("operation %s: read whether it was cancelled: %w", op.Handle, err)
			}
			if cur.CancelRequested {
				return errOpCancelled
			}
			if cur.Final() {
				// A waiter elsewhere found the lease gone and recorded
				// the end: calls now would be unaccounted for.
				return errLeaseLost
			}
			return nil
		},
		After: func(ctx context.Context) {
			mu.Lock()
			op.Calls++
			snap := op
			mu.Unlock()
			s.updateOp(ctx, &snap)
		},
	}
	out, err := s.observeRun(WithProbe(ctx, probe), t, sc, op.Program, func(ctx context.Context) (*RunOutcome, error) {
		return s.runPlanned(ctx, t, sc, op.Program, p)
	})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case err == nil:
		op.State, op.RunN = session.OpDone, out.Run.N
	case errors.Is(err, errOpCancelled):
		op.State = session.OpCancelled
	case context.Cause(r.base) != nil:
		op.State, op.Error = session.OpFailed, partialRun(context.Cause(r.base).Error())
	case errors.Is(context.Cause(base), errLeaseLost) || errors.Is(err, errLeaseLost):
		op.State, op.Error = session.OpFailed, partialRun(errLeaseLost.Error())
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		op.State, op.Error = session.OpFailed, partialRun(fmt.Sprintf("it reached its time limit (%s)", r.timeout))
	default:
		op.State, op.Error = session.OpFailed, problem.From(err).Detail
	}
	// Counted before the end is recorded, so whoever sees the final state
	// (wait, another replica) also sees it in /metrics.
	r.running.Dec()
	r.finished.WithLabelValues(op.State).Inc()
	// Record the end even if the run's context ended (timeout, shutdown),
	// then drop the lease: the other order would let a waiter find no
	// lease beside a "running" record.
	end := context.WithoutCancel(ctx)
	s.updateOp(end, &op)
	r.leases.release(end, ref)
}

func (s *Service) updateOp(ctx context.Context, op *session.Operation) {
	if err := s.store.UpdateOperation(ctx, *op); err != nil {
		s.log.Warn("record operation progress", "handle", op.Handle, "err", err)
	}
}

// waitOp answers an operation's progress, holding a while for a worker on
// this replica to finish; a finished operation answers with its result.
func (s *Service) waitOp(ctx context.Context, t *tenant.Tenant, sc RunScope, n int) (*Answer, error) {
	r := s.ops
	r.mu.Lock()
	done := r.done[opKey{t.ID, sc.scope(), n}]
	r.mu.Unlock()
	if done != nil {
		timer := time.NewTimer(r.wait)
		select {
		case <-done:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	op, err := s.getOp(ctx, t, sc, n)
	if err != nil {
		return nil, err
	}
	if done == nil && !op.Final() {
		if op, err = s.waitElsewhere(ctx, t, sc, op); err != nil {
			return nil, err
		}
	}
	a := &Answer{Op: &op, Text: ProgressText(op)}
	if op.State == session.OpDone {
		if a.Outcome, err = s.storedOutcome(ctx, t, sc, op); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// partialRun is the error of an operation stopped from outside its
// program: it names why and says the result is partial, never a result.
// It carries no call count: the record's own count (shown beside it as
// "failed after N calls", and in the operation document) is the one that
// stays current, where a number written into this text could be read
// before the last calls landed.
func partialRun(why string) string {
	return why + " before the operation finished: a partial run, not a result. The backend calls counted for it had " +
		"completed and a call in flight may also have reached the backend; their effects stay (a mutation may be partly " +
		"applied) and the rest of the program did not run"
}

// ownerLost says why an unfinished operation another process owns is
// judged ownerless, or "" while its owner is judged alive. The judgment
// is the lease's, so the store's clock alone decides (oplease.go). /proc
// only shortens the wait on the same machine: an owner it sees gone
// whose lease has also gone unrenewed for half its TTL (two and a half
// renewals) is gone. A lease still being renewed overrules /proc, which
// a VM clone sharing the boot id would fool.
func (s *Service) ownerLost(ctx context.Context, op session.Operation) (string, error) {
	if !op.Leased {
		return legacyOwnerLost(op, time.Now()), nil
	}
	l, err := s.store.GetOpLease(ctx, session.OpRef{Tenant: op.Tenant, Scope: op.Scope, N: op.N})
	switch {
	case errors.Is(err, session.ErrNotFound):
		return "the plasmd process running it ended (its lease in the shared store expired unrenewed: " +
			"it was closed or killed, or lost the store)", nil
	case err != nil:
		return "", fmt.Errorf("operation %s: read its owner's lease: %w", op.Handle, err)
	}
	if op.Owner != "" && l.TTL-l.Left > l.TTL/2 && ownerGone(op.Owner) {
		return "the plasmd process running it ended (it was closed or killed)", nil
	}
	return "", nil
}

// legacyGrace is how long past its deadline an operation a plasmd from
// before leases runs may go on recording its end before it is judged
// lost: that plasmd's own rule, so a rolling upgrade neither fails its
// live operations (they have no lease) nor waits on dead ones for ever.
const legacyGrace = time.Minute

// legacyOwnerLost judges an operation whose record has no lease by that
// plasmd's rule: its process seen gone here, or its deadline (on its
// owner's clock) a minute past on this one.
func legacyOwnerLost(op session.Operation, now time.Time) string {
	switch {
	case op.Owner != "" && ownerGone(op.Owner):
		return "the plasmd process running it ended (it was closed or killed)"
	case !op.Deadline.IsZero() && now.After(op.Deadline.Add(legacyGrace)):
		return "the plasmd process running it did not record an end within its time limit (it was probably closed or killed)"
	}
	return ""
}

// waitElsewhere holds wait(…) on an operation another process runs (a
// replica, or the previous one-shot stdio process) by rereading the store
// until it ends or the wait time passes. An operation whose owner is gone
// (ownerLost) is recorded failed, saying so, instead of answering
// "running" for ever.
func (s *Service) waitElsewhere(ctx context.Context, t *tenant.Tenant, sc RunScope, op session.Operation) (session.Operation, error) {
	r := s.ops
	timer := time.NewTimer(r.wait)
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			// The caller went: answer what was read, not a store error.
			return op, nil
		}
		lost, err := s.ownerLost(ctx, op)
		if err != nil {
			return op, err
		}
		if lost != "" {
			op.State, op.Error = session.OpFailed, partialRun(lost)
			// The store keeps a final state the worker recorded first,
			// and the higher call count.
			if err := s.store.UpdateOperation(ctx, op); err != nil {
				return op, err
			}
			return s.getOp(ctx, t, sc, op.N)
		}
		poll := time.NewTimer(r.poll)
		select {
		case <-ctx.Done():
			poll.Stop()
			return op, nil
		case <-timer.C:
			poll.Stop()
			return op, nil
		case <-poll.C:
		}
		cur, err := s.getOp(ctx, t, sc, op.N)
		if err != nil || cur.Final() {
			return cur, err
		}
		op = cur
	}
}

func (s *Service) cancelOp(ctx context.Context, t *tenant.Tenant, sc RunScope, n int) (*Answer, error) {
	op, err := s.store.RequestCancel(ctx, t.ID, sc.scope(), n)
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, problem.NotFound("operation %s_o%d is unknown in this session", sc.Ref, n)
		}
		return nil, err
	}
	return &Answer{Op: &op, Text: ProgressText(op)}, nil
}

func (s *Service) getOp(ctx context.Context, t *tenant.Tenant, sc RunScope, n int) (session.Operation, error) {
	op, err := s.store.GetOperation(ctx, t.ID, sc.scope(), n)
	if errors.Is(err, session.ErrNotFound) {
		return op, problem.NotFound("operation %s_o%d is unknown in this session", sc.Ref, n)
	}
	return op, err
}

// storedOutcome rebuilds a finished operation's result from its run
// artifact, the way a plain run would have answered.
func (s *Service) storedOutcome(ctx context.Context, t *tenant.Tenant, sc RunScope, op session.Operation) (*RunOutcome, error) {
	run, err := s.store.GetRunByIndex(ctx, t.ID, sc.scope(), op.RunN)
	if err != nil {
		return nil, fmt.Errorf("operation %s result: %w", op.Handle, err)
	}
	out := &RunOutcome{Run: run, Plan: &plan.Plan{Summary: op.Summary, Verdict: op.Verdict}}
	out.ShortURI = fmt.Sprintf("plasm://session/%s/r/%d", sc.Ref, run.N)
	out.CanonicalURI = fmt.Sprintf("plasm://execute/%s/%s/run/%s", run.PromptHash, run.SessionID, run.RunID)
	for _, r := range run.Roots {
		ph := r.PageHandle
		if ph != "" {
			// Handles name the ref the run was started under; re-root
			// them on this connection's ref.
			if _, num, ok := strings.Cut(ph, "_pg"); ok {
				ph = sc.Ref + "_pg" + num
			}
		}
		out.Roots = append(out.Roots, results.Root{Label: r.Label, Table: r.Table, PageHandle: ph, ArtifactURI: out.ShortURI})
	}
	return out, nil
}

// ProgressText renders an operation as progress lines: + accepted,
// ~ running, ! done, x cancelled, ? failed.
func ProgressText(op session.Operation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`%s` %s · %s\n", op.Handle, op.State, op.Summary)
	fmt.Fprintf(&b, "+ accepted: %s\n", oneLineProgram(op.Program))
	switch op.State {
	case session.OpAccepted:
	case session.OpRunning:
		fmt.Fprintf(&b, "~ running: %d calls so far", op.Calls)
		if op.CancelRequested {
			b.WriteString(" · cancel requested, stops before the next call")
		}
		b.WriteString("\n")
	case session.OpDone:
		fmt.Fprintf(&b, "! done: %d calls\n", op.Calls)
	case session.OpCancelled:
		fmt.Fprintf(&b, "x cancelled after %d calls; writes completed before the cancel stay\n", op.Calls)
	case session.OpFailed:
		if op.Calls == 0 {
			fmt.Fprintf(&b, "? failed before any backend call: %s\n", op.Error)
		} else {
			fmt.Fprintf(&b, "? failed after %d calls: %s\n", op.Calls, op.Error)
		}
	}
	if !op.Final() {
		fmt.Fprintf(&b, "_Still working: call wait(%s) again for progress or the result, or cancel(%s) to stop it._\n", op.Handle, op.Handle)
	}
	return b.String()
}

func oneLineProgram(p string) string {
	p = strings.Join(strings.Fields(p), " ")
	if len(p) > 120 {
		p = p[:117] + "…"
	}
	return p
}

// OpMeta is _meta.plasm.operation (and the HTTP operation document).
func OpMeta(op *session.Operation) map[string]any {
	return map[string]any{
		"handle": op.Handle, "state": op.State, "calls": op.Calls,
		"wait": "wait(" + op.Handle + ")", "cancel": "cancel(" + op.Handle + ")",
		"cancel_requested": op.CancelRequested,
	}
}

// RunProbe is what a run reports through the sender: before each backend
// call it may refuse (an operation's cancel), after each it counts (and
// notifies an MCP client). Either may be nil.
type RunProbe struct {
	Before func(ctx context.Context) error
	After  func(ctx context.Context)
}

type probeKey struct{}

func WithProbe(ctx context.Context, p *RunProbe) context.Context {
	return context.WithValue(ctx, probeKey{}, p)
}

// ProbeSender wraps the executor's sender: runs without a probe pass
// straight through.
type ProbeSender struct{ Next executor.Sender }

func (p *ProbeSender) Do(ctx context.Context, req *abi.CompiledRequest, allowed []egress.Origin, secrets egress.Secrets) (*egress.Response, error) {
	pr, _ := ctx.Value(probeKey{}).(*RunProbe)
	if pr == nil {
		return p.Next.Do(ctx, req, allowed, secrets)
	}
	if pr.Before != nil {
		if err := pr.Before(ctx); err != nil {
			return nil, err
		}
	}
	resp, err := p.Next.Do(ctx, req, allowed, secrets)
	if pr.After != nil && (resp != nil || !refusedBeforeSending(err)) {
		pr.After(ctx)
	}
	return resp, err
}

// refusedBeforeSending reports whether a sender's error means no request
// left for the backend: a secret that is not configured, or an egress
// refusal of the URL itself. An operation counts backend calls, and one
// that failed for a missing secret made none. A refusal net/http reports
// (*url.Error: a redirect, or a dial to a refused address) came after the
// request was sent or during its dial, so it is counted.
func refusedBeforeSending(err error) bool {
	if err == nil {
		return false
	}
	var ue *url.Error
	return errors.Is(err, egress.ErrSecret) || (errors.Is(err, egress.ErrDenied) && !errors.As(err, &ue))
}

// Operation returns the operation a handle sN_oM names in a run scope,
// without waiting (HTTP GET …/operations/{handle}).
func (s *Service) Operation(ctx context.Context, t *tenant.Tenant, sc RunScope, handle string) (session.Operation, error) {
	n, err := s.opHandle(ctx, t, sc, handle)
	if err != nil {
		return session.Operation{}, err
	}
	return s.getOp(ctx, t, sc, n)
}
