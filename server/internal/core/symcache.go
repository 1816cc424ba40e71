package core

import (
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/session"
)

// symbolCacheSize bounds encoded symbol maps kept across all tenants. An
// encoded map is a few KiB to a few tens of KiB; the bound is a few MiB.
const symbolCacheSize = 512

// symbolCache keeps each execute session's symbol map encoded, with its
// digest, per symbol revision. Before it, every plan request marshalled
// and hashed the session's whole map even when the guest already held the
// decoded map under that digest. A session's map changes only with its
// revision (every wave that adds symbols bumps DomainRevision, see
// extendLocked), so (tenant, session, revision) names one map; the plan
// cache relies on the same rule.
type symbolCache struct{ entries *lru[*sandbox.Symbols] }

func newSymbolCache(max int) *symbolCache {
	return &symbolCache{entries: newLRU[*sandbox.Symbols](max)}
}

// symbolKey is length-prefixed like planKey, so no two inputs collide.
// Besides the revision it carries the map's section sizes and the prompt's
// length: replicas sharing a session store take the per-session lock each
// in its own process, so two concurrent waves there could both write the
// same revision with different maps, and these cheap figures tell such
// maps apart in all but the rarest case.
func symbolKey(tenant string, ex *session.Execute) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(tenant)) + ":" + tenant + strconv.Itoa(len(ex.ID)) + ":" + ex.ID)
	m := &ex.Symbols
	for _, n := range []int{ex.DomainRevision, len(m.Entities), len(m.Methods), len(m.Slots), len(m.Relations), len(m.Values), len(ex.Prompt)} {
		b.WriteString(strconv.Itoa(n))
		b.WriteByte('.')
	}
	return b.String()
}

// get returns ex's encoded map, encoding it on the first request for this
// revision. Two callers racing on a miss both encode; the maps are equal.
func (c *symbolCache) get(tenant string, ex *session.Execute) (*sandbox.Symbols, error) {
	key := symbolKey(tenant, ex)
	if sym, ok := c.entries.get(key); ok {
		return sym, nil
	}
	sym, err := sandbox.EncodeSymbols(&ex.Symbols)
	if err != nil {
		return nil, err
	}
	c.entries.put(key, sym)
	return sym, nil
}
