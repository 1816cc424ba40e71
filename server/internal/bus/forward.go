package bus

import (
	"context"
	"slices"
	"time"
	"weak"
)

// DefaultWindow is how long the forwarder keeps collecting after the first
// event of a burst, so a loop of writes becomes one message with a count.
const DefaultWindow = 50 * time.Millisecond

// maxIDs caps the ids a coalesced message lists; the count says how many
// events it stands for.
const maxIDs = 64

// Message is one notifications/message: Level, Logger and Data.
type Message struct {
	Level  string         `json:"level"`
	Logger string         `json:"logger"`
	Data   map[string]any `json:"data"`
}

// MessageFor maps an event to its notification: data is
// {"event": Data(kind), "details": {...}}.
func MessageFor(ev *Event) Message {
	return Message{Level: Level, Logger: Logger, Data: map[string]any{"event": Data(ev.Kind), "details": ev.Details()}}
}

// Sender delivers one message to a target (an MCP session). It reports
// whether the target is gone for good (the forwarder then stops).
type Sender[T any] func(ctx context.Context, target *T, m Message) (gone bool)

// ForwardOptions tune Forward.
type ForwardOptions struct {
	// Window is the coalescing window (0 = coalesce only what is already
	// queued; negative = DefaultWindow).
	Window time.Duration
	// Exited, if set, is called when the forwarder returns.
	Exited func()
}

// Forward relays a subscription's events to target until ctx ends, the
// subscription closes, or target is gone. It holds target only weakly: a
// session nobody else references is collected, and the forwarder notices
// on its next event, closes the subscription and exits (seed 004's
// session_task_exits_when_session_dropped). Run it in its own goroutine;
// send must not capture target.
func Forward[T any](ctx context.Context, sub *Subscription, target *T, send Sender[T], opts ForwardOptions) {
	wp := weak.Make(target)
	target = nil
	window := opts.Window
	if window < 0 {
		window = DefaultWindow
	}
	defer func() {
		sub.Close()
		if opts.Exited != nil {
			opts.Exited()
		}
	}()
	for {
		var first Event
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			return
		case first = <-sub.C():
		}
		batch := collect(ctx, sub, first, window)
		msgs := Coalesce(batch)
		if n := sub.TakeDropped(); n > 0 {
			msgs = append(msgs, Event{Kind: KindLagged, Reason: "subscriber lagged; refetch what you rely on", Tenant: sub.Tenant(), TsMs: first.TsMs, Count: n})
		}
		if !deliver(ctx, wp, send, msgs) {
			return
		}
	}
}

// deliver sends msgs to the target if it is still alive; false means the
// forwarder should stop. The strong pointer lives only for this call.
func deliver[T any](ctx context.Context, wp weak.Pointer[T], send Sender[T], msgs []Event) bool {
	t := wp.Value()
	if t == nil {
		return false
	}
	for i := range msgs {
		if send(ctx, t, MessageFor(&msgs[i])) {
			return false
		}
	}
	return true
}

// collect gathers the events of one burst: everything already queued,
// then whatever arrives within window of the first.
func collect(ctx context.Context, sub *Subscription, first Event, window time.Duration) []Event {
	batch := []Event{first}
	var timer <-chan time.Time
	if window > 0 {
		t := time.NewTimer(window)
		defer t.Stop()
		timer = t.C
	}
	for len(batch) < BufferSize {
		select {
		case ev := <-sub.C():
			batch = append(batch, ev)
			continue
		default:
		}
		if timer == nil {
			break
		}
		select {
		case ev := <-sub.C():
			batch = append(batch, ev)
			continue
		case <-timer:
		case <-ctx.Done():
		case <-sub.Done():
		}
		break
	}
	return batch
}

// Coalesce merges events of the same kind, catalog and entity (and
// session, for session events) into one,
// in order of first appearance: Count adds up, ids are merged (capped),
// the latest time, reason and run id win.
func Coalesce(evs []Event) []Event {
	type key struct {
		kind                   Kind
		entry, entity, session string
	}
	idx := map[key]int{}
	var out []Event
	for _, ev := range evs {
		if ev.Count < 1 {
			ev.Count = 1
		}
		k := key{ev.Kind, ev.EntryID, ev.Entity, ev.SessionID}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			ev.IDs = slices.Clone(ev.IDs)
			out = append(out, ev)
			continue
		}
		m := &out[i]
		m.Count += ev.Count
		for _, id := range ev.IDs {
			if len(m.IDs) < maxIDs && !slices.Contains(m.IDs, id) {
				m.IDs = append(m.IDs, id)
			}
		}
		if ev.TsMs >= m.TsMs {
			m.TsMs, m.Reason = ev.TsMs, ev.Reason
			if ev.RunID != "" {
				m.RunID = ev.RunID
			}
			if ev.Capability != "" {
				m.Capability = ev.Capability
			}
			if ev.Digest != "" {
				m.Digest = ev.Digest
			}
			if ev.SessionID != "" {
				m.PromptHash, m.SessionID = ev.PromptHash, ev.SessionID
			}
		}
	}
	return out
}
