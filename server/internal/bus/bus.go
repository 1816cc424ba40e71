// Package bus is plasmd's per-tenant invalidation bus (seed 004, adapted):
// writers publish an Event after a change has committed (rows a mutation
// changed, a catalog added / changed / removed, a session expired or
// closed, a tenant's configuration changed, or a backend's webhook through
// POST /v1/invalidate), and every MCP session of that tenant receives it
// as a notifications/message.
//
// Isolation is by construction: subscriptions are kept per tenant and an
// event is only ever offered to the subscriptions of its own tenant.
//
// Publish never blocks a writer: each subscription has a bounded buffer
// (BufferSize); when it is full the event is dropped for that subscriber,
// counted, and the lag is logged once per burst; the subscriber later gets
// one "lagged" message telling it to refetch. A Relay (e.g. Redis pub/sub)
// carries events to the other replicas.
package bus

import (
	"log/slog"
	"sync"
	"time"
)

// Wire literals of the notifications/message the forwarder emits. Clients
// switch on Data* (the "event" field of data); they are documented in the
// README and never change meaning.
const (
	// Method is the JSON-RPC method of every notification.
	Method = "notifications/message"
	// Level is the MCP log level: every event is a committed change, so
	// info (a client that sets its level to warning silences them).
	Level = "info"
	// Logger names plasmd as the emitter.
	Logger = "plasmd"

	DataRows    = "rows_updated"
	DataCatalog = "catalog_updated"
	DataSession = "session_updated"
	DataTenant  = "tenant_updated"
	// DataFallback is sent for any other kind (including a subscriber's
	// lag), so a new kind is never dropped silently.
	DataFallback = "plasmd_updated"

	// BufferSize bounds each subscription's queue.
	BufferSize = 256
)

// Kind says what changed.
type Kind string

// Event kinds.
const (
	KindRows    Kind = "rows"
	KindCatalog Kind = "catalog"
	KindSession Kind = "session"
	KindTenant  Kind = "tenant"
	// KindLagged is synthesised for a subscriber that dropped events.
	KindLagged Kind = "lagged"
)

// Data maps a kind to the string clients switch on.
func Data(k Kind) string {
	switch k {
	case KindRows:
		return DataRows
	case KindCatalog:
		return DataCatalog
	case KindSession:
		return DataSession
	case KindTenant:
		return DataTenant
	}
	return DataFallback
}

// Event is one committed change. Fields other than Kind, Reason, Tenant
// and TsMs are set when the kind has them.
type Event struct {
	Kind   Kind   `json:"kind"`
	Reason string `json:"reason"`
	Tenant string `json:"tenant_id"`
	TsMs   int64  `json:"ts_ms"`

	EntryID    string   `json:"entry_id,omitempty"`
	Entity     string   `json:"entity,omitempty"`
	IDs        []string `json:"ids,omitempty"`
	Capability string   `json:"capability,omitempty"`
	RunID      string   `json:"run_id,omitempty"`
	Digest     string   `json:"digest,omitempty"`
	PromptHash string   `json:"prompt_hash,omitempty"`
	SessionID  string   `json:"session_id,omitempty"`
	// Count is how many events a coalesced (or lagged) message stands for.
	Count int `json:"count,omitempty"`

	// Origin names the replica that published the event, so a relay does
	// not deliver a replica's own events twice. Not sent to clients.
	Origin string `json:"origin,omitempty"`
}

// Details is the structured half of a notification: the reason, tenant,
// time and the kind's fields.
func (e *Event) Details() map[string]any {
	d := map[string]any{"kind": string(e.Kind), "reason": e.Reason, "tenant_id": e.Tenant, "ts_ms": e.TsMs}
	put := func(k, v string) {
		if v != "" {
			d[k] = v
		}
	}
	put("entry_id", e.EntryID)
	put("entity", e.Entity)
	put("capability", e.Capability)
	put("run_id", e.RunID)
	put("digest", e.Digest)
	put("prompt_hash", e.PromptHash)
	put("session_id", e.SessionID)
	if len(e.IDs) > 0 {
		d["ids"] = e.IDs
	}
	if e.Count > 1 {
		d["count"] = e.Count
	}
	return d
}

