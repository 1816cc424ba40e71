package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/server/internal/ratelimit"
)

// rateLimitTools charges each MCP tool call (not every JSON-RPC message)
// to the caller's request buckets; a refusal is a tool error saying when
// to retry, so the model can wait instead of failing the task.
func (a *App) rateLimitTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		t, err := a.mcpTenantFromHeader(req.GetExtra())
		if err != nil {
			return next(ctx, method, req)
		}
		if err := a.svc.AdmitRequest(ctx, t); err != nil {
			return toolError(err, nil), nil
		}
		return next(ctx, method, req)
	}
}

// RedisRateLimiter returns a limiter whose buckets live in Redis (Lua
// token buckets on the server's clock): set it as Config.RateLimiter on
// every replica that shares the Redis store, and they share rate limits.
func RedisRateLimiter(rdb redis.Scripter) ratelimit.Limiter {
	return ratelimit.NewRedis(rdb, "plasmd:rl:", nil)
}
