package cml

import (
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// splatScope spreads a scope parameter that references an entity with a
// compound key into that entity's key vars (Plasm's scope splat): with
// repository → Repository{key_vars: [owner, repo]}, repository="acme/tools"
// or {owner: acme, repo: tools} gives the mapping owner and repo. Key vars
// the call sets itself are kept. With scope_aggregate_key_policy
// omit_when_redundant the aggregate variable is then dropped. It works on a
// copy of req.
func splatScope(cat *catalog.Catalog, cp *catalog.Capability, req *abi.CompileRequest) (*abi.CompileRequest, *abi.Error) {
	var out *abi.CompileRequest
	for _, prm := range cp.Parameters {
		if prm.Role != catalog.RoleScope {
			continue
		}
		v := cat.Values[prm.ValueRef]
		if v == nil || v.Type != "entity_ref" {
			continue
		}
		target := cat.Entities[v.Target]
		if target == nil || len(target.KeyVars) < 2 {
			continue
		}
		val, ok := req.Vars[prm.Name]
		if !ok || val == nil {
			continue
		}
		keys, ok := compoundKeys(val, target)
		if !ok {
			return nil, &abi.Error{Code: abi.CodeCompile,
				Message: "compile " + cp.Name + ": scope " + prm.Name + " must name a " + target.Name + " by " + strings.Join(target.KeyVars, ", "),
				Hint:    `write it as "` + strings.Join(target.KeyVars, "/") + `" or as an object with those keys`}
		}
		if out == nil {
			cp := *req
			cp.Vars = make(map[string]any, len(req.Vars)+len(keys))
			for k, x := range req.Vars {
				cp.Vars[k] = x
			}
			out = &cp
		}
		for k, x := range keys {
			if _, set := out.Vars[k]; !set {
				out.Vars[k] = x
			}
		}
		if cp.ScopeAggregateKeyPolicy == "omit_when_redundant" {
			delete(out.Vars, prm.Name)
		}
	}
	if out == nil {
		return req, nil
	}
	return out, nil
}

// compoundKeys reads a compound reference: an object holding every key var,
// or, for two key vars, the string "a/b".
func compoundKeys(v any, target *catalog.Entity) (map[string]any, bool) {
	keys := map[string]any{}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range target.KeyVars {
			x, ok := t[k]
			if !ok || x == nil {
				return nil, false
			}
			keys[k] = x
		}
		return keys, true
	case string:
		if len(target.KeyVars) != 2 {
			return nil, false
		}
		a, b, ok := strings.Cut(t, "/")
		if !ok || a == "" || b == "" || strings.Contains(b, "/") {
			return nil, false
		}
		keys[target.KeyVars[0]], keys[target.KeyVars[1]] = a, b
		return keys, true
	}
	return nil, false
}

// withInput gives a mutation the variable "input": Plasm's whole input
// object, every argument of the call except the row's id, for mappings
// that send it as the body ({type: var, name: input}). A call that sets
// input itself keeps its value.
func withInput(cp *catalog.Capability, m *catalog.Mapping, req *abi.CompileRequest) *abi.CompileRequest {
	switch cp.Kind {
	case catalog.KindCreate, catalog.KindUpdate, catalog.KindAction:
	default:
		return req
	}
	if _, has := req.Vars["input"]; has || cp.Param("input") != nil {
		return req // the call's own input, or a parameter of that name
	}
	input := make(map[string]any, len(req.Vars))
	for k, v := range req.Vars {
		if k != "id" && k != m.IDVar {
			input[k] = v
		}
	}
	out := *req
	out.Vars = make(map[string]any, len(req.Vars)+1)
	for k, v := range req.Vars {
		out.Vars[k] = v
	}
	out.Vars["input"] = input
	return &out
}
