package core

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// AdmitRequest charges one request to the caller's tenant and principal
// buckets (HTTP routes and MCP tool calls).
func (s *Service) AdmitRequest(ctx context.Context, t *tenant.Tenant) error {
	return s.take(ctx, t.RateLimits.Request(t.ID, t.Principal))
}

// admitPlan charges a plan's capability calls: one token per step that
// calls a rate-limited capability, before any backend call.
func (s *Service) admitPlan(ctx context.Context, t *tenant.Tenant, p *plan.Plan) error {
	if len(t.RateLimits.Capabilities) == 0 {
		return nil
	}
	uses := map[string]int{}
	for _, n := range p.Nodes {
		if n.Capability != "" && n.EntryID != "" {
			uses[n.EntryID+":"+n.Capability]++
		}
	}
	return s.take(ctx, t.RateLimits.CapabilityBuckets(t.ID, t.Principal, uses))
}

func (s *Service) take(ctx context.Context, bs []ratelimit.Bucket) error {
	if len(bs) == 0 || s.limiter == nil {
		return nil
	}
	d, err := s.limiter.Take(ctx, bs)
	if err != nil {
		// A limiter whose store is down fails open: rate limits protect
		// capacity, and refusing every call would be the bigger outage.
		s.log.Warn("rate limiter unavailable; admitting", "err", err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	return rateLimited(d)
}

// rateLimited is the 429 problem: Retry-After on HTTP, and the hint an
// MCP tool error shows the model.
func rateLimited(d ratelimit.Decision) *problem.Problem {
	secs := int(math.Ceil(d.RetryAfter.Seconds()))
	if secs < 1 {
		secs = 1
	}
	p := problem.New(http.StatusTooManyRequests, "rate-limited",
		fmt.Sprintf("rate limit reached for %s (%d per %v)", d.Denied.Name, d.Denied.Rate.Rate, d.Denied.Rate.Per))
	p.RetryAfter = secs
	p.Hint = fmt.Sprintf("retry after %ds (at %s)", secs, time.Now().Add(time.Duration(secs)*time.Second).UTC().Format(time.RFC3339))
	return p
}
