package session

import (
	"fmt"
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
