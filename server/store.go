package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/session"
)

// sharedServices are what replicas on one Redis share besides sessions.
type sharedServices struct {
	// limiter is the tenants' rate limits (the embedder's if it brought one).
	limiter ratelimit.Limiter
	// audit is the trail: a Redis stream per tenant, beside the embedder's
	// or the --audit-log file when there is one.
	audit audit.Log
}

// openSharedStore opens the Redis store named by cfg.StoreURL, the relay
// that fans the invalidation bus out over the same Redis, and the rate
// limiter and audit trail replicas share there. The returned func closes
// them.
func openSharedStore(cfg Config, events *bus.Bus) (session.Store, sharedServices, func(), error) {
	if !strings.HasPrefix(cfg.StoreURL, "redis://") && !strings.HasPrefix(cfg.StoreURL, "rediss://") {
		return nil, sharedServices{}, nil, fmt.Errorf("--store %q: only redis:// and rediss:// URLs are supported", cfg.StoreURL)
	}
	session.RouteRedisLogs(cfg.Logger)
	rdb, err := session.DialRedis(cfg.StoreURL)
	if err != nil {
		return nil, sharedServices{}, nil, err
	}
	shared := sharedServices{limiter: cfg.RateLimiter, audit: audit.NewStream(rdb)}
	if shared.limiter == nil {
		shared.limiter = RedisRateLimiter(rdb)
	}
	if cfg.Audit != nil {
		shared.audit = audit.Tee{shared.audit, cfg.Audit}
	}
	store := session.NewRedis(rdb, cfg.SessionIdleTTL)
	// Each process is its own origin, so it does not hear its own events
	// twice.
	relay := bus.StartRedisRelay(rdb, events, uuid.NewString(), cfg.Logger)
	stopSweep := store.StartSweeper(store.SweepInterval())
	return store, shared, func() {
		stopSweep()
		relay.Close()
		_ = rdb.Close()
	}, nil
}

// storeUnavailable reports whether err means the shared store is down.
func storeUnavailable(err error) bool { return errors.Is(err, session.ErrUnavailable) }

// storeReady checks a store that can be pinged (Redis): /v1/health says
// 503 while it is unreachable, so a load balancer routes around.
func (a *App) storeReady(c echo.Context) error {
	p, ok := a.svc.Store().(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	if err := p.Ping(c.Request().Context()); err != nil {
		return problem.From(err)
	}
	return nil
}
