package bus

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/internal/redistest"
)

func relayPair(t *testing.T, srv *redistest.Server) (*Bus, *Bus) {
	t.Helper()
	var buses []*Bus
	for _, origin := range []string{"one", "two"} {
		rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, MaxRetries: 1})
		b := New(nil)
		r := StartRedisRelay(rdb, b, origin, nil)
		t.Cleanup(func() { r.Close(); _ = rdb.Close() })
		buses = append(buses, b)
	}
	return buses[0], buses[1]
}

func next(t *testing.T, s *Subscription) Event {
	t.Helper()
	select {
	case ev := <-s.C():
		return ev
	case <-time.After(never):
		t.Fatal("no event relayed")
		return Event{}
	}
}

// TestRedisRelay: an event published on one bus reaches the same tenant's
// subscribers on another bus sharing the Redis, once; other tenants never;
// after Redis restarts the relay resubscribes and events flow again.
func TestRedisRelay(t *testing.T) {
	srv := redistest.Start(t)
	one, two := relayPair(t, srv)
	localA, remoteA, remoteB := one.Subscribe("a"), two.Subscribe("a"), two.Subscribe("b")

	one.Publish(Event{Kind: KindRows, Reason: "first", Tenant: "a", EntryID: "t"})
	if ev := next(t, remoteA); ev.Reason != "first" || ev.Origin != "one" {
		t.Fatalf("relayed %+v", ev)
	}
	if ev := next(t, localA); ev.Reason != "first" {
		t.Fatalf("local %+v", ev)
	}
	// Tenant b's queue is ordered: a leaked event would come before this.
	one.Publish(Event{Kind: KindTenant, Reason: "marker", Tenant: "b"})
	if ev := next(t, remoteB); ev.Reason != "marker" {
		t.Fatalf("tenant b got %+v before its marker", ev)
	}
	// The publisher's own event came back from Redis but was not delivered
	// twice: the next local event is the next one published.
	one.Publish(Event{Kind: KindRows, Reason: "second", Tenant: "a"})
	if ev := next(t, localA); ev.Reason != "second" {
		t.Fatalf("local queue held %+v (own event delivered twice?)", ev)
	}
	next(t, remoteA)

	srv.Stop()
	one.Publish(Event{Kind: KindRows, Reason: "lost while down", Tenant: "a"}) // must not block
	srv.Begin()
	// The subscription comes back by itself; publish until one arrives.
	deadline := time.Now().Add(never)
	for {
		one.Publish(Event{Kind: KindRows, Reason: "after restart", Tenant: "a"})
		select {
		case ev := <-remoteA.C():
			if ev.Reason == "after restart" {
				return
			}
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("relay did not recover after Redis restarted")
		}
	}
}