// Relay carries events to other replicas. Publish must not block.
type Relay interface {
	Publish(Event)
}

// Bus is the set of per-tenant subscriptions of one process.
type Bus struct {
	log *slog.Logger
	now func() time.Time

	mu     sync.RWMutex
	subs   map[string]map[*Subscription]struct{}
	relay  Relay
	origin string
}

// New returns a bus with no relay.
func New(log *slog.Logger) *Bus {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bus{log: log, now: time.Now, subs: map[string]map[*Subscription]struct{}{}}
}

// SetRelay makes Publish also hand events to r, stamped with origin;
// Deliver then ignores events carrying this origin.
func (b *Bus) SetRelay(r Relay, origin string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.relay, b.origin = r, origin
}

// Publish stamps ev (time, origin) and offers it to the tenant's local
// subscriptions and the relay. It never blocks. Events without a tenant
// are dropped: they could only be delivered to the wrong one.
func (b *Bus) Publish(ev Event) {
	if ev.Tenant == "" {
		b.log.Warn("invalidation event without tenant dropped", "kind", ev.Kind, "reason", ev.Reason)
		return
	}
	if ev.TsMs == 0 {
		ev.TsMs = b.now().UnixMilli()
	}
	b.mu.RLock()
	ev.Origin = b.origin
	relay := b.relay
	b.deliverLocked(ev)
	b.mu.RUnlock()
	if relay != nil {
		relay.Publish(ev)
	}
}

// Deliver offers an event received from a relay to local subscriptions,
// unless this bus published it itself.
func (b *Bus) Deliver(ev Event) {
	if ev.Tenant == "" {
		return
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.origin != "" && ev.Origin == b.origin {
		return
	}
	b.deliverLocked(ev)
}

func (b *Bus) deliverLocked(ev Event) {
	for s := range b.subs[ev.Tenant] {
		s.offer(ev)
	}
}

// Subscribers reports how many subscriptions a tenant has.
func (b *Bus) Subscribers(tenant string) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.subs[tenant])
}

// Subscribe opens a subscription to one tenant's events.
func (b *Bus) Subscribe(tenant string) *Subscription {
	s := &Subscription{bus: b, tenant: tenant, ch: make(chan Event, BufferSize), done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[tenant] == nil {
		b.subs[tenant] = map[*Subscription]struct{}{}
	}
	b.subs[tenant][s] = struct{}{}
	return s
}

// Subscription is one subscriber's bounded queue of a tenant's events.
type Subscription struct {
	bus    *Bus
	tenant string
	ch     chan Event
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	dropped int
	lagging bool
}

// Tenant is the tenant subscribed to.
func (s *Subscription) Tenant() string { return s.tenant }

// C yields the events. It is never closed; wait on Done as well.
func (s *Subscription) C() <-chan Event { return s.ch }

// Done is closed by Close.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// offer queues ev without blocking; a full queue drops it and logs the
// first drop of each burst.
func (s *Subscription) offer(ev Event) {
	select {
	case s.ch <- ev:
		return
	default:
	}
	s.mu.Lock()
	s.dropped++
	first := !s.lagging
	s.lagging = true
	s.mu.Unlock()
	if first {
		s.bus.log.Warn("invalidation subscriber lagging; dropping events until it catches up", "tenant", s.tenant, "buffer", BufferSize)
	}
}

// TakeDropped returns how many events were dropped since the last call
// and ends the current lag burst (the next drop is logged again).
func (s *Subscription) TakeDropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.dropped
	s.dropped, s.lagging = 0, false
	return n
}

// Close unsubscribes; queued events are discarded. Idempotent.
func (s *Subscription) Close() {
	s.once.Do(func() {
		b := s.bus
		b.mu.Lock()
		if set := b.subs[s.tenant]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(b.subs, s.tenant)
			}
		}
		b.mu.Unlock()
		close(s.done)
	})
}
