package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Per-tenant budgets in Redis (see Budget). The books are shared by every
// replica, so two replicas of one tenant stay under one budget: each
// tenant has ledger keys under its own hash tag, "plasmd:{tenant}:budget:…",
// and every write that books or evicts state is one Lua script, so the
// ledger and the state it counts change together.
//
//	meta      hash: "seq", a counter giving every booking and every use
//	          an order; "bytes", the sum of the stored runs' sizes;
//	          "r:"+ref → "size|scope|n" per run; "l:"+id → the logical
//	          session's (tenant, intent) key
//	runs      zset ref "ph|sid|rid" → order (oldest stored first)
//	pages     zset "scope␟n" → order
//	execs     zset "ph␟id" → order of last use
//	logicals  zset id → order of last use
//	due       zset kind+member → deadline (ms): when Redis may have
//	          expired the object by itself
//
// Redis expires state by TTL without telling anyone, so each booking also
// has a deadline in "due"; any later script of the tenant (and Usage)
// first looks at the bookings past their deadline and unbooks those whose
// object is gone, or moves the deadline to the object's current expiry.
// Each script refreshes the ledger keys it writes (always meta) to twice
// the retention, so they outlive everything they count: an object is kept
// alive only by scripts that also refresh the keys booking it.
//
// The set plasmd:tenants (tenant names only) lists the tenants that have
// books, for Usage.
const tenantsKey = "plasmd:tenants"

