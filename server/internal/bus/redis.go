package bus

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Channel is the Redis pub/sub channel replicas share. Events name their
// tenant; a replica delivers each only to that tenant's subscriptions.
const Channel = "plasmd:bus"

// relayBuffer bounds events waiting to be published to Redis.
const relayBuffer = 1024

// RedisRelay fans events out across replicas over Redis pub/sub. Publish
// never blocks: events queue (bounded) for one publishing goroutine, and
// while Redis is unreachable they are dropped and counted, not retried.
type RedisRelay struct {
	rdb     redis.UniversalClient
	bus     *Bus
	log     *slog.Logger
	out     chan Event
	ps      *redis.PubSub
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	dropped atomic.Int64
	once    sync.Once
}

// StartRedisRelay subscribes to Channel and hands b's published events to
// Redis; events from other replicas (origin differs) reach b's local
// subscriptions. The subscription reconnects by itself after an outage.
func StartRedisRelay(rdb redis.UniversalClient, b *Bus, origin string, log *slog.Logger) *RedisRelay {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &RedisRelay{rdb: rdb, bus: b, log: log, out: make(chan Event, relayBuffer), cancel: cancel}
	r.ps = rdb.Subscribe(ctx, Channel)
	// Wait for the subscription so events published right after start are
	// heard; if Redis is down now, the PubSub subscribes when it returns.
	if _, err := r.ps.Receive(ctx); err != nil {
		log.Warn("invalidation relay: Redis not reachable yet; will subscribe when it is", "err", err)
	}
	r.wg.Add(2)
	go r.receive()
	go r.send(ctx)
	b.SetRelay(r, origin)
	return r
}

// Publish queues ev for Redis without blocking.
func (r *RedisRelay) Publish(ev Event) {
	select {
	case r.out <- ev:
	default:
		if r.dropped.Add(1) == 1 {
			r.log.Warn("invalidation relay: queue full, dropping events for other replicas")
		}
	}
}

func (r *RedisRelay) send(ctx context.Context) {
	defer r.wg.Done()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-r.out:
			b, err := json.Marshal(ev)
			if err != nil {
				continue
			}
			err = r.rdb.Publish(ctx, Channel, b).Err()
			switch {
			case err != nil && !failing && ctx.Err() == nil:
				failing = true
				r.log.Warn("invalidation relay: publish failed; other replicas miss events until Redis returns", "err", err)
			case err == nil && failing:
				failing = false
				r.log.Info("invalidation relay: publishing again")
			}
		}
	}
}

func (r *RedisRelay) receive() {
	defer r.wg.Done()
	for msg := range r.ps.Channel() {
		var ev Event
		if err := json.Unmarshal([]byte(msg.Payload), &ev); err != nil {
			r.log.Warn("invalidation relay: undecodable event ignored", "err", err)
			continue
		}
		r.bus.Deliver(ev)
	}
}

// Close stops the relay (idempotent).
func (r *RedisRelay) Close() {
	r.once.Do(func() {
		r.cancel()
		_ = r.ps.Close()
		r.wg.Wait()
	})
}
