package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// Limits bound a tenant's instances and each call into them. Zero fields
// take the DefaultLimits value.
type Limits struct {
	// MemoryBytes is each instance's linear-memory ceiling; growing past it
	// fails the call with ErrMemoryLimit. It is also capped by the host's
	// Config.MaxMemoryBytes.
	MemoryBytes uint64
	// CallTimeout bounds every guest call; a caller's earlier context
	// deadline wins. Instantiation gets at least the default call timeout
	// (see startTimeout).
	CallTimeout time.Duration
	// MaxInstances is how many instances the tenant may have at once,
	// i.e. how many of its calls run concurrently.
	MaxInstances int
	// MaxQueue is how many calls may wait for an instance once all
	// MaxInstances are busy; one more fails at once with ErrBusy.
	MaxQueue int
	// QueueTimeout bounds a call's wait for an instance (its tenant's or a
	// slot under the host's global cap); a caller's earlier context
	// deadline wins. Past it the call fails with ErrBusy.
	QueueTimeout time.Duration
	// MaxInput and MaxOutput cap request and response sizes in bytes.
	MaxInput, MaxOutput int
}

// LimitsView is the JSON form of effective Limits, for showing a tenant
// its own limits (e.g. in GET /v1/registry). It holds no secrets.
type LimitsView struct {
	MemoryBytes    uint64 `json:"memory_bytes"`
	CallTimeoutMS  int64  `json:"call_timeout_ms"`
	MaxInstances   int    `json:"max_instances"`
	MaxQueue       int    `json:"max_queue"`
	QueueTimeoutMS int64  `json:"queue_timeout_ms"`
	MaxInputBytes  int    `json:"max_input_bytes"`
	MaxOutputBytes int    `json:"max_output_bytes"`
}

// View returns l as a LimitsView. Pass effective limits (Tenant.Limits or
// Host.EffectiveLimits), not a partially filled configuration.
func (l Limits) View() LimitsView {
	return LimitsView{
		MemoryBytes:    l.MemoryBytes,
		CallTimeoutMS:  l.CallTimeout.Milliseconds(),
		MaxInstances:   l.MaxInstances,
		MaxQueue:       l.MaxQueue,
		QueueTimeoutMS: l.QueueTimeout.Milliseconds(),
		MaxInputBytes:  l.MaxInput,
		MaxOutputBytes: l.MaxOutput,
	}
}

// defaultCallTimeout and defaultQueueTimeout are variables only so that
// this package's tests can give calls that are merely slow under -race on
// a loaded machine deadlines they cannot reach; tests about deadlines set
// their own.
var (
	defaultCallTimeout  = 2 * time.Second
	defaultQueueTimeout = 5 * time.Second
)

// DefaultLimits returns the limits used for zero Limits fields.
func DefaultLimits() Limits {
	return Limits{
		MemoryBytes:  64 << 20,
		CallTimeout:  defaultCallTimeout,
		MaxInstances: 4,
		MaxQueue:     64,
		QueueTimeout: defaultQueueTimeout,
		MaxInput:     8 << 20,
		MaxOutput:    16 << 20,
	}
}

// startTimeout bounds instantiating a module (its _initialize, which runs
// the Go runtime's start-up in Go-built guests, and the ABI version check).
// Start-up is the host's cost rather than the call's, and under load it can
// take longer than a deliberately short call timeout: were the call timeout
// used, a tenant with tight limits would see its next call fail after every
// discarded instance. It stays bounded: a module that loops in _initialize
// fails with ErrDeadline after max(CallTimeout, the default call timeout),
// and a caller's earlier deadline still wins.
func (l Limits) startTimeout() time.Duration {
	return max(l.CallTimeout, defaultCallTimeout)
}

