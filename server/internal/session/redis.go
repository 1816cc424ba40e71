package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/guest/abi"
)

// ErrUnavailable: the shared store could not be reached; nothing was
// written. Callers answer 503 with Retry-After.
var ErrUnavailable = errors.New("session store unavailable")

// ErrTooLarge: a run artifact is over the shared store's size cap.
var ErrTooLarge = errors.New("run artifact too large for the session store")

// DefaultMaxRunBytes caps one stored run artifact in Redis.
const DefaultMaxRunBytes = 8 << 20

// Redis is the shared Store: any replica reads what another wrote, and a
// restart loses nothing. Every key is "plasmd:{tenant}:…": the hash tag
// keeps one tenant's keys in one Redis Cluster slot, so the multi-key
// scripts below work through a cluster client, and a key names its tenant,
// so a lookup for one tenant can never read another's value.
//
// Expiry is Redis's: execute sessions carry the idle TTL, refreshed by
// GetExecute; a "known" marker outlives them by a TTL so the first lookup
// after expiry says ErrExpired. Logical sessions, refs, counters, runs and
// pages live for retention (a multiple of the TTL) after their last write.
// Every write that touches several keys is one Lua script, so a failure
// leaves no partial state.
type Redis struct {
	rdb         redis.UniversalClient
	ttl         time.Duration
	retention   time.Duration
	maxRunBytes int
	onExpire    atomic.Pointer[func(Execute)]
	budgets     budgets // redis_budget.go
}

// NewRedis returns a store on rdb whose execute sessions expire after ttl
// without use (0 means 30 minutes).
func NewRedis(rdb redis.UniversalClient, ttl time.Duration) *Redis {
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	return &Redis{rdb: rdb, ttl: ttl, retention: 4 * ttl, maxRunBytes: DefaultMaxRunBytes}
}

// SetOnExpire sets the callback for execute sessions found expired.
func (r *Redis) SetOnExpire(f func(Execute)) { r.onExpire.Store(&f) }

// SetMaxRunBytes changes the run artifact cap (tests).
func (r *Redis) SetMaxRunBytes(n int) { r.maxRunBytes = n }

// Ping reports whether Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.wrap(r.rdb.Ping(ctx).Err(), "ping") }

func key(tenant string, parts ...string) string {
	return "plasmd:{" + tenant + "}:" + strings.Join(parts, ":")
}

func transportKey(transport string) string { return "plasmd:transport:" + transport }

// wrap maps Redis failures to ErrUnavailable (connection trouble) and
// leaves ErrNotFound-like results to callers.
func (r *Redis) wrap(err error, op string) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrExpired) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("session store %s: %w", op, err)
	}
	return fmt.Errorf("session store %s: %w (%v)", op, ErrUnavailable, err)
}

func (r *Redis) ms(d time.Duration) int64 { return d.Milliseconds() }

func intentKey(intent string) string {
	h := sha256.Sum256([]byte(intent))
	return hex.EncodeToString(h[:16])
}

// openLogical: KEYS pair, doc(new); ARGV P, new id, new doc, retention
// ms, logical budget, ledger ms. Returns the existing id (when its doc is
// still there), or creates the pair and the doc, books the new session
// and evicts the tenant's least recently used ones past its budget.
var openLogical = budgetScript(`
local id = redis.call('GET', KEYS[1])
if id and redis.call('EXISTS', P .. 'logical:' .. id) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return id
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
local now = nowMs()
purge(now, 64)
book('l', L_LOGICALS, ARGV[2], ARGV[4], now)
redis.call('HSET', L_META, 'l:' .. ARGV[2], KEYS[1])
evict(L_LOGICALS, tonumber(ARGV[5]), ARGV[2], dropLogical)
keepLedger(ARGV[6], L_LOGICALS, L_DUE)
return ARGV[2]`)

func (r *Redis) OpenLogical(ctx context.Context, tenant, intent string) (Logical, error) {
	l := Logical{ID: uuid.NewString(), Tenant: tenant, Intent: intent}
	doc, err := json.Marshal(l)
	if err != nil {
		return Logical{}, err
	}
	id, err := openLogical.Run(ctx, r.rdb, []string{key(tenant, "pair", intentKey(intent)), key(tenant, "logical", l.ID)},
		prefix(tenant), l.ID, doc, r.ms(r.retention), r.budget(tenant).Logicals, r.ledgerMs()).Text()
	if err != nil {
		return Logical{}, r.wrap(err, "open logical")
	}
	if id == l.ID {
		r.list(ctx, tenant)
		return l, nil
	}
	return r.GetLogical(ctx, tenant, id)
}