// budgetLua is the prelude of every script that books: P (ARGV[1]) is the
// tenant's key prefix "plasmd:{tenant}:".
const budgetLua = `
local P = ARGV[1]
local SEP = '\31'
local L_META, L_DUE = P .. 'budget:meta', P .. 'budget:due'
local L_RUNS, L_PAGES = P .. 'budget:runs', P .. 'budget:pages'
local L_EXECS, L_LOGICALS = P .. 'budget:execs', P .. 'budget:logicals'

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function order() return redis.call('HINCRBY', L_META, 'seq', 1) end
local function split2(m) return string.match(m, '^(.-)\31(.*)$') end
local function runKeys(ref)
  local ph, sid, rid = string.match(ref, '^([^|]*)|([^|]*)|(.*)$')
  if not rid then return nil end
  return P .. 'run:' .. ph .. ':' .. sid .. ':' .. rid, P .. 'runs:' .. ph .. ':' .. sid, rid
end

-- liveKey names the key (and hash field) holding a booked object.
local function liveKey(kind, m)
  if kind == 'r' then return (runKeys(m)) end
  if kind == 'l' then return P .. 'logical:' .. m end
  local a, b = split2(m)
  if not b then return nil end
  if kind == 'e' then return P .. 'exec:' .. a .. ':' .. b end
  if kind == 'p' then return P .. 'pages:' .. a, b end
  return nil
end

local function unbook(kind, m)
  redis.call('ZREM', L_DUE, kind .. m)
  if kind == 'r' then
    local info = redis.call('HGET', L_META, 'r:' .. m)
    if info then
      redis.call('HINCRBY', L_META, 'bytes', -tonumber(string.match(info, '^(%d+)')))
      redis.call('HDEL', L_META, 'r:' .. m)
    end
    redis.call('ZREM', L_RUNS, m)
  elseif kind == 'p' then redis.call('ZREM', L_PAGES, m)
  elseif kind == 'e' then redis.call('ZREM', L_EXECS, m)
  elseif kind == 'l' then
    redis.call('ZREM', L_LOGICALS, m)
    redis.call('HDEL', L_META, 'l:' .. m)
  end
end

-- purge unbooks up to limit bookings past their deadline whose object
-- Redis expired; a live one gets its current expiry as next deadline.
local function purge(now, limit)
  local due = redis.call('ZRANGEBYSCORE', L_DUE, '-inf', now, 'LIMIT', 0, limit)
  for _, d in ipairs(due) do
    local kind, m = string.sub(d, 1, 1), string.sub(d, 2)
    local k, field = liveKey(kind, m)
    local live = false
    if k and field then live = redis.call('HEXISTS', k, field) == 1
    elseif k then live = redis.call('EXISTS', k) == 1 end
    if live then
      local ttl = redis.call('PTTL', k)
      if ttl < 0 then ttl = 3600000 end
      redis.call('ZADD', L_DUE, now + ttl + 1, d)
    else
      unbook(kind, m)
    end
  end
  return #due
end

local function book(kind, zset, m, ttl, now)
  redis.call('ZADD', zset, order(), m)
  redis.call('ZADD', L_DUE, now + tonumber(ttl), kind .. m)
end

-- dropRun deletes a stored run with its index entries, and unbooks it.
local function dropRun(ref)
  local info = redis.call('HGET', L_META, 'r:' .. ref)
  if info then
    local scope, n = string.match(info, '^%d+|(.*)|(%-?%d+)$')
    if n and redis.call('HGET', P .. 'runidx:' .. scope, n) == ref then
      redis.call('HDEL', P .. 'runidx:' .. scope, n)
    end
  end
  local doc, list, rid = runKeys(ref)
  if doc then
    redis.call('DEL', doc)
    redis.call('ZREM', list, rid)
  end
  unbook('r', ref)
end

local function dropPage(m)
  local scope, n = split2(m)
  if n then redis.call('HDEL', P .. 'pages:' .. scope, n) end
  unbook('p', m)
end

-- dropLogical removes a logical session with its pair, runs, pages and
-- counters, as the idle sweep of the memory store does.
local function dropLogical(id)
  local pair = redis.call('HGET', L_META, 'l:' .. id)
  if pair and redis.call('GET', pair) == id then redis.call('DEL', pair) end
  redis.call('DEL', P .. 'logical:' .. id)
  local idx = P .. 'runidx:' .. id
  for _, ref in ipairs(redis.call('HVALS', idx)) do dropRun(ref) end
  redis.call('DEL', idx)
  local pk = P .. 'pages:' .. id
  for _, n in ipairs(redis.call('HKEYS', pk)) do unbook('p', id .. SEP .. n) end
  redis.call('DEL', pk, P .. 'seq:' .. id)
  unbook('l', id)
end

local function dropExec(m)
  local ph, id = split2(m)
  -- The "known" marker stays: the owner's next lookup reads expired.
  if id then redis.call('DEL', P .. 'exec:' .. ph .. ':' .. id) end
  unbook('e', m)
end

-- evict drops the oldest members of zset while it holds more than max,
-- never spare; it returns what it dropped.
local function evict(zset, max, spare, drop)
  local out = {}
  while redis.call('ZCARD', zset) > max do
    local two = redis.call('ZRANGE', zset, 0, 1)
    local victim = two[1]
    if victim == spare then victim = two[2] end
    if not victim then break end
    drop(victim)
    out[#out + 1] = victim
  end
  return out
end

-- admitRun evicts the oldest runs until one of size bytes fits.
local function admitRun(size, maxBytes, maxRuns)
  local n = 0
  while redis.call('ZCARD', L_RUNS) > 0 do
    local bytes = tonumber(redis.call('HGET', L_META, 'bytes') or '0')
    if bytes + size <= maxBytes and redis.call('ZCARD', L_RUNS) < maxRuns then break end
    dropRun(redis.call('ZRANGE', L_RUNS, 0, 0)[1])
    n = n + 1
  end
  return n
end

-- touchLogical counts activity in a scope as use of the logical session
-- it names, if it names one.
local function touchLogical(id, ms)
  if redis.call('PEXPIRE', P .. 'logical:' .. id, ms) == 1 then
    redis.call('ZADD', L_LOGICALS, 'XX', order(), id)
  end
end

-- keepLedger refreshes meta and the ledger keys a script wrote.
local function keepLedger(ms, ...)
  redis.call('PEXPIRE', L_META, ms)
  for _, k in ipairs({...}) do redis.call('PEXPIRE', k, ms) end
end
`

func budgetScript(body string) *redis.Script { return redis.NewScript(budgetLua + body) }

// usageScript: ARGV P. Purges, then returns {run bytes, runs, pages,
// executes, logicals}.
var usageScript = budgetScript(`
local now = nowMs()
for _ = 1, 16 do
  if purge(now, 256) < 256 then break end
end
return {tonumber(redis.call('HGET', L_META, 'bytes') or '0'), redis.call('ZCARD', L_RUNS), redis.call('ZCARD', L_PAGES),
  redis.call('ZCARD', L_EXECS), redis.call('ZCARD', L_LOGICALS)}`)

