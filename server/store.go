package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/session"
)

// openSharedStore opens the Redis store named by cfg.StoreURL and the
// relay that fans the invalidation bus out over the same Redis, and, unless
// the caller brought its own, a rate limiter on that Redis so replicas
// share tenants' rate limits. The returned func closes them.
func openSharedStore(cfg Config, events *bus.Bus) (session.Store, ratelimit.Limiter, func(), error) {
	if !strings.HasPrefix(cfg.StoreURL, "redis://") && !strings.HasPrefix(cfg.StoreURL, "rediss://") {
		return nil, nil, nil, fmt.Errorf("--store %q: only redis:// and rediss:// URLs are supported", cfg.StoreURL)
	}
	session.RouteRedisLogs(cfg.Logger)
	rdb, err := session.DialRedis(cfg.StoreURL)
	if err != nil {
		return nil, nil, nil, err
	}
	limiter := cfg.RateLimiter
	if limiter == nil {
		limiter = RedisRateLimiter(rdb)
	}
	store := session.NewRedis(rdb, cfg.SessionIdleTTL)
	// Each process is its own origin, so it does not hear its own events
	// twice.
	relay := bus.StartRedisRelay(rdb, events, uuid.NewString(), cfg.Logger)
	stopSweep := store.StartSweeper(store.SweepInterval())
	return store, limiter, func() {
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
