package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// notifyDeadline bounds waits for a notification; a healthy run never
// gets near it.
const notifyDeadline = 30 * time.Second

// sessionProtocol is the newest MCP protocol with sessions.
const sessionProtocol = "2025-11-25"

// listener is an MCP client that records notifications/message.
type listener struct {
	cs   *mcp.ClientSession
	msgs chan *mcp.LoggingMessageParams
}

func connectListener(t testing.TB, endpoint, token string) *listener {
	t.Helper()
	l := &listener{msgs: make(chan *mcp.LoggingMessageParams, 512)}
	// Notifications ride the session protocol: the 2026-07-28 sessionless
	// protocol has no stream for notifications/message.
	c := mcp.NewClient(&mcp.Implementation{Name: "notify-test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { l.msgs <- req.Params },
	})
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: sessionProtocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	l.cs = cs
	return l
}

// next returns the next notification's event string and details.
func (l *listener) next(t testing.TB) (string, map[string]any) {
	t.Helper()
	for {
		select {
		case m := <-l.msgs:
			// Run log lines (logger "plasm", mcpnotify.go) share the
			// channel; this listener is about invalidation events.
			if m.Logger == "plasm" {
				continue
			}
			if m.Level != "info" || m.Logger != "plasmd" {
				t.Fatalf("notification level %q logger %q, want info plasmd", m.Level, m.Logger)
			}
			data, ok := m.Data.(map[string]any)
			if !ok {
				t.Fatalf("notification data %T %v", m.Data, m.Data)
			}
			d, _ := data["details"].(map[string]any)
			ev, _ := data["event"].(string)
			return ev, d
		case <-time.After(notifyDeadline):
			t.Fatal("no notification arrived")
			return "", nil
		}
	}
}

