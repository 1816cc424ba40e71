package lang

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// readCall plans Plasm's method-call sugar for a list read,
// Issue.search(q="auth", team_key="ENG"): the named query or search
// capability with its arguments as parameters, the same read as
// Issue{q="auth", team_key="ENG"} would be when that capability is the one
// chosen. Only parameters of the capability may be named, so a misspelt
// argument is refused rather than turned into a host filter.
func (p *planner) readCall(c *cur, x ent, mc *catalog.Capability, st *step) *abi.Error {
	preds := make([]pred, 0, len(st.args))
	var names []string
	for _, pr := range mc.Parameters {
		names = append(names, pr.Name)
	}
	for _, a := range st.args {
		if mc.Param(a.key.text) == nil {
			return errAt(a.key.p, abi.CodeUnknownField, catalog.MethodLabel(mc)+" has no parameter "+a.key.raw, listHint(a.key.text, "parameters", names))
		}
		preds = append(preds, pred{p: a.key.p, field: a.key, op: "=", val: a.val})
	}
	return p.readWith(c, x, []*catalog.Capability{mc}, preds, nil, st.p)
}

// unavailableMethod finds a capability of x named label (its method label
// or name) that the catalog declares but plasmd cannot run, so a call to
// it is refused with the reason rather than as a method that does not
// exist (Linear's Issue.create, which needs a query_pick preflight).
func unavailableMethod(x ent, label string) *catalog.Capability {
	var found *catalog.Capability
	for _, cp := range x.cat.Capabilities {
		if cp.Entity != x.name || cp.Unavailable == "" || (catalog.MethodLabel(cp) != label && cp.Name != label) {
			continue
		}
		if found == nil || cp.Name < found.Name {
			found = cp
		}
	}
	return found
}
