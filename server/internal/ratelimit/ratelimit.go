// Package ratelimit enforces token buckets per tenant, per principal and
// per capability, configured in the tenants file. A Limiter takes from
// several buckets at once, all or nothing, and says how long to wait when
// any is empty. Memory is one process's limiter; replicas share limits by
// sharing a Limiter implementation backed by a common store (Redis).
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// Rate is one token bucket: Rate tokens refill every Per, up to Burst
// (default Rate) banked.
type Rate struct {
	Rate  int           `yaml:"rate" json:"rate"`
	Per   time.Duration `yaml:"per" json:"per"`
	Burst int           `yaml:"burst" json:"burst,omitempty"`
}

// Capacity is the bucket size.
func (r Rate) Capacity() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return r.Rate
}

// refill is how many tokens elapsed time adds. Multiplying before
// dividing keeps whole results exact (the Lua script does the same).
func (r Rate) refill(elapsed time.Duration) float64 {
	return float64(elapsed) * float64(r.Rate) / float64(r.Per)
}

// wait is how long short tokens take to refill, rounded up.
func (r Rate) wait(short float64) time.Duration {
	return time.Duration(math.Ceil(short * float64(r.Per) / float64(r.Rate)))
}

func (r Rate) validate() error {
	switch {
	case r.Rate <= 0:
		return fmt.Errorf("rate must be positive, got %d", r.Rate)
	case r.Per <= 0:
		return fmt.Errorf("per must be a positive duration such as 1m, got %v", r.Per)
	case r.Burst < 0:
		return fmt.Errorf("burst must not be negative, got %d", r.Burst)
	}
	return nil
}

// Config is a tenant's `rate_limits:`. Tenant and Principal are charged
// one token per request (HTTP route or MCP tool call); Capabilities,
// keyed "entry_id:capability", one token per plan step that calls the
// capability, per principal (or per tenant for tenant tokens).
type Config struct {
	Tenant       *Rate           `yaml:"tenant" json:"tenant,omitempty"`
	Principal    *Rate           `yaml:"principal" json:"principal,omitempty"`
	Capabilities map[string]Rate `yaml:"capabilities" json:"capabilities,omitempty"`
}

// ErrConfig marks an invalid rate_limits section.
var ErrConfig = errors.New("rate_limits")

// Validate checks every bucket.
func (c *Config) Validate() error {
	if c.Tenant != nil {
		if err := c.Tenant.validate(); err != nil {
			return fmt.Errorf("%w: tenant: %v", ErrConfig, err)
		}
	}
	if c.Principal != nil {
		if err := c.Principal.validate(); err != nil {
			return fmt.Errorf("%w: principal: %v", ErrConfig, err)
		}
	}
	for k, r := range c.Capabilities {
		if e, cp, ok := strings.Cut(k, ":"); !ok || e == "" || cp == "" {
			return fmt.Errorf("%w: capabilities: key %q must be entry_id:capability", ErrConfig, k)
		}
		if err := r.validate(); err != nil {
			return fmt.Errorf("%w: capabilities %s: %v", ErrConfig, k, err)
		}
	}
	return nil
}

// Bucket is one take: N tokens from the bucket named Key.
type Bucket struct {
	Key  string
	Rate Rate
	N    int
	// Name says which limit this is, for people ("principal alice").
	Name string
}

// Decision is a Limiter's answer.
type Decision struct {
	Allowed bool
	// RetryAfter is how long until every denied bucket holds enough.
	RetryAfter time.Duration
	// Denied is the bucket that was short the longest.
	Denied Bucket
}

// Limiter takes tokens from buckets atomically: either every bucket has
// enough and all are charged, or none is charged.
type Limiter interface {
	Take(ctx context.Context, buckets []Bucket) (Decision, error)
}

// Memory is an in-process Limiter. The token bucket is written out (not
// golang.org/x/time/rate) because a take spans several buckets all or
// nothing, and because the Redis limiter must compute exactly the same
// arithmetic in Lua.
type Memory struct {
	mu      sync.Mutex
	now     func() time.Time
	buckets map[string]*bucket
	// maxKeys bounds memory: past it, buckets that have refilled to full
	// (indistinguishable from absent ones) are dropped.
	maxKeys int
}

type bucket struct {
	tokens float64
	last   time.Time
	rate   Rate
}

// NewMemory returns a limiter on the given clock (nil = time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, buckets: map[string]*bucket{}, maxKeys: 100000}
}

// level refills b to now and returns its tokens.
func level(b *bucket, r Rate, now time.Time) float64 {
	cp := float64(r.Capacity())
	if b == nil {
		return cp
	}
	el := now.Sub(b.last)
	if el < 0 {
		el = 0
	}
	return math.Min(cp, b.tokens+r.refill(el))
}

// Take implements Limiter.
func (m *Memory) Take(_ context.Context, bs []Bucket) (Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	d := Decision{Allowed: true}
	levels := make([]float64, len(bs))
	for i, b := range bs {
		levels[i] = level(m.buckets[b.Key], b.Rate, now)
		if short := float64(b.N) - levels[i]; short > 0 {
			d.Allowed = false
			wait := b.Rate.wait(short)
			if b.N > b.Rate.Capacity() {
				// Can never hold that many: waiting a full period is the
				// honest answer the client can act on.
				wait = b.Rate.Per
			}
			if wait > d.RetryAfter {
				d.RetryAfter, d.Denied = wait, b
			}
		}
	}
	if !d.Allowed {
		return d, nil
	}
	for i, b := range bs {
		m.buckets[b.Key] = &bucket{tokens: levels[i] - float64(b.N), last: now, rate: b.Rate}
	}
	if len(m.buckets) > m.maxKeys {
		for k, b := range m.buckets {
			if level(b, b.rate, now) >= float64(b.rate.Capacity()) {
				delete(m.buckets, k)
			}
		}
	}
	return d, nil
}

// Request returns the buckets one request charges: the tenant's and, for
// a delegated caller, the principal's.
func (c *Config) Request(tenant, principal string) []Bucket {
	var out []Bucket
	if c.Tenant != nil {
		out = append(out, Bucket{Key: Key("tenant", tenant), Rate: *c.Tenant, N: 1, Name: "tenant " + tenant})
	}
	if c.Principal != nil && principal != "" {
		out = append(out, Bucket{Key: Key("principal", tenant, principal), Rate: *c.Principal, N: 1, Name: "principal " + principal})
	}
	return out
}

// CapabilityBuckets returns the buckets a plan's capability calls charge;
// uses counts plan steps per "entry_id:capability".
func (c *Config) CapabilityBuckets(tenant, principal string, uses map[string]int) []Bucket {
	var out []Bucket
	for k, n := range uses {
		r, ok := c.Capabilities[k]
		if !ok {
			continue
		}
		out = append(out, Bucket{Key: Key("capability", tenant, principal, k), Rate: r, N: n, Name: "capability " + k})
	}
	return out
}

// Key joins parts unambiguously (length-prefixed), so no tenant or
// principal id can collide with another's bucket.
func Key(parts ...string) string {
	var b strings.Builder
	b.WriteString("rl")
	for _, p := range parts {
		fmt.Fprintf(&b, ":%d:%s", len(p), p)
	}
	return b.String()
}