// touchLogicalDoc returns a logical session's doc, refreshing its expiry
// (and that of the tenant's keys in also) and its place in the budget's
// eviction order; redis.Nil when gone.
func (r *Redis) touchLogicalDoc(ctx context.Context, tenant, id string, also ...string) (string, error) {
	return touchLogicalScript.Run(ctx, r.rdb, append([]string{key(tenant, "logical", id)}, also...),
		prefix(tenant), id, r.ms(r.retention), r.ledgerMs()).Text()
}

func (r *Redis) GetLogical(ctx context.Context, tenant, id string) (Logical, error) {
	var l Logical
	b, err := r.touchLogicalDoc(ctx, tenant, id)
	if errors.Is(err, redis.Nil) {
		return l, fmt.Errorf("logical session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return l, r.wrap(err, "get logical")
	}
	if err := json.Unmarshal([]byte(b), &l); err != nil {
		return l, fmt.Errorf("session store: decode logical: %w", err)
	}
	return l, nil
}

func (r *Redis) BindLogical(ctx context.Context, tenant, id string, b Binding) error {
	l, err := r.GetLogical(ctx, tenant, id)
	if err != nil {
		return err
	}
	l.Binding = &b
	doc, err := json.Marshal(l)
	if err != nil {
		return err
	}
	// XX: a logical session that expired meanwhile stays gone.
	ok, err := r.rdb.SetXX(ctx, key(tenant, "logical", id), doc, r.retention).Result()
	if err != nil {
		return r.wrap(err, "bind logical")
	}
	if !ok {
		return fmt.Errorf("logical session %s: %w", id, ErrNotFound)
	}
	return nil
}

// refFor: KEYS refs hash, logical doc, transport index; ARGV logical id,
// tenant, retention ms, P, ledger ms. Mints s<next> once per (transport,
// logical id) and counts as use of the logical session.
var refFor = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
local owner = redis.call('GET', KEYS[3])
if owner and owner ~= ARGV[2] then return false end
local ref = redis.call('HGET', KEYS[1], 'id:' .. ARGV[1])
if not ref then
  local n = redis.call('HINCRBY', KEYS[1], 'next', 1) - 1
  ref = 's' .. n
  redis.call('HSET', KEYS[1], 'id:' .. ARGV[1], ref, 'ref:' .. ref, ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
local lz, meta = ARGV[4] .. 'budget:logicals', ARGV[4] .. 'budget:meta'
if redis.call('ZSCORE', lz, ARGV[1]) then
  redis.call('ZADD', lz, redis.call('HINCRBY', meta, 'seq', 1), ARGV[1])
  redis.call('PEXPIRE', lz, ARGV[5])
  redis.call('PEXPIRE', meta, ARGV[5])
end
return ref`)

func (r *Redis) RefFor(ctx context.Context, transport, tenant, logicalID string) (string, error) {
	ref, err := refFor.Run(ctx, r.rdb, []string{key(tenant, "refs", transport), key(tenant, "logical", logicalID), transportKey(transport)},
		logicalID, tenant, r.ms(r.retention), prefix(tenant), r.ledgerMs()).Text()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("logical session %s: %w", logicalID, ErrNotFound)
	}
	if err != nil {
		return "", r.wrap(err, "ref")
	}
	return ref, nil
}

func (r *Redis) ResolveRef(ctx context.Context, transport, tenant, ref string) (string, error) {
	id, err := r.rdb.HGet(ctx, key(tenant, "refs", transport), "ref:"+ref).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("logical_session_ref %q: %w", ref, ErrNotFound)
	}
	if err != nil {
		return "", r.wrap(err, "resolve ref")
	}
	// A ref outlives the session it names when a budget evicts it.
	if _, err := r.touchLogicalDoc(ctx, tenant, id, key(tenant, "refs", transport)); errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("logical_session_ref %q: %w", ref, ErrNotFound)
	} else if err != nil {
		return "", r.wrap(err, "resolve ref")
	}
	return id, nil
}

// touch refreshes retention of keys in use; best effort (a failure here
// only shortens their life).
func (r *Redis) touch(ctx context.Context, keys ...string) {
	pipe := r.rdb.Pipeline()
	for _, k := range keys {
		pipe.PExpire(ctx, k, r.retention)
	}
	_, _ = pipe.Exec(ctx)
}

func (r *Redis) ForgetTransport(ctx context.Context, transport string) error {
	tenant, err := r.rdb.Get(ctx, transportKey(transport)).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return r.wrap(err, "forget transport")
	}
	if err := r.rdb.Del(ctx, key(tenant, "refs", transport)).Err(); err != nil {
		return r.wrap(err, "forget transport")
	}
	return r.wrap(r.rdb.Del(ctx, transportKey(transport)).Err(), "forget transport")
}

// known is what outlives an execute session, so its owner's next lookup
// reads ErrExpired and OnExpire can name it.
type known struct {
	Tenant     string `json:"tenant"`
	PromptHash string `json:"prompt_hash"`
	ID         string `json:"id"`
	ReuseKey   string `json:"reuse_key"`
}

// putExecute: KEYS exec, known, reuse; ARGV P, doc, known doc, binding,
// ttl ms, known ms, ledger member, execute budget, ledger ms. Stores and
// books the session, and evicts the tenant's least recently used others
// past its budget (returned, for OnExpire).
var putExecute = budgetScript(`
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[5])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[6])
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
local now = nowMs()
purge(now, 64)
book('e', L_EXECS, ARGV[7], ARGV[5], now)
local gone = evict(L_EXECS, tonumber(ARGV[8]), ARGV[7], dropExec)
keepLedger(ARGV[9], L_EXECS, L_DUE)
return gone`)

func (r *Redis) execKeys(tenant, ph, id string) (string, string) {
	return key(tenant, "exec", ph, id), key(tenant, "known", ph, id)
}

func (r *Redis) PutExecute(ctx context.Context, e Execute) error {
	if e.LastUsed.IsZero() {
		e.LastUsed = time.Now().UTC()
	}
	doc, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("session store: encode: %w", err)
	}
	kn, _ := json.Marshal(known{Tenant: e.Tenant, PromptHash: e.PromptHash, ID: e.ID, ReuseKey: e.ReuseKey})
	ek, kk := r.execKeys(e.Tenant, e.PromptHash, e.ID)
	gone, err := putExecute.Run(ctx, r.rdb, []string{ek, kk, key(e.Tenant, "reuse", e.ReuseKey)},
		prefix(e.Tenant), doc, kn, e.PromptHash+"/"+e.ID, r.ms(r.ttl), r.ms(2*r.ttl),
		execMember(e.PromptHash, e.ID), r.budget(e.Tenant).Executes, r.ledgerMs()).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return r.wrap(err, "put execute")
	}
	r.list(ctx, e.Tenant)
	r.watchExpiry(ctx, e.Tenant, e.PromptHash, e.ID)
	r.reportEvicted(ctx, e.Tenant, gone)
	return nil
}

// getExecute: KEYS exec, known; ARGV P, ttl ms, known ms, ledger member,
// ledger ms. Returns the doc (refreshing both expiries and its place in
// the budget's eviction order), or {known} when only the marker is left
// (deleting it: "expired" is said once), or nil.
var getExecute = budgetScript(`
local v = redis.call('GET', KEYS[1])
if v then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('ZADD', L_EXECS, 'XX', order(), ARGV[4])
  keepLedger(ARGV[5], L_EXECS, L_DUE)
  return {1, v}