// clamp fills defaults and applies the host ceiling. Memory is rounded down
// to whole pages because that is the granularity guests grow by.
func (l Limits) clamp(ceiling uint64) Limits {
	d := DefaultLimits()
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	l.MemoryBytes = min(l.MemoryBytes, ceiling) / wasmPage * wasmPage
	if l.CallTimeout <= 0 {
		l.CallTimeout = d.CallTimeout
	}
	if l.MaxInstances <= 0 {
		l.MaxInstances = d.MaxInstances
	}
	if l.MaxQueue <= 0 {
		l.MaxQueue = d.MaxQueue
	}
	if l.QueueTimeout <= 0 {
		l.QueueTimeout = d.QueueTimeout
	}
	if l.MaxInput <= 0 {
		l.MaxInput = d.MaxInput
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = d.MaxOutput
	}
	// A wasm32 guest cannot address more than 4 GiB.
	l.MaxInput = min(l.MaxInput, math.MaxUint32)
	l.MaxOutput = min(l.MaxOutput, math.MaxUint32)
	return l
}

// TenantSpec configures a tenant's sandbox.
type TenantSpec struct {
	Module *Module
	// Loads are applied to every instance before its next call (see Load).
	Loads  []Load
	Limits Limits
	// Owner is whose share of the host's CPU slots the calls count
	// against (e.g. a vendor module's pool is its tenant's); "" means the
	// tenant id.
	Owner string
}

// Tenant is one tenant's isolation domain: a pool of instances of its
// module that only this tenant's calls use. Safe for concurrent use.
type Tenant struct {
	host  *Host
	id    string
	owner string // CPU share (TenantSpec.Owner), guarded by mu

	mu     sync.Mutex
	closed bool
	module *Module
	limits Limits
	// gen changes with the module or limits; instances of an older gen are
	// retired instead of reused.
	gen uint64
	// loads and loadIndex are replaced, never mutated, so a snapshot can
	// be read without the lock. loadGen changes with them.
	loads     []Load
	loadIndex map[string]string
	loadGen   uint64

	idle    []*instance
	live    int
	waiters int
	freed   chan struct{} // closed (and replaced) when an instance or slot frees up

	created, fromSpare, discarded, evicted uint64
	// applied counts loads applied to instances by key (guarded by mu):
	// the proof that a load (catalog) costs only the calls that need it.
	applied map[string]uint64
	// avgCall is a moving average of call durations, for retry hints.
	avgCall time.Duration
	// quar quarantines the pool when its calls keep running to their
	// deadline (quarantine.go).
	quar quarantine
}

// snapshot is the tenant configuration one call runs with.
type snapshot struct {
	module  *Module
	limits  Limits
	gen     uint64
	loads   []Load
	loadGen uint64
}

// Tenant returns the sandbox of tenant id, creating it on first use and
// applying spec each time: new loads are applied lazily by each instance
// before its next call; a different module or different limits retire the
// existing instances (idle ones now, busy ones when their call ends).
func (h *Host) Tenant(id string, spec TenantSpec) *Tenant {
	h.mu.Lock()
	t := h.tenants[id]
	if t == nil {
		t = &Tenant{host: h, id: id, freed: make(chan struct{}), loadIndex: map[string]string{}}
		if h.closed {
			t.closed = true
		} else {
			h.tenants[id] = t
		}
	}
	h.mu.Unlock()
	t.configure(spec)
	return t
}

// ID returns the tenant's id.
func (t *Tenant) ID() string { return t.id }

func (t *Tenant) configure(spec TenantSpec) {
	loads := dedupeLoads(spec.Loads)
	lim := spec.Limits.clamp(t.host.ceiling)
	t.mu.Lock()
	t.owner = cmp.Or(spec.Owner, t.id)
	var retired []*instance
	if spec.Module != t.module || lim != t.limits {
		t.module, t.limits = spec.Module, lim
		t.gen++
		retired = t.retireIdleLocked()
	}
	t.setLoadsLocked(loads)
	t.signalLocked()
	t.mu.Unlock()
	t.discard(retired, DiscardReconfigure)
}

// SetLoads replaces what every instance must hold. Each instance applies
// new or changed loads (by digest) before its next call; an instance
// holding a load that was removed is retired, so removed state is never
// visible again. Loads come from the host, so MaxInput does not apply to
// them; MaxOutput and CallTimeout do.
func (t *Tenant) SetLoads(loads []Load) {
	loads = dedupeLoads(loads)
	t.mu.Lock()
	t.setLoadsLocked(loads)
	t.mu.Unlock()
}

