package bus

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// never is a deadline no healthy test reaches; it only bounds a broken one.
const never = 30 * time.Second

func TestData(t *testing.T) {
	tests := []struct {
		kind Kind
		want string
	}{
		{KindRows, "rows_updated"},
		{KindCatalog, "catalog_updated"},
		{KindSession, "session_updated"},
		{KindTenant, "tenant_updated"},
		{KindLagged, "plasmd_updated"},
		{Kind("something_new"), "plasmd_updated"},
	}
	for _, tc := range tests {
		if got := Data(tc.kind); got != tc.want {
			t.Errorf("Data(%q) = %q, want %q", tc.kind, got, tc.want)
		}
	}
}

func TestMessageFor(t *testing.T) {
	ev := Event{Kind: KindRows, Reason: "plasm_run", Tenant: "acme", TsMs: 42, EntryID: "tracker", Entity: "Issue",
		IDs: []string{"iss-1"}, Capability: "close_issue", RunID: "r-1", Origin: "replica-a"}
	m := MessageFor(&ev)
	if m.Level != "info" || m.Logger != "plasmd" || m.Data["event"] != "rows_updated" {
		t.Fatalf("message = %+v", m)
	}
	d := m.Data["details"].(map[string]any)
	for k, want := range map[string]any{"reason": "plasm_run", "tenant_id": "acme", "ts_ms": int64(42), "entry_id": "tracker",
		"entity": "Issue", "capability": "close_issue", "run_id": "r-1", "kind": "rows"} {
		if d[k] != want {
			t.Errorf("details[%s] = %v, want %v", k, d[k], want)
		}
	}
	if _, ok := d["origin"]; ok {
		t.Error("origin leaked into details")
	}
	if _, ok := d["count"]; ok {
		t.Error("count shown for a single event")
	}
}

func TestTenantIsolation(t *testing.T) {
	b := New(nil)
	a1, a2, other := b.Subscribe("a"), b.Subscribe("a"), b.Subscribe("b")
	b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a"})
	b.Publish(Event{Kind: KindRows, Reason: "no tenant"})
	if len(a1.C()) != 1 || len(a2.C()) != 1 {
		t.Fatalf("tenant a subscribers got %d and %d events, want 1 each", len(a1.C()), len(a2.C()))
	}
	if len(other.C()) != 0 {
		t.Fatal("tenant b received tenant a's event")
	}
	ev := <-a1.C()
	if ev.TsMs == 0 {
		t.Error("Publish did not stamp ts_ms")
	}
	other.Close()
	other.Close() // idempotent
	if b.Subscribers("b") != 0 || b.Subscribers("a") != 2 {
		t.Fatalf("subscribers: a=%d b=%d", b.Subscribers("a"), b.Subscribers("b"))
	}
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

func TestPublishNeverBlocksAndLogsLagOncePerBurst(t *testing.T) {
	var logs logBuf
	b := New(slog.New(slog.NewTextHandler(&logs, nil)))
	sub := b.Subscribe("a")
	for range 1000 {
		b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a"})
	}
	if got := logs.count("lagging"); got != 1 {
		t.Fatalf("lag logged %d times in one burst, want 1", got)
	}
	if n := sub.TakeDropped(); n != 1000-BufferSize {
		t.Fatalf("dropped %d, want %d", n, 1000-BufferSize)
	}
	// Draining ends the burst; the next overflow is a new burst, logged again.
	for len(sub.C()) > 0 {
		<-sub.C()
	}
	for range BufferSize + 1 {
		b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a"})
	}
	if got := logs.count("lagging"); got != 2 {
		t.Fatalf("lag logged %d times over two bursts, want 2", got)
	}
}

type relayFunc func(Event)

func (f relayFunc) Publish(ev Event) { f(ev) }

func TestRelayOrigin(t *testing.T) {
	var relayed []Event
	b := New(nil)
	b.SetRelay(relayFunc(func(ev Event) { relayed = append(relayed, ev) }), "me")
	sub := b.Subscribe("a")
	b.Publish(Event{Kind: KindCatalog, Reason: "x", Tenant: "a"})
	if len(relayed) != 1 || relayed[0].Origin != "me" {
		t.Fatalf("relayed %+v", relayed)
	}
	// Our own event coming back from the relay is not delivered twice.
	b.Deliver(relayed[0])
	if len(sub.C()) != 1 {
		t.Fatalf("queue has %d events, want 1 (own relayed event delivered again?)", len(sub.C()))
	}
	b.Deliver(Event{Kind: KindCatalog, Reason: "y", Tenant: "a", Origin: "other"})
	b.Deliver(Event{Kind: KindCatalog, Reason: "y", Tenant: "b", Origin: "other"})
	if len(sub.C()) != 2 {
		t.Fatalf("queue has %d events, want 2", len(sub.C()))
	}
}

func TestCoalesce(t *testing.T) {
	evs := []Event{
		{Kind: KindRows, EntryID: "t", Entity: "Issue", IDs: []string{"1"}, TsMs: 1, Reason: "r1", RunID: "a"},
		{Kind: KindCatalog, EntryID: "t", TsMs: 2},
		{Kind: KindRows, EntryID: "t", Entity: "Issue", IDs: []string{"2", "1"}, TsMs: 3, Reason: "r2", RunID: "b"},
		{Kind: KindRows, EntryID: "t", Entity: "Project", TsMs: 4},
		{Kind: KindSession, SessionID: "s1", TsMs: 5},
		{Kind: KindSession, SessionID: "s2", TsMs: 6},
	}
	out := Coalesce(evs)
	if len(out) != 5 {
		t.Fatalf("got %d messages, want 5: %+v", len(out), out)
	}
	m := out[0]
	if m.Count != 2 || strings.Join(m.IDs, ",") != "1,2" || m.TsMs != 3 || m.Reason != "r2" || m.RunID != "b" {
		t.Fatalf("merged rows event = %+v", m)
	}
	if out[1].Kind != KindCatalog || out[2].Entity != "Project" || out[3].SessionID != "s1" || out[4].SessionID != "s2" {
		t.Fatalf("order or keys wrong: %+v", out)
	}
	if evs[0].Count != 0 || len(evs[0].IDs) != 1 {
		t.Fatal("Coalesce modified its input")
	}
}

type session struct {
	name string
	_    [8]*int // a pointerful, non-tiny object, so the GC really frees it
}

type sent struct {
	mu   sync.Mutex
	msgs []Message
	got  chan struct{}
}

func newSent() *sent { return &sent{got: make(chan struct{}, 1024)} }

func (s *sent) send(_ context.Context, _ *session, m Message) bool {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	s.got <- struct{}{}
	return false
}

func (s *sent) all() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(never):
		t.Fatal("timed out waiting for " + what)
	}
}