end
local k = redis.call('GET', KEYS[2])
if k then
  return {0, k}
end
return false`)

func (r *Redis) GetExecute(ctx context.Context, tenant, promptHash, id string) (Execute, error) {
	ek, kk := r.execKeys(tenant, promptHash, id)
	res, err := getExecute.Run(ctx, r.rdb, []string{ek, kk}, prefix(tenant), r.ms(r.ttl), r.ms(2*r.ttl),
		execMember(promptHash, id), r.ledgerMs()).Slice()
	if errors.Is(err, redis.Nil) {
		return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrNotFound)
	}
	if err != nil {
		return Execute{}, r.wrap(err, "get execute")
	}
	live, _ := res[0].(int64)
	body, _ := res[1].(string)
	if live == 0 {
		var k known
		if json.Unmarshal([]byte(body), &k) == nil {
			r.reportExpired(ctx, k.Tenant, k.PromptHash, k.ID)
		}
		return Execute{}, fmt.Errorf("execute session %s/%s: %w", promptHash, id, ErrExpired)
	}
	r.watchExpiry(ctx, tenant, promptHash, id)
	var e Execute
	if err := jsonUnmarshal([]byte(body), &e); err != nil {
		return Execute{}, err
	}
	e.LastUsed = time.Now().UTC()
	return e, nil
}

func (r *Redis) FindReusable(ctx context.Context, tenant, reuseKey string) (Execute, error) {
	b, err := r.rdb.Get(ctx, key(tenant, "reuse", reuseKey)).Result()
	if errors.Is(err, redis.Nil) {
		return Execute{}, fmt.Errorf("reusable execute session: %w", ErrNotFound)
	}
	if err != nil {
		return Execute{}, r.wrap(err, "find reusable")
	}
	ph, id, _ := strings.Cut(b, "/")
	e, err := r.GetExecute(ctx, tenant, ph, id)
	if err != nil {
		if errors.Is(err, ErrExpired) {
			return Execute{}, fmt.Errorf("reusable execute session: %w", ErrNotFound)
		}
		return Execute{}, err
	}
	if e.ReuseKey != reuseKey {
		return Execute{}, fmt.Errorf("reusable execute session: %w", ErrNotFound)
	}
	r.touch(ctx, key(tenant, "reuse", reuseKey))
	return e, nil
}

func (r *Redis) NextSeq(ctx context.Context, tenant, scope, counter string) (int, error) {
	k := key(tenant, "seq", scope)
	pipe := r.rdb.TxPipeline()
	n := pipe.HIncrBy(ctx, k, counter, 1)
	pipe.PExpire(ctx, k, r.retention)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, r.wrap(err, "next seq")
	}
	_, _ = r.touchLogicalDoc(ctx, tenant, scope) // best effort, as touch
	return int(n.Val()), nil
}

// putRun: KEYS doc, per-execute zset, per-scope index hash; ARGV P, doc,
// n, run id, ref "ph|sid|rid", retention ms, max runs per scope, size,
// scope, run byte budget, run count budget, ledger ms. Makes room under
// the tenant's budgets by evicting its oldest runs, stores the run,
// indexes and books it, and drops the scope's oldest beyond the per-scope
// cap (its document too, which shares the tenant's hash slot),
// atomically. Returns how many runs the budget evicted.
var putRun = budgetScript(`
local now = nowMs()
purge(now, 64)
local ref, n, size, scope = ARGV[5], ARGV[3], tonumber(ARGV[8]), ARGV[9]
unbook('r', ref) -- a run stored again is booked again, as the newest
local evicted = admitRun(size, tonumber(ARGV[10]), tonumber(ARGV[11]))
-- A different run under the same r/N would otherwise be unreachable by
-- index yet still counted.
local prev = redis.call('HGET', KEYS[3], n)
if prev and prev ~= ref then dropRun(prev) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[6])
redis.call('ZADD', KEYS[2], n, ARGV[4])
redis.call('HSET', KEYS[3], n, ref)
redis.call('HSET', L_META, 'r:' .. ref, size .. '|' .. scope .. '|' .. n)
redis.call('HINCRBY', L_META, 'bytes', size)
book('r', L_RUNS, ref, ARGV[6], now)
if redis.call('HLEN', KEYS[3]) > tonumber(ARGV[7]) then
  local lo = nil
  for _, f in ipairs(redis.call('HKEYS', KEYS[3])) do
    local v = tonumber(f)
    if lo == nil or v < lo then lo = v end
  end
  local old = redis.call('HGET', KEYS[3], tostring(lo))
  redis.call('HDEL', KEYS[3], tostring(lo))
  if old then dropRun(old) end
