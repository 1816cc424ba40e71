package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Operation owner leases in Redis: one string key per operation holding
// the lease document, with a PX expiry the owner pushes forward on each
// renewal. Redis expires the key on its own clock; a waiter reads the key
// and its PTTL together, so no replica's clock is ever compared with
// another's.

func leaseKey(ref OpRef) string {
	return key(ref.Tenant, "oplease", ref.Scope, strconv.Itoa(ref.N))
}

func leaseDoc(owner string, ttl time.Duration) ([]byte, error) {
	b, err := json.Marshal(OpLease{Owner: owner, TTL: ttl})
	if err != nil {
		return nil, fmt.Errorf("session store: encode lease: %w", err)
	}
	return b, nil
}

func (r *Redis) PutOpLease(ctx context.Context, ref OpRef, owner string, ttl time.Duration) error {
	doc, err := leaseDoc(owner, ttl)
	if err != nil {
		return err
	}
	return r.wrap(r.rdb.Set(ctx, leaseKey(ref), doc, ttl).Err(), "put operation lease")
}

// RenewOpLeases sends one SET XX PX per lease in a pipeline (a cluster
// client splits it by slot): XX renews only a lease that still exists, so
// an expired one stays gone and is reported lost.
func (r *Redis) RenewOpLeases(ctx context.Context, refs []OpRef, owner string, ttl time.Duration) ([]OpRef, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	doc, err := leaseDoc(owner, ttl)
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.StatusCmd, len(refs))
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, ref := range refs {
			cmds[i] = p.SetArgs(ctx, leaseKey(ref), doc, redis.SetArgs{Mode: "XX", TTL: ttl})
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, r.wrap(err, "renew operation leases")
	}
	var lost []OpRef
	for i, c := range cmds {
		switch err := c.Err(); {
		case errors.Is(err, redis.Nil):
			lost = append(lost, refs[i])
		case err != nil:
			return nil, r.wrap(err, "renew operation leases")
		}
	}
	return lost, nil
}

// getLease: KEYS lease. The document and its PTTL read together, or nil.
var getLease = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
return {v, redis.call('PTTL', KEYS[1])}`)

func (r *Redis) GetOpLease(ctx context.Context, ref OpRef) (OpLease, error) {
	v, err := getLease.Run(ctx, r.rdb, []string{leaseKey(ref)}).Slice()
	if errors.Is(err, redis.Nil) {
		return OpLease{}, fmt.Errorf("operation %d lease: %w", ref.N, ErrNotFound)
	}
	if err != nil {
		return OpLease{}, r.wrap(err, "get operation lease")
	}
	if len(v) != 2 {
		return OpLease{}, fmt.Errorf("session store: get operation lease: unexpected reply %v", v)
	}
	doc, ok1 := v[0].(string)
	left, ok2 := v[1].(int64)
	if !ok1 || !ok2 {
		return OpLease{}, fmt.Errorf("session store: get operation lease: unexpected reply %v", v)
	}
	var l OpLease
	if err := jsonUnmarshal([]byte(doc), &l); err != nil {
		return OpLease{}, err
	}
	if left < 0 {
		// -1: no expiry (never written so); -2: gone between the reads,
		// which one script rules out. Either way not a live lease.
		return OpLease{}, fmt.Errorf("operation %d lease: %w", ref.N, ErrNotFound)
	}
	l.Left = time.Duration(left) * time.Millisecond
	return l, nil
}

func (r *Redis) DropOpLease(ctx context.Context, ref OpRef) error {
	return r.wrap(r.rdb.Del(ctx, leaseKey(ref)).Err(), "drop operation lease")
}