func (t *Tenant) setLoadsLocked(loads []Load) {
	index := make(map[string]string, len(loads))
	for _, l := range loads {
		index[l.Key] = l.Digest
	}
	if len(index) == len(t.loadIndex) {
		same := true
		for id, d := range index {
			if od, ok := t.loadIndex[id]; !ok || od != d {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	t.loads, t.loadIndex = loads, index
	t.loadGen++
}

// retireIdleLocked removes every idle instance from the pool; the caller
// closes them with discard once t.mu is released.
func (t *Tenant) retireIdleLocked() []*instance {
	retired := t.idle
	t.idle = nil
	t.live -= len(retired)
	t.discarded += uint64(len(retired))
	t.host.discarded.Add(uint64(len(retired)))
	return retired
}

// discard closes instances already removed from the tenant's counts and
// returns their global slots.
func (t *Tenant) discard(ins []*instance, reason string) {
	if len(ins) == 0 {
		return
	}
	closeAll(ins)
	for range ins {
		t.host.obs.InstanceDiscarded(t.id, reason)
	}
	t.host.instancesGone(len(ins))
}

func (t *Tenant) signalLocked() {
	if t.waiters > 0 {
		close(t.freed)
		t.freed = make(chan struct{})
	}
}

func closeAll(ins []*instance) {
	for _, in := range ins {
		in.close()
	}
}

// Close retires the tenant: idle instances close now, busy ones when their
// call returns, and later calls fail with ErrClosed. A later Host.Tenant
// with the same id starts a fresh tenant.
func (t *Tenant) Close() {
	t.host.mu.Lock()
	if t.host.tenants[t.id] == t {
		delete(t.host.tenants, t.id)
	}
	t.host.mu.Unlock()
	t.close()
}

func (t *Tenant) close() {
	t.mu.Lock()
	t.closed = true
	retired := t.retireIdleLocked()
	if t.waiters > 0 {
		close(t.freed)
		t.freed = make(chan struct{})
	}
	t.mu.Unlock()
	t.discard(retired, DiscardClosed)
}

// Stats returns a snapshot of the tenant's pool.
func (t *Tenant) Stats() TenantStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TenantStats{Live: t.live, Idle: len(t.idle), Waiting: t.waiters, Created: t.created,
		FromSpare: t.fromSpare, Discarded: t.discarded, Evicted: t.evicted}
}

// Limits returns the tenant's effective limits.
func (t *Tenant) Limits() Limits {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits
}

func (t *Tenant) callError(export string, kind error, detail string) *CallError {
	return &CallError{Tenant: t.id, Export: export, Err: kind, Detail: detail}
}

// acquire returns an instance for one call: an idle one when possible, a
// spare or new one when the tenant is below MaxInstances (and the host has
// a slot under its global cap), and otherwise a place in the tenant's wait
// queue, bounded in length by MaxQueue and in time by QueueTimeout.
func (t *Tenant) acquire(ctx context.Context, export string) (*instance, snapshot, error) {
	// A plain struct rather than closures keeps the warm path (no
	// waiting) free of heap allocations.
	var w waitState
	defer w.stop()
	waited := func(got bool) {
		if !w.start.IsZero() {
			t.host.obs.Waited(t.id, time.Since(w.start), got)
		}
	}
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, snapshot{}, t.callError(export, ErrClosed, "")
		}
		s := snapshot{module: t.module, limits: t.limits, gen: t.gen, loads: t.loads, loadGen: t.loadGen}
		if s.module == nil {
			t.mu.Unlock()
			return nil, s, t.callError(export, ErrABI, "tenant has no module")
		}
		var stale, removed []*instance
		for n := len(t.idle); n > 0; n = len(t.idle) {
			in := t.idle[n-1]
			t.idle[n-1] = nil
			t.idle = t.idle[:n-1]
			fresh := in.gen == t.gen
			if fresh && !in.holdsRemoved(t.loadIndex, t.loadGen) {
				t.mu.Unlock()
				t.discard(stale, DiscardReconfigure)
				t.discard(removed, DiscardCatalog)
				waited(true)
				return in, s, nil
			}
			if fresh {
				removed = append(removed, in)
			} else {
				stale = append(stale, in)
			}
			t.live--
			t.discarded++
			t.host.discarded.Add(1)
		}
		if t.live < t.limits.MaxInstances {
			t.live++
			t.mu.Unlock()
			t.discard(stale, DiscardReconfigure)
			t.discard(removed, DiscardCatalog)
			in, err := t.newInstance(ctx, export, s, &w)
			if in == nil && err == nil {
				continue // an idle instance of our own turned up
			}
			waited(err == nil)
			return in, s, err
		}
		if t.waiters >= t.limits.MaxQueue {
			hint := t.retryHintLocked()
			t.mu.Unlock()
			t.discard(stale, DiscardReconfigure)
			t.discard(removed, DiscardCatalog)
			t.host.obs.Busy(t.id, BusyQueueFull)
			waited(false)
			return nil, s, t.busyError(export, hint,
				fmt.Sprintf("all %d instances busy and %d calls already queued", s.limits.MaxInstances, s.limits.MaxQueue))
		}
		wait := t.freed
		t.waiters++
		t.mu.Unlock()
		t.discard(stale, DiscardReconfigure)
		t.discard(removed, DiscardCatalog)
		w.arm(s.limits.QueueTimeout)

		var reason, detail string
		select {
		case <-wait:
		case <-w.timeout:
			reason, detail = BusyQueueTimeout, fmt.Sprintf("all %d instances stayed busy for %v", s.limits.MaxInstances, s.limits.QueueTimeout)
		case <-ctx.Done():
			reason, detail = BusyCanceled, fmt.Sprintf("all %d instances stayed busy: %v", s.limits.MaxInstances, ctx.Err())
		}
		t.mu.Lock()
		t.waiters--
		hint := t.retryHintLocked()
		t.mu.Unlock()
		if reason != "" {
			t.host.obs.Busy(t.id, reason)
			waited(false)
			return nil, s, t.busyError(export, hint, detail)
		}
	}
}

