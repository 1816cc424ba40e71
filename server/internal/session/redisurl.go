package session

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DialRedis opens a client for a redis:// or rediss:// URL (user,
// password, db and TLS from the URL). Commands fail fast when Redis is
// down, so a request answers 503 quickly instead of hanging; the pool
// reconnects by itself when Redis returns.
func DialRedis(url string) (redis.UniversalClient, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", url, err)
	}
	return redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:        []string{opt.Addr},
		DB:           opt.DB,
		Username:     opt.Username,
		Password:     opt.Password,
		TLSConfig:    opt.TLSConfig,
		MaxRetries:   1,
		DialTimeout:  2 * time.Second,
		ReadTimeout:  5 * time.Second,
		WriteTimeout: 5 * time.Second,
	}), nil
}

// Kind names the store in health reports.
func (r *Redis) Kind() string { return "redis" }

var setLoggerOnce sync.Once

// RouteRedisLogs sends go-redis's own messages (pool dial failures while
// Redis is down, repeated on every attempt) to log at debug instead of
// stderr: the store's errors already reach requests and health. go-redis
// has one process-wide logger, so the first caller's log wins.
func RouteRedisLogs(log *slog.Logger) {
	setLoggerOnce.Do(func() { redis.SetLogger(redisLogger{log}) })
}

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
