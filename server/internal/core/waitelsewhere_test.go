package core

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/internal/redistest"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// storeClock is a settable clock for the memory store.
type storeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *storeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *storeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// waitStore is a store for waitElsewhere's table, with the two ways a
// lease can end unrenewed: expire ends it, age makes it unrenewed for
// more than half its TTL while it still exists (nil: the store cannot
// age a lease without also ending it soon after).
type waitStore struct {
	store  session.Store
	expire func(t *testing.T, ref session.OpRef)
	age    func(t *testing.T, ref session.OpRef)
}

func memoryWaitStore(t *testing.T) waitStore {
	m := session.NewMemory(time.Hour)
	clk := &storeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m.SetClock(clk.Now)
	put := func(t *testing.T, ref session.OpRef, d time.Duration) {
		if err := m.PutOpLease(context.Background(), ref, "other", leaseTTL); err != nil {
			t.Fatal(err)
		}
		clk.Add(d)
	}
	return waitStore{store: m,
		expire: func(t *testing.T, ref session.OpRef) { put(t, ref, leaseTTL) },
		age:    func(t *testing.T, ref session.OpRef) { put(t, ref, leaseTTL/2+time.Second) },
	}
}

// redisWaitStore expires a lease by giving it a millisecond to live:
// Redis's clock ends it, and the waiter (holding an hour) rereads until
// it has.
func redisWaitStore(t *testing.T) waitStore {
	srv := redistest.Start(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	r := session.NewRedis(rdb, time.Hour)
	return waitStore{store: r, expire: func(t *testing.T, ref session.OpRef) {
		if err := r.PutOpLease(context.Background(), ref, "other", time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}}
}

// deadOwner names a process on this machine that has ended ("" without
// /proc).
func deadOwner(t *testing.T) string {
	if ownerIdentity() == "" {
		return ""
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start, ok := procStart(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil || !ok {
		t.Fatalf("child: %v (start time read: %v)", err, ok)
	}
	return fmt.Sprintf("%s/%d/%s", ownerPlace(), cmd.Process.Pid, start)
}

// waitElsewhere judges another process's operation by its lease in the
// store, never by the waiter's clock: a live lease keeps an operation
// whose deadline the waiter's clock says passed long ago (a skewed
// replica), or whose owner /proc cannot find (a VM clone sharing the boot
// id); a lease gone with the record still running records the run failed
// and partial, with the store's call count.
func TestWaitElsewhere(t *testing.T) {
	const (
		long  = time.Hour             // a wait the test never sits out
		short = 20 * time.Millisecond // the wait when the answer is "still running"
	)
	dead := deadOwner(t)
	cases := []struct {
		name string
		// lease: "alive" (just renewed), "expired", "aged" (unrenewed for
		// more than half its TTL but not expired), "none".
		lease     string
		owner     string
		stored    string // the record's state in the store
		cancelled bool   // the wait's context has ended
		wait      time.Duration
		state     string
		says      []string
		needProc  bool
		// legacy: the record is from a plasmd before leases (no Leased);
		// ahead: its deadline is still ahead (else a day past).
		legacy, ahead bool
	}{
		{name: "owner alive, deadline long past on the waiter's clock", lease: "alive", owner: "other-boot/pid:[1]/7/1",
			stored: session.OpRunning, wait: short, state: session.OpRunning},
		{name: "owner alive though /proc here cannot see it (a VM clone)", lease: "alive", owner: dead, needProc: true,
			stored: session.OpRunning, wait: short, state: session.OpRunning},
		{name: "owner gone by lease expiry", lease: "expired", owner: "other-boot/pid:[1]/7/1",
			stored: session.OpRunning, wait: long, state: session.OpFailed,
			says: []string{"the plasmd process running it ended", "lease", "partial run, not a result"}},
		{name: "owner gone: not found here and lease unrenewed", lease: "aged", owner: dead, needProc: true,
			stored: session.OpRunning, wait: long, state: session.OpFailed,
			says: []string{"the plasmd process running it ended (it was closed or killed)", "partial run, not a result"}},
		{name: "record finished meanwhile, lease still held", lease: "alive", owner: "x",
			stored: session.OpDone, wait: long, state: session.OpDone},
		{name: "record finished meanwhile, lease already dropped", lease: "none", owner: "x",
			stored: session.OpDone, wait: long, state: session.OpDone},
		{name: "context cancelled", lease: "alive", owner: "x", cancelled: true,
			stored: session.OpRunning, wait: long, state: session.OpRunning},
		{name: "a pre-lease record within its deadline is alive (rolling upgrade)", lease: "none", owner: "other-boot/pid:[1]/7/1",
			legacy: true, ahead: true, stored: session.OpRunning, wait: short, state: session.OpRunning},
		{name: "a pre-lease record past its deadline is lost", lease: "none", owner: "other-boot/pid:[1]/7/1",
			legacy: true, stored: session.OpRunning, wait: long, state: session.OpFailed,
			says: []string{"did not record an end within its time limit", "partial run, not a result"}},
	}
	stores := map[string]func(t *testing.T) waitStore{"memory": memoryWaitStore, "redis": redisWaitStore}
	for sname, mk := range stores {
		t.Run(sname, func(t *testing.T) {
			ws := mk(t)
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					if tc.needProc && dead == "" {
						t.Skip("no /proc")
					}
					if tc.lease == "aged" && ws.age == nil {
						t.Skip("this store cannot age a lease without ending it")
					}
					ctx := context.Background()
					ten := &tenant.Tenant{ID: "A"}
					sc := RunScope{LogicalID: "L", Ref: "s0"}
					ref := session.OpRef{Tenant: "A", Scope: "L", N: i + 1}
					// The waiter's copy was read before the last calls
					// landed: 3 calls, where the store has 5.
					deadline := time.Now().Add(-24 * time.Hour)
					if tc.ahead {
						deadline = time.Now().Add(24 * time.Hour)
					}
					op := session.Operation{Tenant: "A", Scope: "L", N: ref.N, Handle: fmt.Sprintf("s0_o%d", ref.N),
						Program: "e1", State: session.OpRunning, Calls: 3, Owner: tc.owner,
						Deadline: deadline, Leased: !tc.legacy}
					if err := ws.store.StartOperation(ctx, op, maxRunningOps); err != nil {
						t.Fatal(err)
					}
					stored := op
					stored.State, stored.Calls = tc.stored, 5
					if err := ws.store.UpdateOperation(ctx, stored); err != nil {
						t.Fatal(err)
					}
					switch tc.lease {
					case "alive":
						if err := ws.store.PutOpLease(ctx, ref, "other", leaseTTL); err != nil {
							t.Fatal(err)
						}
					case "expired":
						ws.expire(t, ref)
					case "aged":
						ws.age(t, ref)
					}
					s := &Service{store: ws.store, log: slog.New(slog.DiscardHandler),
						ops: newOpRunner(nil, ws.store, nil, time.Hour, tc.wait)}
					s.ops.poll = time.Millisecond
					if tc.cancelled {
						c, cancel := context.WithCancel(ctx)
						cancel()
						ctx = c
					}
					got, err := s.waitElsewhere(ctx, ten, sc, op)
					if err != nil {
						t.Fatal(err)
					}
					if got.State != tc.state {
						t.Fatalf("state %s, want %s (error %q)", got.State, tc.state, got.Error)
					}
					for _, w := range tc.says {
						if !strings.Contains(got.Error, w) {
							t.Errorf("error %q lacks %q", got.Error, w)
						}
					}
					rec, err := ws.store.GetOperation(context.Background(), "A", "L", ref.N)
					if err != nil || rec.State != tc.state || rec.Error != got.Error {
						t.Fatalf("stored record %+v %v, want the answer's state %s", rec, err, tc.state)
					}
					if got.State != session.OpRunning && got.Calls != 5 {
						t.Errorf("answered %d calls, want the store's 5", got.Calls)
					}
					if got.State == session.OpFailed && !strings.Contains(ProgressText(got), "? failed after 5 calls: ") {
						t.Errorf("progress: %s", ProgressText(got))
					}
				})
			}
		})
	}
}