// touchLogicalScript: KEYS logical doc, then keys to refresh with it;
// ARGV P, id, retention ms, ledger ms. Returns the doc (refreshing it, the
// other keys and its place in the eviction order), or nil.
var touchLogicalScript = budgetScript(`
local v = redis.call('GET', KEYS[1])
if v then
  touchLogical(ARGV[2], ARGV[3])
  for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
  keepLedger(ARGV[4], L_LOGICALS, L_DUE)
end
return v`)

// budgets holds the budget lookup and which tenants this process has
// listed in tenantsKey lately.
type budgets struct {
	mu        sync.Mutex
	budgetFor func(tenant string) Budget
	listed    map[string]time.Time
}

// relist is how often a process re-adds a tenant it writes for to
// tenantsKey (the set survives a Redis restart only through these).
const relist = time.Minute

// SetBudgets implements Budgeter.
func (r *Redis) SetBudgets(budgetFor func(tenant string) Budget) {
	r.budgets.mu.Lock()
	defer r.budgets.mu.Unlock()
	r.budgets.budgetFor = budgetFor
}

func (r *Redis) budget(tenant string) Budget {
	r.budgets.mu.Lock()
	f := r.budgets.budgetFor
	r.budgets.mu.Unlock()
	if f == nil {
		return DefaultBudget()
	}
	return f(tenant).Over(DefaultBudget())
}

// prefix is the start of every key of tenant's, the scripts' ARGV[1].
func prefix(tenant string) string { return key(tenant) }

// ledgerMs is how long the ledger keys live after a use.
func (r *Redis) ledgerMs() int64 { return r.ms(2 * r.retention) }

// list records that tenant has books, at most once per relist per
// process; best effort (a failure only hides the tenant from /metrics
// until its next write).
func (r *Redis) list(ctx context.Context, tenant string) {
	r.budgets.mu.Lock()
	if r.budgets.listed == nil {
		r.budgets.listed = map[string]time.Time{}
	}
	at, ok := r.budgets.listed[tenant]
	r.budgets.mu.Unlock()
	if ok && time.Since(at) < relist {
		return
	}
	if r.rdb.SAdd(ctx, tenantsKey, tenant).Err() == nil {
		r.budgets.mu.Lock()
		r.budgets.listed[tenant] = time.Now()
		r.budgets.mu.Unlock()
	}
}

// Usage implements Budgeter: every listed tenant's use, shared by all
// replicas, after unbooking what Redis expired. Tenants using nothing are
// left out; on a Redis failure the answer is what was read before it.
func (r *Redis) Usage() map[string]Usage {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[string]Usage{}
	tenants, err := r.rdb.SMembers(ctx, tenantsKey).Result()
	if err != nil {
		return out
	}
	if len(tenants) == 0 || usageScript.Load(ctx, r.rdb).Err() != nil {
		return out
	}
	// One round trip for all tenants (the script is loaded just above).
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(tenants))
	for i, t := range tenants {
		cmds[i] = usageScript.EvalSha(ctx, pipe, []string{key(t, "budget", "meta")}, prefix(t))
	}
	_, _ = pipe.Exec(ctx)
	for i, t := range tenants {
		v, err := cmds[i].Int64Slice()
		if err != nil || len(v) != 5 {
			continue
		}
		u := Usage{RunBytes: v[0], Runs: int(v[1]), Pages: int(v[2]), Executes: int(v[3]), Logicals: int(v[4])}
		if u != (Usage{}) {
			out[t] = u
		}
	}
	return out
}

// quotaErr is the memory store's ErrQuota for a run over the whole budget.
func quotaErr(size int, b Budget) error {
	return fmt.Errorf("%w: a run of %d bytes is larger than the tenant's run budget (%d bytes); narrow the program (.limit, projection)", ErrQuota, size, b.RunBytes)
}

// execMember names an execute session in the ledger.
func execMember(promptHash, id string) string { return promptHash + expirySep + id }

// reportEvicted tells OnExpire about execute sessions a budget evicted
// (members "ph␟id"), once across replicas as for an idle expiry.
func (r *Redis) reportEvicted(ctx context.Context, tenant string, members []string) {
	for _, m := range members {
		if ph, id, ok := strings.Cut(m, expirySep); ok {
			r.reportExpired(ctx, tenant, ph, id)
		}
	}
}

var _ Budgeter = (*Redis)(nil)
