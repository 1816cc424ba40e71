package cml

import (
	"fmt"
	"net/url"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/request"
)

// Template compiles a capability into a request template the host fills
// per call (see package request), or says why it cannot: reason is
// non-empty exactly when t is nil. A template is offered only where
// filling it is the compiler's own output for every call the filler
// accepts: plain HTTP reads and deletes with no body and no pagination,
// whose path variables and query parameters are plain variable references
// or constants, and whose headers do not depend on the call. Everything
// else (bodies, pagination, conditionals, formats, joins, compound scope
// keys, mutations with an input object) stays with Compile.
func Template(cat *catalog.Catalog, capability string) (t *request.Template, reason string) {
	if cat == nil {
		return nil, "no catalog"
	}
	cp := cat.Capabilities[capability]
	m := cat.Mappings[capability]
	switch {
	case cp == nil || m == nil:
		return nil, "no such capability or mapping"
	case cp.Unavailable != "":
		return nil, "not executable here"
	case cp.Kind == catalog.KindCreate || cp.Kind == catalog.KindUpdate || cp.Kind == catalog.KindAction:
		return nil, "the call's input object is built by the compiler"
	case m.Transport != "" && m.Transport != TransportHTTP:
		return nil, "transport " + m.Transport
	case m.Pagination != nil && Location(m) != LocQuery:
		return nil, "paginated outside the query string"
	case m.Body != nil:
		return nil, "has a body"
	case compoundScope(cat, cp):
		return nil, "a scope names a compound key"
	}
	c := &compiler{cat: cat, cp: cp, m: m, ev: newEvaluator(map[string]any{})}
	_, base, baseQuery, err := c.backend()
	if err != nil {
		return nil, "backend: " + err.Error()
	}
	t = &request.Template{Method: c.method(TransportHTTP), Base: base, BaseQuery: baseQuery, IDVar: m.IDVar}
	for _, seg := range m.Path {
		switch seg.Type {
		case "literal", "":
			if catalog.IsAbsoluteURL(seg.Value) {
				return nil, "an absolute URL in the path"
			}
			t.Path = append(t.Path, request.Segment{Lit: seg.Value})
		case "var":
			if seg.Name == "" {
				return nil, "unnamed path variable"
			}
			t.Path = append(t.Path, request.Segment{Var: seg.Name, Suffix: url.PathEscape(seg.Suffix)})
		default:
			return nil, "path segment type " + seg.Type
		}
	}
	if t.Query, reason = templateQuery(m.Query); reason != "" {
		return nil, reason
	}
	if m.Pagination != nil {
		t.Paginated = true
		if t.Paging, reason = templatePaging(m.Pagination); reason != "" {
			return nil, reason
		}
	}
	if !constant(m.Headers) {
		return nil, "headers depend on the call"
	}
	if t.Headers, err = c.headers(""); err != nil {
		return nil, "headers: " + err.Error()
	}
	if abs := c.absoluteLiteral(); abs == "" || c.atHome(abs) {
		if t.Auth, err = c.auth(); err != nil {
			return nil, "auth: " + err.Error()
		}
	}
	return t, ""
}

// templatePaging lists a query-located mapping's paging parameters in
// ParamNames order, with the values PageState forces.
func templatePaging(p *catalog.Pagination) ([]request.PageParam, string) {
	var out []request.PageParam
	for _, name := range ParamNames(p) {
		pp := p.Params[name]
		switch {
		case pp.Fixed != nil:
			text, ok, err := scalarText(pp.Fixed)
			if err != nil || !ok {
				return nil, fmt.Sprintf("paging parameter %q is not a scalar", name)
			}
			out = append(out, request.PageParam{Name: name, Kind: request.PageFixed, Value: pp.Fixed, Text: text})
		case pp.Counter != nil:
			out = append(out, request.PageParam{Name: name, Kind: request.PageCounter, Value: *pp.Counter})
		default:
			out = append(out, request.PageParam{Name: name, Kind: request.PageState})
		}
	}
	return out, ""
}

// compoundScope reports whether splatScope could rewrite a call of cp.
func compoundScope(cat *catalog.Catalog, cp *catalog.Capability) bool {
	for _, prm := range cp.Parameters {
		if prm.Role != catalog.RoleScope {
			continue
		}
		v := cat.Values[prm.ValueRef]
		if v == nil || v.Type != "entity_ref" {
			continue
		}
		if target := cat.Entities[v.Target]; target != nil && len(target.KeyVars) >= 2 {
			return true
		}
	}
	return false
}

// templateQuery turns a query expression into parameters: nil, or an
// object whose values are variables or scalar constants, each key once.
func templateQuery(e *catalog.Expr) ([]request.Param, string) {
	if e == nil {
		return nil, ""
	}
	if e.Type != catalog.ExprObject {
		return nil, "query is a " + e.Type + " expression"
	}
	seen := map[string]bool{}
	var out []request.Param
	for _, f := range e.Fields {
		if seen[f.Key] {
			return nil, fmt.Sprintf("query key %q repeats", f.Key)
		}
		seen[f.Key] = true
		switch {
		case f.Value == nil:
			continue // evaluates to null: the compiler skips the key
		case f.Value.Type == catalog.ExprVar && f.Value.Name != "":
			out = append(out, request.Param{Key: f.Key, Var: f.Value.Name})
		case optionalVar(f.Value) != "":
			out = append(out, request.Param{Key: f.Key, Var: optionalVar(f.Value)})
		case f.Value.Type == catalog.ExprConst:
			if f.Value.Value == nil {
				continue
			}
			s, ok, err := scalarText(f.Value.Value)
			if err != nil || !ok {
				return nil, fmt.Sprintf("query key %q is not a scalar constant", f.Key)
			}
			out = append(out, request.Param{Key: f.Key, Value: s})
		default:
			return nil, fmt.Sprintf("query key %q is a %s expression", f.Key, f.Value.Type)
		}
	}
	return out, ""
}

// optionalVar recognises Plasm's optional parameter, "if exists(x) then
// x else null", and returns x. It evaluates exactly as the plain variable
// does: null or absent either way, else the value, and a null value drops
// the key.
func optionalVar(e *catalog.Expr) string {
	if e.Type != catalog.ExprIf || e.Cond == nil || e.Cond.Exists == "" || e.Cond.Equals != nil || e.Cond.Bool != nil {
		return ""
	}
	th, el := e.Then, e.Else
	if th == nil || th.Type != catalog.ExprVar || th.Name != e.Cond.Exists {
		return ""
	}
	if el != nil && (el.Type != catalog.ExprConst || el.Value != nil) {
		return ""
	}
	return th.Name
}

// constant reports whether e evaluates without reading any variable, so
// evaluating it once with no variables is its value for every call.
func constant(e *catalog.Expr) bool {
	if e == nil {
		return true
	}
	switch e.Type {
	case catalog.ExprConst:
		return true
	case catalog.ExprObject:
		for _, f := range e.Fields {
			if !constant(f.Value) {
				return false
			}
		}
		return true
	case catalog.ExprArray:
		for _, it := range e.Items {
			if !constant(it) {
				return false
			}
		}
		return true
	}
	return false
}