end
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
touchLogical(scope, ARGV[6])
keepLedger(ARGV[12], L_RUNS, L_DUE, L_LOGICALS)
return evicted`)

func runKeyOf(tenant, ph, sid, runID string) string { return key(tenant, "run", ph, sid, runID) }

func (r *Redis) PutRun(ctx context.Context, run Run) error {
	doc, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("session store: encode: %w", err)
	}
	bud := r.budget(run.Tenant)
	if int64(len(doc)) > bud.RunBytes {
		return quotaErr(len(doc), bud)
	}
	if len(doc) > r.maxRunBytes {
		return fmt.Errorf("run %s is %d bytes, cap %d: %w", run.RunID, len(doc), r.maxRunBytes, ErrTooLarge)
	}
	scope := runScope(&run)
	err = putRun.Run(ctx, r.rdb,
		[]string{runKeyOf(run.Tenant, run.PromptHash, run.SessionID, run.RunID), key(run.Tenant, "runs", run.PromptHash, run.SessionID), key(run.Tenant, "runidx", scope)},
		prefix(run.Tenant), doc, run.N, run.RunID, run.PromptHash+"|"+run.SessionID+"|"+run.RunID, r.ms(r.retention), MaxRunsPerScope,
		len(doc), scope, bud.RunBytes, bud.Runs, r.ledgerMs()).Err()
	if err != nil {
		return r.wrap(err, "put run")
	}
	r.list(ctx, run.Tenant)
	return nil
}

func (r *Redis) getRunDoc(ctx context.Context, k, what string) (Run, error) {
	b, err := r.rdb.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return Run{}, fmt.Errorf("run %s: %w", what, ErrNotFound)
	}
	if err != nil {
		return Run{}, r.wrap(err, "get run")
	}
	var run Run
	if err := jsonUnmarshal(b, &run); err != nil {
		return Run{}, err
	}
	return run, nil
}

func (r *Redis) GetRun(ctx context.Context, tenant, promptHash, sessionID, runID string) (Run, error) {
	run, err := r.getRunDoc(ctx, runKeyOf(tenant, promptHash, sessionID, runID), runID)
	if err == nil && run.Tenant != tenant {
		return Run{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	return run, err
}

func (r *Redis) GetRunByIndex(ctx context.Context, tenant, scope string, n int) (Run, error) {
	ref, err := r.rdb.HGet(ctx, key(tenant, "runidx", scope), strconv.Itoa(n)).Result()
	if errors.Is(err, redis.Nil) {
		return Run{}, fmt.Errorf("run r/%d: %w", n, ErrNotFound)
	}
	if err != nil {
		return Run{}, r.wrap(err, "get run")
	}
	parts := strings.SplitN(ref, "|", 3)
	if len(parts) != 3 {
		return Run{}, fmt.Errorf("run r/%d: %w", n, ErrNotFound)
	}
	return r.GetRun(ctx, tenant, parts[0], parts[1], parts[2])
}

func (r *Redis) ListRuns(ctx context.Context, tenant, promptHash, sessionID string) ([]Run, error) {
	ids, err := r.rdb.ZRange(ctx, key(tenant, "runs", promptHash, sessionID), 0, -1).Result()
	if err != nil {
		return nil, r.wrap(err, "list runs")
	}
	var out []Run
	for _, id := range ids {
		run, err := r.GetRun(ctx, tenant, promptHash, sessionID, id)
		if errors.Is(err, ErrNotFound) {
			continue // evicted or expired
		}
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

// putPage: KEYS hash; ARGV P, n, doc, retention ms, max pages per scope,
// scope, page budget, ledger ms. Stores and books the page, drops the
// scope's page beyond the per-scope cap and evicts the tenant's oldest
// pages past its budget.
var putPage = budgetScript(`
local now = nowMs()
purge(now, 64)
local scope, n = ARGV[6], ARGV[2]
redis.call('HSET', KEYS[1], n, ARGV[3])
local old = tonumber(n) - tonumber(ARGV[5])
if old > 0 then dropPage(scope .. SEP .. string.format('%d', old)) end
local m = scope .. SEP .. n
if not redis.call('ZSCORE', L_PAGES, m) then redis.call('ZADD', L_PAGES, order(), m) end
redis.call('ZADD', L_DUE, now + tonumber(ARGV[4]), 'p' .. m)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local gone = evict(L_PAGES, tonumber(ARGV[7]), nil, dropPage)
touchLogical(scope, ARGV[4])
keepLedger(ARGV[8], L_PAGES, L_DUE, L_LOGICALS)
return #gone`)

