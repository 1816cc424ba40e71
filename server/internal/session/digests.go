package session

import (
	"context"
	"fmt"
)

// swapDigests: KEYS hash; ARGV field, value, field, value, … Returns the
// previous contents and replaces them, atomically.
const swapDigestsLua = `
local old = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return old`

// SwapDigests records what a starting replica serves under a name
// ("catalogs", "tenants": id → digest) and returns what the previous
// replica to start recorded, so the change can be announced to sessions on
// the replicas still running. The key is shared by every tenant, not
// tenant data.
func (r *Redis) SwapDigests(ctx context.Context, name string, cur map[string]string) (map[string]string, error) {
	args := make([]any, 0, 2*len(cur))
	for k, v := range cur {
		args = append(args, k, v)
	}
	res, err := r.rdb.Eval(ctx, swapDigestsLua, []string{"plasmd:deploy:" + name}, args...).StringSlice()
	if err != nil {
		return nil, r.wrap(err, "swap digests")
	}
	if len(res)%2 != 0 {
		return nil, fmt.Errorf("session store: swap digests: odd reply")
	}
	old := make(map[string]string, len(res)/2)
	for i := 0; i < len(res); i += 2 {
		old[res[i]] = res[i+1]
	}
	return old, nil
}