func TestForwardCoalescesQueuedBurst(t *testing.T) {
	b := New(nil)
	sub := b.Subscribe("a")
	// Queued before the forwarder starts: one burst whatever the timing.
	for i := range 5 {
		b.Publish(Event{Kind: KindRows, Reason: "plasm_run", Tenant: "a", EntryID: "t", Entity: "Issue", IDs: []string{string(rune('a' + i))}})
	}
	b.Publish(Event{Kind: KindCatalog, Reason: "reloaded", Tenant: "a", EntryID: "t", Digest: "d2"})
	s := newSent()
	target := &session{name: "x"}
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	go Forward(ctx, sub, target, s.send, ForwardOptions{Exited: func() { close(exited) }})
	wait(t, s.got, "first message")
	wait(t, s.got, "second message")
	msgs := s.all()
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	d := msgs[0].Data["details"].(map[string]any)
	if msgs[0].Data["event"] != DataRows || d["count"] != 5 || len(d["ids"].([]string)) != 5 {
		t.Fatalf("coalesced message = %+v", msgs[0].Data)
	}
	if msgs[1].Data["event"] != DataCatalog {
		t.Fatalf("second message = %+v", msgs[1].Data)
	}
	cancel()
	wait(t, exited, "forwarder exit on cancel")
	if b.Subscribers("a") != 0 {
		t.Fatal("forwarder left its subscription open")
	}
	runtime.KeepAlive(target)
}

func TestForwardReportsLag(t *testing.T) {
	b := New(nil)
	sub := b.Subscribe("a")
	for range BufferSize + 44 {
		b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a", EntryID: "t", Entity: "Issue"})
	}
	s := newSent()
	target := &session{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Forward(ctx, sub, target, s.send, ForwardOptions{})
	wait(t, s.got, "rows message")
	wait(t, s.got, "lag message")
	msgs := s.all()
	d0 := msgs[0].Data["details"].(map[string]any)
	d1 := msgs[1].Data["details"].(map[string]any)
	if d0["count"] != BufferSize || msgs[1].Data["event"] != DataFallback || d1["kind"] != "lagged" || d1["count"] != 44 {
		t.Fatalf("messages = %+v", msgs)
	}
	runtime.KeepAlive(target)
}

// TestForwardExitsWhenSessionDropped is seed 004's
// session_task_exits_when_session_dropped: the forwarder holds the session
// weakly, so once nothing else references it the next event ends it.
func TestForwardExitsWhenSessionDropped(t *testing.T) {
	b := New(nil)
	sub := b.Subscribe("a")
	s := newSent()
	exited := make(chan struct{})
	func() {
		target := &session{name: "short-lived"}
		go Forward(context.Background(), sub, target, s.send, ForwardOptions{Exited: func() { close(exited) }})
	}()
	// Delivered while the session is alive? Not required: it may already be
	// collected. What matters is that the forwarder exits and unsubscribes.
	for i := 0; ; i++ {
		runtime.GC()
		b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a"})
		select {
		case <-exited:
			if b.Subscribers("a") != 0 {
				t.Fatal("subscription still open after the forwarder exited")
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if i > int(never/(10*time.Millisecond)) {
			t.Fatal("forwarder still running after its session was dropped")
		}
	}
}

func TestForwardStopsWhenSenderSaysGone(t *testing.T) {
	b := New(nil)
	sub := b.Subscribe("a")
	target := &session{}
	exited := make(chan struct{})
	go Forward(context.Background(), sub, target, func(context.Context, *session, Message) bool { return true }, ForwardOptions{Exited: func() { close(exited) }})
	b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a"})
	wait(t, exited, "forwarder exit")
	runtime.KeepAlive(target)
}

func TestForwardWindowCollectsLateEvents(t *testing.T) {
	b := New(nil)
	sub := b.Subscribe("a")
	s := newSent()
	target := &session{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A window the test never reaches: the burst ends only when the
	// subscription closes, so both events must land in one message.
	go Forward(ctx, sub, target, s.send, ForwardOptions{Window: never})
	b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a", EntryID: "t", Entity: "Issue"})
	b.Publish(Event{Kind: KindRows, Reason: "x", Tenant: "a", EntryID: "t", Entity: "Issue"})
	for len(sub.C()) > 0 {
		runtime.Gosched()
	}
	sub.Close()
	wait(t, s.got, "message")
	msgs := s.all()
	if d := msgs[0].Data["details"].(map[string]any); len(msgs) != 1 || d["count"] != 2 {
		t.Fatalf("messages = %+v", msgs)
	}
	runtime.KeepAlive(target)
}