func (r *Redis) PutPage(ctx context.Context, p Page) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("session store: encode: %w", err)
	}
	err = putPage.Run(ctx, r.rdb, []string{key(p.Tenant, "pages", p.Scope)}, prefix(p.Tenant), p.N, doc, r.ms(r.retention),
		MaxPagesPerScope, p.Scope, r.budget(p.Tenant).Pages, r.ledgerMs()).Err()
	if err != nil {
		return r.wrap(err, "put page")
	}
	r.list(ctx, p.Tenant)
	return nil
}

func (r *Redis) GetPage(ctx context.Context, tenant, scope string, n int) (Page, error) {
	b, err := r.rdb.HGet(ctx, key(tenant, "pages", scope), strconv.Itoa(n)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Page{}, fmt.Errorf("paging handle %d: %w", n, ErrNotFound)
	}
	if err != nil {
		return Page{}, r.wrap(err, "get page")
	}
	var p Page
	if err := jsonUnmarshal(b, &p); err != nil {
		return Page{}, err
	}
	if p.Tenant != tenant {
		return Page{}, fmt.Errorf("paging handle %d: %w", n, ErrNotFound)
	}
	return p, nil
}

// jsonUnmarshal decodes stored JSON keeping numbers' text (json.Number),
// as clone does for the memory store.
func jsonUnmarshal(b []byte, v any) error {
	if err := abi.Unmarshal(b, v); err != nil {
		return fmt.Errorf("session store: decode: %w", err)
	}
	return nil
}