// newInstance fills the tenant slot acquire reserved (t.live already
// counts it): a global slot first, then a spare or a fresh instance. It
// returns neither instance nor error when, while it waited for a global
// slot, one of the tenant's own instances became idle.
func (t *Tenant) newInstance(ctx context.Context, export string, s snapshot, w *waitState) (*instance, error) {
	giveBack := func() {
		t.mu.Lock()
		t.live--
		t.signalLocked()
		t.mu.Unlock()
	}
	h := t.host
	if h.maxLive > 0 {
		w.arm(s.limits.QueueTimeout)
	}
	if cw := h.reserve(ctx, t, w.timeout); cw != nil {
		giveBack()
		if cw.retry {
			return nil, nil
		}
		if errors.Is(cw.err, ErrClosed) {
			return nil, t.callError(export, ErrClosed, "")
		}
		h.obs.Busy(t.id, cw.reason)
		t.mu.Lock()
		hint := t.retryHintLocked()
		t.mu.Unlock()
		return nil, t.busyError(export, hint, fmt.Sprintf("the host's %d instances are all busy: %v", h.maxLive, cw.err))
	}
	spare := true
	in := s.module.takeSpare(s.limits.MemoryBytes)
	if in == nil {
		spare = false
		var f *failure
		if in, f = h.instantiate(ctx, s.module, s.limits); f != nil {
			giveBack()
			h.instancesGone(1)
			return nil, t.failed(export, f)
		}
	}
	in.gen = s.gen
	t.mu.Lock()
	t.created++
	if spare {
		t.fromSpare++
	}
	t.mu.Unlock()
	h.obs.InstanceCreated(t.id, spare)
	return in, nil
}

// waitState is one call's wait for an instance: when it began and the
// queue timeout, armed on the first wait and shared by the tenant queue and
// the global cap so their waits add up to at most QueueTimeout.
type waitState struct {
	start   time.Time
	timer   *time.Timer
	timeout <-chan time.Time
}

func (w *waitState) arm(d time.Duration) {
	if w.timer == nil {
		w.start = time.Now()
		w.timer = time.NewTimer(d)
		w.timeout = w.timer.C
	}
}

