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

// Plan commits and long operations in Redis. A commit is one hash (plan
// hash, document) expiring with its validity; taking it is one script, so
// two replicas can never both consume it. Operations are one hash per
// scope (N → document) plus a set of unfinished N; starting one checks
// the set's size and adds to it in one script, and updates keep a cancel
// request and a final state whichever replica writes.

func commitKey(tenant, scope string, n int) string {
	return key(tenant, "commit", scope, strconv.Itoa(n))
}

func (r *Redis) PutPlanCommit(ctx context.Context, c PlanCommit, ttl time.Duration) error {
	c.Expires = time.Now().UTC().Add(ttl)
	doc, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("session store: encode: %w", err)
	}
	k := commitKey(c.Tenant, c.Scope, c.N)
	_, err = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "hash", c.PlanHash, "doc", doc)
		p.PExpire(ctx, k, ttl)
		return nil
	})
	return r.wrap(err, "put plan commit")
}

// takeCommit: KEYS commit; ARGV plan hash. 0: none; 1: other plan; else
// the document, deleted.
var takeCommit = redis.NewScript(`
local h = redis.call('HGET', KEYS[1], 'hash')
if not h then return 0 end
if h ~= ARGV[1] then return 1 end
local d = redis.call('HGET', KEYS[1], 'doc')
redis.call('DEL', KEYS[1])
return d`)

func (r *Redis) TakePlanCommit(ctx context.Context, tenant, scope string, n int, planHash string) (PlanCommit, error) {
	v, err := takeCommit.Run(ctx, r.rdb, []string{commitKey(tenant, scope, n)}, planHash).Result()
	if err != nil {
		return PlanCommit{}, r.wrap(err, "take plan commit")
	}
	switch d := v.(type) {
	case int64:
		if d == 1 {
			return PlanCommit{}, fmt.Errorf("plan commit pc%d: %w", n, ErrPlanMismatch)
		}
		return PlanCommit{}, fmt.Errorf("plan commit pc%d: %w", n, ErrNotFound)
	case string:
		var c PlanCommit
		if err := jsonUnmarshal([]byte(d), &c); err != nil {
			return PlanCommit{}, err
		}
		if c.Tenant != tenant {
			return PlanCommit{}, fmt.Errorf("plan commit pc%d: %w", n, ErrNotFound)
		}
		return c, nil
	}
	return PlanCommit{}, fmt.Errorf("session store: take plan commit: unexpected reply %T", v)
}

func (r *Redis) opKeys(tenant, scope string) (docs, running string) {
	return key(tenant, "ops", scope), key(tenant, "opsrun", scope)
}

// startOp: KEYS docs, running; ARGV n, doc, max, retention ms.
var startOp = redis.NewScript(`
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`)

func (r *Redis) StartOperation(ctx context.Context, op Operation, max int) error {
	now := time.Now().UTC()
	op.Created, op.Updated = now, now
	doc, err := json.Marshal(op)
	if err != nil {
		return fmt.Errorf("session store: encode: %w", err)
	}
	docs, running := r.opKeys(op.Tenant, op.Scope)
	ok, err := startOp.Run(ctx, r.rdb, []string{docs, running}, op.N, doc, max, r.ms(r.retention)).Int()
	if err != nil {
		return r.wrap(err, "start operation")
	}
	if ok == 0 {
		return fmt.Errorf("%d operations unfinished: %w", max, ErrTooManyOperations)
	}
	return nil
}

func (r *Redis) GetOperation(ctx context.Context, tenant, scope string, n int) (Operation, error) {
	docs, _ := r.opKeys(tenant, scope)
	b, err := r.rdb.HGet(ctx, docs, strconv.Itoa(n)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Operation{}, fmt.Errorf("operation %d: %w", n, ErrNotFound)
	}
	if err != nil {
		return Operation{}, r.wrap(err, "get operation")
	}
	var op Operation
	if err := jsonUnmarshal(b, &op); err != nil {
		return Operation{}, err
	}
	if op.Tenant != tenant {
		return Operation{}, fmt.Errorf("operation %d: %w", n, ErrNotFound)
	}
	return op, nil
}

// updateOp: KEYS docs, running; ARGV n, new doc, new state final (0/1),
// cancel (0/1: set cancel_requested), retention ms. Keeps a recorded
// cancel request and the higher call count, and never leaves a final
// state. Returns the stored doc, or 0 when there is none.
var updateOp = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
local o = cjson.decode(old)
local final = {done=true, cancelled=true, failed=true}
if final[o.state] then return old end
local n
if ARGV[4] == '1' then
  if o.cancel_requested then return old end
  n = o
  n.cancel_requested = true
  n.updated = ARGV[6]
else
  n = cjson.decode(ARGV[2])
  if o.cancel_requested then n.cancel_requested = true end
  if (o.calls or 0) > (n.calls or 0) then n.calls = o.calls end
  n.created = o.created
end
local doc = cjson.encode(n)
redis.call('HSET', KEYS[1], ARGV[1], doc)
if ARGV[3] == '1' then redis.call('SREM', KEYS[2], ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return doc`)

func (r *Redis) runUpdate(ctx context.Context, tenant, scope string, n int, doc []byte, final, cancel bool) (Operation, error) {
	docs, running := r.opKeys(tenant, scope)
	b01 := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	v, err := updateOp.Run(ctx, r.rdb, []string{docs, running}, n, string(doc), b01(final), b01(cancel), r.ms(r.retention), now).Result()
	if err != nil {
		return Operation{}, r.wrap(err, "update operation")
	}
	s, ok := v.(string)
	if !ok {
		return Operation{}, fmt.Errorf("operation %d: %w", n, ErrNotFound)
	}
	var op Operation
	if err := jsonUnmarshal([]byte(s), &op); err != nil {
		return Operation{}, err
	}
	if op.Tenant != tenant {
		return Operation{}, fmt.Errorf("operation %d: %w", n, ErrNotFound)
	}
	return op, nil
}

func (r *Redis) UpdateOperation(ctx context.Context, op Operation) error {
	op.Updated = time.Now().UTC()
	doc, err := json.Marshal(op)
	if err != nil {
		return fmt.Errorf("session store: encode: %w", err)
	}
	_, err = r.runUpdate(ctx, op.Tenant, op.Scope, op.N, doc, op.Final(), false)
	return err
}

func (r *Redis) RequestCancel(ctx context.Context, tenant, scope string, n int) (Operation, error) {
	return r.runUpdate(ctx, tenant, scope, n, nil, false, true)
}
