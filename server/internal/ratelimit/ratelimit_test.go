package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server/internal/ratelimit"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// limiterContract runs the same checks against any Limiter.
func limiterContract(t *testing.T, l ratelimit.Limiter, advance func(time.Duration)) {
	ctx := context.Background()
	perMin := ratelimit.Rate{Rate: 2, Per: time.Minute}
	a := ratelimit.Bucket{Key: ratelimit.Key("t", "a"), Rate: perMin, N: 1}
	b := ratelimit.Bucket{Key: ratelimit.Key("t", "b"), Rate: ratelimit.Rate{Rate: 10, Per: time.Minute}, N: 1}
	take := func(bs ...ratelimit.Bucket) ratelimit.Decision {
		t.Helper()
		d, err := l.Take(ctx, bs)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i := range 2 {
		if d := take(a, b); !d.Allowed {
			t.Fatalf("take %d denied: %+v", i, d)
		}
	}
	d := take(a, b)
	if d.Allowed || d.Denied.Key != a.Key || d.RetryAfter != 30*time.Second {
		t.Fatalf("third take: %+v, want denied on a with 30s", d)
	}
	// All or nothing: the denied take did not charge b (8 left of 10).
	for i := range 8 {
		if d := take(b); !d.Allowed {
			t.Fatalf("b take %d denied: b was charged by a denied take", i)
		}
	}
	if d := take(b); d.Allowed {
		t.Fatal("b over its capacity")
	}
	advance(30 * time.Second)
	if d := take(a); !d.Allowed {
		t.Fatalf("after refill: %+v", d)
	}
	if d := take(a); d.Allowed {
		t.Fatal("refill gave more than one token in 30s")
	}
	// A take larger than the bucket waits a full period.
	big := ratelimit.Bucket{Key: ratelimit.Key("t", "big"), Rate: perMin, N: 5}
	if d := take(big); d.Allowed || d.RetryAfter != time.Minute {
		t.Fatalf("oversized take %+v", d)
	}
	// Burst banks more than the rate.
	burst := ratelimit.Bucket{Key: ratelimit.Key("t", "burst"), Rate: ratelimit.Rate{Rate: 1, Per: time.Hour, Burst: 3}, N: 3}
	if d := take(burst); !d.Allowed {
		t.Fatalf("burst %+v", d)
	}
}

func TestMemory(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	limiterContract(t, ratelimit.NewMemory(clk.Now), clk.Advance)
}

func TestConfig(t *testing.T) {
	r := &ratelimit.Rate{Rate: 1, Per: time.Second}
	c := ratelimit.Config{Tenant: r, Principal: r, Capabilities: map[string]ratelimit.Rate{"tracker:issue_create": *r}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Request("a", ""); len(got) != 1 {
		t.Fatalf("tenant token charges %d buckets", len(got))
	}
	if got := c.Request("a", "alice"); len(got) != 2 || got[1].Key == ratelimit.Key("principal", "a", "bob") {
		t.Fatalf("request buckets %+v", got)
	}
	if got := c.CapabilityBuckets("a", "alice", map[string]int{"tracker:issue_create": 2, "tracker:issue_get": 1}); len(got) != 1 || got[0].N != 2 {
		t.Fatalf("capability buckets %+v", got)
	}
	// Length-prefixed keys: ids containing the separator do not collide.
	if ratelimit.Key("a:b", "c") == ratelimit.Key("a", "b:c") {
		t.Fatal("key collision")
	}
	for _, tc := range []struct {
		name string
		c    ratelimit.Config
		want string
	}{
		{"zero rate", ratelimit.Config{Tenant: &ratelimit.Rate{Per: time.Second}}, "rate must be positive"},
		{"no period", ratelimit.Config{Principal: &ratelimit.Rate{Rate: 1}}, "per must be"},
		{"negative burst", ratelimit.Config{Tenant: &ratelimit.Rate{Rate: 1, Per: time.Second, Burst: -1}}, "burst"},
		{"bad capability key", ratelimit.Config{Capabilities: map[string]ratelimit.Rate{"issue_create": *r}}, "entry_id:capability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
