package session

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Expiry events on Redis. Redis drops an idle execute session by itself
// (key TTL); to announce it even when nobody looks it up again, every
// replica sweeps one sorted set of deadlines, plasmd:expiry (members
// "tenant␟prompt_hash␟id", no tenant data). Whoever removes a member
// (ZREM answering 1) reports it, so each expiry is reported once across
// all replicas, whether a sweep or a lookup saw it first.
const expiryKey = "plasmd:expiry"

const expirySep = "\x1f"

// watchExpiry records (or pushes back) a session's deadline; best effort:
// a failure only delays its expiry event until a lookup.
func (r *Redis) watchExpiry(ctx context.Context, tenant, promptHash, id string) {
	deadline := time.Now().Add(r.ttl).UnixMilli()
	_ = r.rdb.ZAdd(ctx, expiryKey, redis.Z{Score: float64(deadline), Member: tenant + expirySep + promptHash + expirySep + id}).Err()
}

// reportExpired calls OnExpire once per expired session across replicas.
func (r *Redis) reportExpired(ctx context.Context, tenant, promptHash, id string) {
	n, err := r.rdb.ZRem(ctx, expiryKey, tenant+expirySep+promptHash+expirySep+id).Result()
	if f := r.onExpire.Load(); err == nil && n == 1 && f != nil && *f != nil {
		(*f)(Execute{Tenant: tenant, PromptHash: promptHash, ID: id})
	}
}

// maxSweep bounds one sweep's batch; the next sweep takes the rest.
const maxSweep = 1000

// Sweep reports sessions whose deadline passed by now and whose key is
// gone; a session used meanwhile gets its deadline pushed back.
func (r *Redis) Sweep(ctx context.Context, now time.Time) error {
	due, err := r.rdb.ZRangeByScore(ctx, expiryKey, &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: maxSweep}).Result()
	if err != nil {
		return r.wrap(err, "sweep")
	}
	for _, m := range due {
		parts := strings.Split(m, expirySep)
		if len(parts) != 3 {
			_ = r.rdb.ZRem(ctx, expiryKey, m).Err()
			continue
		}
		ek, _ := r.execKeys(parts[0], parts[1], parts[2])
		pttl, err := r.rdb.PTTL(ctx, ek).Result()
		if err != nil {
			return r.wrap(err, "sweep")
		}
		if pttl > 0 {
			_ = r.rdb.ZAdd(ctx, expiryKey, redis.Z{Score: float64(now.Add(pttl).UnixMilli()), Member: m}).Err()
			continue
		}
		r.reportExpired(ctx, parts[0], parts[1], parts[2])
	}
	return nil
}

// StartSweeper sweeps every interval until the returned func is called.
func (r *Redis) StartSweeper(every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				_ = r.Sweep(ctx, now)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// SweepInterval is how often a replica sweeps: a tenth of the TTL, at
// most a minute.
func (r *Redis) SweepInterval() time.Duration { return min(r.ttl/10, time.Minute) }
