package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// takeScript is Memory.Take in Lua, so replicas sharing a Redis share
// buckets: one atomic script reads every bucket, and charges all of them
// only if each holds enough. Times are milliseconds. A bucket is a hash
// {t: tokens, ts: last update}, expiring once it would be full again
// (an absent bucket is a full one).
//
// ARGV: now (or -1 to use the server's TIME, the one clock all replicas
// share), then per key: rate, per_ms, capacity, n.
var takeScript = redis.NewScript(`
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local levels = {}
local maxwait, denied = 0, 0
for i, key in ipairs(KEYS) do
  local b = 2 + (i - 1) * 4
  local rate, per, cap, n = tonumber(ARGV[b]), tonumber(ARGV[b+1]), tonumber(ARGV[b+2]), tonumber(ARGV[b+3])
  local st = redis.call('HMGET', key, 't', 'ts')
  local tokens, ts = tonumber(st[1]), tonumber(st[2])
  if tokens == nil or ts == nil then
    tokens, ts = cap, now
  end
  local el = now - ts
  if el < 0 then el = 0 end
  tokens = math.min(cap, tokens + el * rate / per)
  levels[i] = tokens
  if n > tokens then
    local wait
    if n > cap then wait = per else wait = math.ceil((n - tokens) * per / rate) end
    if wait > maxwait then maxwait, denied = wait, i end
  end
end
if denied > 0 then
  return {0, maxwait, denied}
end
for i, key in ipairs(KEYS) do
  local b = 2 + (i - 1) * 4
  local rate, per, cap, n = tonumber(ARGV[b]), tonumber(ARGV[b+1]), tonumber(ARGV[b+2]), tonumber(ARGV[b+3])
  local left = levels[i] - n
  redis.call('HSET', key, 't', tostring(left), 'ts', now)
  redis.call('PEXPIRE', key, math.ceil((cap - left) * per / rate) + 1000)
end
return {1, 0, 0}
`)

// Redis is a Limiter shared by every replica using the same Redis.
type Redis struct {
	rdb    redis.Scripter
	prefix string
	// now, when set, replaces Redis's TIME (tests use a fake clock).
	now func() time.Time
}

// NewRedis returns a limiter storing buckets under prefix (e.g.
// "plasmd:"). now nil means the Redis server's clock.
func NewRedis(rdb redis.Scripter, prefix string, now func() time.Time) *Redis {
	return &Redis{rdb: rdb, prefix: prefix, now: now}
}

// Take implements Limiter.
func (r *Redis) Take(ctx context.Context, bs []Bucket) (Decision, error) {
	if len(bs) == 0 {
		return Decision{Allowed: true}, nil
	}
	now := int64(-1)
	if r.now != nil {
		now = r.now().UnixMilli()
	}
	keys := make([]string, len(bs))
	args := []any{now}
	for i, b := range bs {
		per := b.Rate.Per.Milliseconds()
		if per < 1 {
			per = 1
		}
		keys[i] = r.prefix + b.Key
		args = append(args, b.Rate.Rate, per, b.Rate.Capacity(), b.N)
	}
	res, err := takeScript.Run(ctx, r.rdb, keys, args...).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("rate limiter: %w", err)
	}
	if len(res) != 3 {
		return Decision{}, fmt.Errorf("rate limiter: unexpected reply %v", res)
	}
	if res[0] == 1 {
		return Decision{Allowed: true}, nil
	}
	i := int(res[2]) - 1
	if i < 0 || i >= len(bs) {
		return Decision{}, fmt.Errorf("rate limiter: bad bucket index %s", strconv.FormatInt(res[2], 10))
	}
	return Decision{RetryAfter: time.Duration(res[1]) * time.Millisecond, Denied: bs[i]}, nil
}
