package core

import (
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// planCache remembers plans by everything a plan is a function of: the
// tenant, the execute session and its symbol revision (symbol maps only
// grow, and every wave bumps the revision), the digests of the catalogs the
// program may use, the engine, and the program text. Planning is the most
// expensive guest call per run; an agent repeating a program (paging, a
// poll, a retry) then costs a map lookup and a decode.
//
// A plan is stored as its JSON round trip decodes it (the values a fresh
// plan from the guest has) and every hit gets a deep copy, so no two runs
// share a plan value the executor might change; copying is several times
// cheaper than decoding the JSON again per hit. The key names the tenant,
// so one tenant's entry can never answer another's program.
type planCache struct{ entries *lru[*plan.Plan] }

func newPlanCache(max int) *planCache { return &planCache{entries: newLRU[*plan.Plan](max)} }

// planKey builds the cache key. Parts are length-prefixed so no two
// different inputs can produce the same key.
func planKey(tenant, session string, revision int, engine string, digests []string, program string) string {
	var b strings.Builder
	part := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	part(tenant)
	part(session)
	part(strconv.Itoa(revision))
	part(engine)
	for _, d := range digests {
		part(d)
	}
	part(program)
	return b.String()
}

// get returns a fresh copy of the cached plan for key, if any.
func (c *planCache) get(key string) (*plan.Plan, bool) {
	p, ok := c.entries.get(key)
	if !ok {
		return nil, false
	}
	return deepCopy(p), true
}

// put stores p under key, evicting the least recently used plan when full.
// It stores p's JSON round trip, never p itself, which the caller keeps.
//
// The round trip goes through the plan's binary wire form, which decodes
// to exactly the values the JSON round trip gives (plantest.WireRoundTrip)
// in about a tenth of the time; a plan that form declines goes through
// JSON.
func (c *planCache) put(key string, p *plan.Plan) {
	if b, err := p.AppendBinary(nil); err == nil {
		if stored, err := plan.DecodeBinary(b); err == nil {
			c.entries.put(key, stored)
		}
		return // only our own encoder wrote it; not caching is always safe
	}
	var stored plan.Plan
	if err := abi.Unmarshal(p.AppendJSON(nil), &stored); err != nil {
		return
	}
	c.entries.put(key, &stored)
}