// waitSubscribers waits until the bus has n subscribers for a tenant (the
// forwarder starts when the client's initialized notification arrives).
func waitSubscribers(t testing.TB, app *server.App, tenantID string, n int) {
	t.Helper()
	deadline := time.Now().Add(notifyDeadline)
	for app.Bus().Subscribers(tenantID) != n {
		if time.Now().After(deadline) {
			t.Fatalf("tenant %s has %d subscribers, want %d", tenantID, app.Bus().Subscribers(tenantID), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func invalidate(t testing.TB, f *fixture, token, body string) httpResult {
	t.Helper()
	var hdr []string
	if token != "" {
		hdr = []string{"Authorization", "Bearer " + token}
	}
	return f.do(t, http.MethodPost, "/v1/invalidate", "application/json", body, hdr...)
}

// TestNotifyMutationReachesOnlyItsTenant: a mutation run on one session
// reaches every session of the same tenant (the one that ran it too) as
// rows_updated, and no session of another tenant.
func TestNotifyMutationReachesOnlyItsTenant(t *testing.T) {
	f := newTenantsFixture(t)
	a1 := connectListener(t, f.srv.URL+"/mcp", tokenA)
	a2 := connectListener(t, f.srv.URL+"/mcp", tokenA)
	b := connectListener(t, f.srv.URL+"/mcp", tokenB)
	waitSubscribers(t, f.app, "a", 2)
	waitSubscribers(t, f.app, "b", 1)

	ctx := contextCall(t, a1.cs, "file bugs", "tracker:Issue")
	ref := ctx.meta["logical_session_ref"].(string)
	out := mustOK(t, runCall(t, a1.cs, ref, `tracker:Issue.create(title="from notify test", priority=2)`))
	runID := out.meta["run_id"].(string)

	for _, l := range []*listener{a1, a2} {
		ev, d := l.next(t)
		if ev != bus.DataRows || d["reason"] != "plasm_run" || d["tenant_id"] != "a" || d["entry_id"] != "tracker" ||
			d["entity"] != "Issue" || d["run_id"] != runID || d["capability"] == nil || d["ts_ms"] == nil {
			t.Fatalf("notification %s %v", ev, d)
		}
		if ids, _ := d["ids"].([]any); len(ids) != 1 {
			t.Fatalf("ids %v, want the created row's id", d["ids"])
		}
	}
	// Tenant b's queue is ordered: if a's event had leaked, it would come
	// before b's own marker.
	if r := invalidate(t, f, tokenB, `{"kind":"tenant","reason":"marker"}`); r.status != http.StatusAccepted {
		t.Fatalf("invalidate: %d %s", r.status, r.body)
	}
	ev, d := b.next(t)
	if ev != bus.DataTenant || d["reason"] != "marker" || d["tenant_id"] != "b" {
		t.Fatalf("tenant b got %s %v before its own marker", ev, d)
	}
}

func TestInvalidateWebhook(t *testing.T) {
	f := newTenantsFixture(t)
	l := connectListener(t, f.srv.URL+"/mcp", tokenA)
	waitSubscribers(t, f.app, "a", 1)
	tests := []struct {
		name, token, body string
		status            int
	}{
		{"no token", "", `{"kind":"rows","entry_id":"tracker"}`, http.StatusUnauthorized},
		{"bad token", "nope", `{"kind":"rows","entry_id":"tracker"}`, http.StatusUnauthorized},
		{"no kind", tokenA, `{"entry_id":"tracker"}`, http.StatusBadRequest},
		{"unknown kind", tokenA, `{"kind":"session","entry_id":"tracker"}`, http.StatusBadRequest},
		{"no entry", tokenA, `{"kind":"rows"}`, http.StatusBadRequest},
		{"unknown catalog", tokenA, `{"kind":"rows","entry_id":"nope"}`, http.StatusNotFound},
		{"unknown entity", tokenA, `{"kind":"rows","entry_id":"tracker","entity":"Nope"}`, http.StatusNotFound},
		{"too long reason", tokenA, `{"kind":"tenant","reason":"` + strings.Repeat("x", 201) + `"}`, http.StatusBadRequest},
		{"not json", tokenA, `{`, http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := invalidate(t, f, tc.token, tc.body); r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
		})
	}
	// None of the rejected calls published anything: the first message is
	// the accepted one.
	r := invalidate(t, f, tokenA, `{"kind":"rows","reason":"backend webhook","entry_id":"tracker","entity":"Issue","ids":["iss-1","iss-2"]}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("invalidate: %d %s", r.status, r.body)
	}
	ev, d := l.next(t)
	if ev != bus.DataRows || d["reason"] != "backend webhook" || d["entity"] != "Issue" || len(d["ids"].([]any)) != 2 {
		t.Fatalf("got %s %v", ev, d)
	}
	invalidate(t, f, tokenA, `{"kind":"catalog","entry_id":"tracker"}`)
	if ev, d := l.next(t); ev != bus.DataCatalog || d["digest"] == "" || d["reason"] != "webhook" {
		t.Fatalf("got %s %v", ev, d)
	}
}

// TestNotifyForwarderEndsWithSession: closing the MCP session ends its
// forwarder and subscription.
func TestNotifyForwarderEndsWithSession(t *testing.T) {
	f := newTenantsFixture(t)
	l := connectListener(t, f.srv.URL+"/mcp", tokenA)
	waitSubscribers(t, f.app, "a", 1)
	_ = l.cs.Close()
	waitSubscribers(t, f.app, "a", 0)
}

func TestNotifyStdio(t *testing.T) {
	f := newFixture(t, server.Config{})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.app.ServeStdio(ctx, st) }()
	msgs := make(chan *mcp.LoggingMessageParams, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { msgs <- req.Params },
	})
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: sessionProtocol})
	if err != nil {
		t.Fatal(err)
	}
	waitSubscribers(t, f.app, tenant.Anonymous, 1)
	f.app.Bus().Publish(bus.Event{Kind: bus.KindCatalog, Reason: "reloaded", Tenant: tenant.Anonymous, EntryID: "tracker", Digest: "d"})
	select {
	case m := <-msgs:
		if data := m.Data.(map[string]any); data["event"] != bus.DataCatalog {
			t.Fatalf("stdio got %v", data)
		}
	case <-time.After(notifyDeadline):
		t.Fatal("stdio session got no notification")
	}
	_ = cs.Close()
	cancel()
	<-done
	waitSubscribers(t, f.app, tenant.Anonymous, 0)
}

// TestNotifyRespectsSetLevel: a client that never sets a level gets info
// events (the other tests); one that sets warning gets none until it sets
// info again.
func TestNotifyRespectsSetLevel(t *testing.T) {
	f := newTenantsFixture(t)
	l := connectListener(t, f.srv.URL+"/mcp", tokenA)
	waitSubscribers(t, f.app, "a", 1)
	ctx := context.Background()
	if err := l.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	before := f.app.NotifyHandled()
	f.app.Bus().Publish(bus.Event{Kind: bus.KindTenant, Reason: "silenced", Tenant: "a"})
	deadline := time.Now().Add(notifyDeadline)
	for f.app.NotifyHandled() == before {
		if time.Now().After(deadline) {
			t.Fatal("forwarder never handled the event")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := l.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	f.app.Bus().Publish(bus.Event{Kind: bus.KindTenant, Reason: "heard", Tenant: "a"})
	if _, d := l.next(t); d["reason"] != "heard" {
		t.Fatalf("first notification after warning was %v", d)
	}
}

// TestNotifySessionExpiredAndClosed: an execute session passing its idle
// TTL, and an MCP session closing, reach the tenant's other sessions.
func TestNotifySessionExpiredAndClosed(t *testing.T) {
	clock := newFakeClock()
	f := newFixture(t, server.Config{SessionIdleTTL: time.Minute, Clock: clock.Now})
	watcher := connectListener(t, f.srv.URL+"/mcp", "")
	worker := connectListener(t, f.srv.URL+"/mcp", "")
	waitSubscribers(t, f.app, tenant.Anonymous, 2)
	open := contextCall(t, worker.cs, "expire me", "tracker:Issue")
	clock.Advance(2 * time.Minute)
	// The next store call sweeps the idle session.
	contextCall(t, worker.cs, "expire me", "tracker:Issue")
	ev, d := watcher.next(t)
	prev := open.meta["logical_session_id"]
	if ev != bus.DataSession || d["reason"] != "expired" || d["session_id"] == "" || prev == nil {
		t.Fatalf("got %s %v", ev, d)
	}
	_ = worker.cs.Close()
	ev, d = watcher.next(t)
	if ev != bus.DataSession || d["reason"] != "closed" || d["session_id"] == "" {
		t.Fatalf("got %s %v", ev, d)
	}
}