func (w *waitState) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// retryHintLocked estimates when an instance is likely to free up: the
// queue ahead of a new caller, served MaxInstances at a time, at the
// tenant's recent average call duration. It is clamped to a range a client
// can act on.
func (t *Tenant) retryHintLocked() time.Duration {
	avg := t.avgCall
	if avg <= 0 {
		avg = 100 * time.Millisecond
	}
	rounds := time.Duration(t.waiters/max(t.limits.MaxInstances, 1) + 1)
	return min(max(avg*rounds, 100*time.Millisecond), max(t.limits.CallTimeout, time.Second))
}

func (t *Tenant) busyError(export string, hint time.Duration, detail string) *CallError {
	e := t.callError(export, ErrBusy, detail)
	e.RetryAfter = hint
	return e
}

// holdsRemoved reports whether the instance holds a load that is no
// longer the tenant's.
func (in *instance) holdsRemoved(index map[string]string, loadGen uint64) bool {
	if in.loadGen == loadGen {
		return false
	}
	for id := range in.loaded {
		if _, ok := index[id]; !ok {
			return true
		}
	}
	return false
}

func (t *Tenant) release(in *instance, keep bool, took time.Duration) {
	in.lastUsed = t.host.tick.Add(1)
	reason := DiscardFailure
	t.mu.Lock()
	// An exponential moving average (1/8 weight) follows load changes
	// within a few calls without jumping on a single outlier.
	if t.avgCall == 0 {
		t.avgCall = took
	} else {
		t.avgCall += (took - t.avgCall) / 8
	}
	if keep && !t.closed && in.gen == t.gen {
		t.idle = append(t.idle, in)
		in = nil
	} else {
		switch {
		case t.closed:
			reason = DiscardClosed
		case keep:
			reason = DiscardReconfigure
		}
		t.live--
		t.discarded++
		t.host.discarded.Add(1)
	}
	t.signalLocked()
	t.mu.Unlock()
	if in != nil {
		t.discard([]*instance{in}, reason)
	} else {
		t.host.idleAvailable()
	}
}

// failed turns a failure into a *CallError; a failure caused by the host
// closing underneath the call is reported as ErrClosed.
func (t *Tenant) failed(export string, f *failure) *CallError {
	if f.kind != ErrABI && t.host.isClosed() {
		return t.callError(export, ErrClosed, f.detail)
	}
	return t.callError(export, f.kind, f.detail)
}

// syncLoads applies to in the snapshot's loads the call needs (nil: all
// of them) that it does not hold at their current digest. Applying only
// what a call names keeps a large catalog's cost on the calls that use
// it: an instance serving other catalogs never installs it.
func (t *Tenant) syncLoads(ctx context.Context, in *instance, s snapshot, needs []string) (keep bool, err error) {
	if in.loadGen == s.loadGen {
		return true, nil
	}
	for _, l := range s.loads {
		if needs != nil && !slices.Contains(needs, l.Key) {
			continue
		}
		if l.Err != nil {
			return true, &abi.Error{Code: abi.CodeCatalog, Message: l.Err.Error()}
		}
		if in.loaded[l.Key] == l.Digest {
			continue
		}
		status, out, f := in.invoke(ctx, l.Export, l.Payload, nil, s.limits)
		if f != nil {
			return !f.discard, t.failed(l.Export, f)
		}
		switch status {
		case abi.StatusOK:
			in.loaded[l.Key] = l.Digest
			t.countApplied(l.Key)
		case abi.StatusError:
			ae, err := decodeGuestError(out)
			if err != nil {
				return false, t.callError(l.Export, ErrABI, err.Error())
			}
			ae.Message = fmt.Sprintf("load %s: %s", l.Name, ae.Message)
			return true, ae
		default:
			return false, t.callError(l.Export, ErrABI, fmt.Sprintf("unknown status byte %#x", status))
		}
	}
	if needs == nil {
		in.loadGen = s.loadGen // every load of this generation is applied
	}
	return true, nil
}

func (t *Tenant) countApplied(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.applied == nil {
		t.applied = map[string]uint64{}
	}
	t.applied[key]++
}

// AppliedLoads returns how many times each load (by key: a catalog's entry
// id) was applied to one of the tenant's instances.
func (t *Tenant) AppliedLoads() map[string]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.applied)
}

