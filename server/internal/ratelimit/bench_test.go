package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/plasmd/plasmd/server/internal/ratelimit"
)

// BenchmarkTake: one request's take (tenant + principal buckets, all or
// nothing) against the baseline of two golang.org/x/time/rate limiters.
func BenchmarkTake(b *testing.B) {
	big := ratelimit.Rate{Rate: 1 << 30, Per: time.Second}
	b.Run("x-time-rate-two-limiters", func(b *testing.B) {
		l1, l2 := rate.NewLimiter(rate.Limit(1<<30), 1<<30), rate.NewLimiter(rate.Limit(1<<30), 1<<30)
		for b.Loop() {
			if !l1.Allow() || !l2.Allow() {
				b.Fatal("denied")
			}
		}
	})
	b.Run("memory", func(b *testing.B) {
		m := ratelimit.NewMemory(nil)
		bs := []ratelimit.Bucket{{Key: ratelimit.Key("tenant", "a"), Rate: big, N: 1}, {Key: ratelimit.Key("principal", "a", "alice"), Rate: big, N: 1}}
		ctx := context.Background()
		for b.Loop() {
			if d, _ := m.Take(ctx, bs); !d.Allowed {
				b.Fatal("denied")
			}
		}
	})
}