func decodeGuestError(b []byte) (*abi.Error, error) {
	var ae abi.Error
	if err := json.Unmarshal(b, &ae); err != nil {
		return nil, fmt.Errorf("malformed guest error: %w", err)
	}
	if ae.Code == "" {
		return nil, errors.New("guest error without a code")
	}
	return &ae, nil
}

// do runs one op: it checks the input size, takes an instance and a host
// CPU slot, brings the loads the op needs (nil: all) up to date, writes
// head+body as the request and hands the response (a view into guest
// memory, valid only during use) to use.
func (t *Tenant) do(ctx context.Context, export string, needs []string, head, body []byte, use func([]byte) error) (err error) {
	start := time.Now()
	defer func() { t.host.obs.CallDone(t.id, export, Result(err), time.Since(start)) }()
	if err := ctx.Err(); err != nil {
		kind := error(context.Canceled)
		if errors.Is(err, context.DeadlineExceeded) {
			kind = ErrDeadline
		}
		return t.callError(export, kind, "context ended before the call started")
	}
	t.mu.Lock()
	maxInput, cpuOwner := t.limits.MaxInput, t.owner
	t.mu.Unlock()
	if size := len(head) + len(body); size > maxInput {
		return t.callError(export, ErrInputTooLarge, fmt.Sprintf("%d bytes, limit %d", size, maxInput))
	}

	in, s, err := t.acquire(ctx, export)
	if err != nil {
		return err
	}
	keep := true
	began := time.Now()
	defer func() { t.release(in, keep, time.Since(began)) }()

	if t.host.cpu != nil {
		if err := t.host.cpu.acquire(ctx, cpuOwner, s.limits.QueueTimeout); err != nil {
			return t.cpuWaitError(export, err)
		}
		slot := &cpuSlot{g: t.host.cpu, owner: cpuOwner, held: true}
		defer slot.done()
		ctx = context.WithValue(ctx, cpuSlotKey{}, slot)
	}
	if keep, err = t.syncLoads(ctx, in, s, needs); err != nil {
		return err
	}
	var (
		status byte
		out    []byte
	)
	f := t.runGuest(ctx, s.limits.CallTimeout, func(ctx context.Context) (f *failure) {
		status, out, f = in.invoke(ctx, export, head, body, s.limits)
		return f
	})
	if f != nil {
		keep = !f.discard
		return t.failed(export, f)
	}
	switch status {
	case abi.StatusOK:
		if err := use(out); err != nil {
			keep = false
			return t.callError(export, ErrABI, "decode response: "+err.Error())
		}
		return nil
	case abi.StatusError:
		ae, err := decodeGuestError(out)
		if err != nil {
			keep = false
			return t.callError(export, ErrABI, err.Error())
		}
		return ae
	default:
		keep = false
		return t.callError(export, ErrABI, fmt.Sprintf("unknown status byte %#x", status))
	}
}

// cpuWaitError reports a call that got no CPU slot: busy (retry later)
// when the wait timed out, else the context's end.
func (t *Tenant) cpuWaitError(export string, err error) error {
	switch {
	case errors.Is(err, errCPUWait):
		t.host.obs.Busy(t.id, BusyCPU)
		t.mu.Lock()
		hint := t.retryHintLocked()
		t.mu.Unlock()
		return t.busyError(export, hint, "every CPU slot of the host is busy with other calls")
	case errors.Is(err, context.DeadlineExceeded):
		return t.callError(export, ErrDeadline, "context ended while waiting for a CPU slot")
	default:
		return t.callError(export, context.Canceled, "context ended while waiting for a CPU slot")
	}
}

// Call runs export with input and returns the op's response (the envelope's
// status byte removed). A guest-reported error is returned as *abi.Error
// and leaves the instance in the pool; every other failure is a *CallError
// wrapping one of the sentinel errors.
func (t *Tenant) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	var out []byte
	err := t.do(ctx, export, nil, input, nil, func(b []byte) error {
		out = append(make([]byte, 0, len(b)), b...)
		return nil
	})
	return out, err
}

// Ping echoes msg through the guest; it measures the cost of a round trip.
func (t *Tenant) Ping(ctx context.Context, msg []byte) ([]byte, error) {
	return t.Call(ctx, abi.ExportPing, msg)
}
