package catalogdir

import (
	"slices"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Plasm's CML built-ins that build a Gmail RFC 5322 message body.
const (
	exprGmailSend  = "gmail_rfc5322_send_body"
	exprGmailReply = "gmail_rfc5322_reply_send_body"
)

// Plasm's tagged condition form: {type: exists, var: x},
// {type: equals, left, right}, {type: bool, expr}.
var taggedCondKeys = map[string][]string{
	"exists": {"type", "var"},
	"equals": {"type", "left", "right"},
	"bool":   {"type", "expr"},
}

// foreignTransports are the mapping transports plasmd loads but cannot run:
// what each needs, for the "not executable here" reason.
var foreignTransports = map[string]string{
	"evm_call": "transport evm_call needs an EVM chain client",
	"evm_logs": "transport evm_logs needs an EVM chain client",
}

// unavailable marks a capability as loaded but not executable here, once
// capabilities are known. Reasons accumulate.
func (l *loader) unavailable(name, why string) {
	l.later(func() {
		cp := l.cat.Capabilities[name]
		if cp == nil {
			return
		}
		if cp.Unavailable != "" {
			cp.Unavailable += "; " + why
			return
		}
		cp.Unavailable = why
	})
}

// foreignMapping reads a mapping whose transport plasmd does not execute.
// Its keys are the transport's own; only the view reference is checked.
func (l *loader) foreignMapping(p *parser, o *object, m *catalog.Mapping) bool {
	name := o.at.Value
	if m.Transport == "view" {
		l.viewMapping(p, o, name)
		return true
	}
	why, ok := foreignTransports[m.Transport]
	if !ok {
		return false
	}
	l.unavailable(name, why)
	return true
}

// viewMapping reads a transport: view mapping: the capability is served by
// the named view (run on the host, see views.go).
func (l *loader) viewMapping(p *parser, o *object, name string) {
	o.check([]string{"transport", "view"}, "for transport view")
	view := o.name("view")
	vn := o.val("view")
	l.later(func() {
		if view == "" {
			return
		}
		v := l.cat.Views[view]
		cp := l.cat.Capabilities[name]
		switch {
		case v == nil:
			names := keysOf(l.cat.Views)
			p.errorf(vn, "%s: %s", o.sub("view"), p.unknownRefOf("view", view, "", names))
		case cp == nil:
		case v.Entity != "" && cp.Entity != v.Entity:
			p.errorf(vn, "%s: view %q builds %s rows, but capability %s is on %s", o.sub("view"), view, v.Entity, name, cp.Entity)
		case !cp.IsRead() || cp.Kind == catalog.KindSingleton:
			p.errorf(vn, "%s: capability %s is a %s; a view serves a query, search or get", o.sub("view"), name, cp.Kind)
		default:
			v.Serves = append(v.Serves, name)
			sort.Strings(v.Serves)
		}
	})
}

// singleIDVar returns the path variable Plasm binds a single-row
// capability's id to when the path has no id: its only path variable
// (/zones/{zone_id}, even when zone_id is also a parameter), or else its
// only variable that is neither a parameter nor a key var.
func singleIDVar(m *catalog.Mapping, params, keyVars map[string]bool) string {
	var all, free []string
	for _, seg := range m.Path {
		if seg.Type != "var" || seg.Name == "" || slices.Contains(all, seg.Name) {
			continue
		}
		if seg.Name == "id" {
			return ""
		}
		all = append(all, seg.Name)
		if !params[seg.Name] && !keyVars[seg.Name] {
			free = append(free, seg.Name)
		}
	}
	switch {
	case len(all) == 1:
		return all[0]
	case len(free) == 1:
		return free[0]
	}
	return ""
}

// splatVars lists the key vars of the entities that cp's entity_ref
// parameters reference, when those have compound keys.
func (l *loader) splatVars(cp *catalog.Capability) []string {
	var out []string
	for _, prm := range cp.Parameters {
		if prm.Role != catalog.RoleScope {
			continue
		}
		v := l.cat.Values[prm.ValueRef]
		if v == nil || v.Type != "entity_ref" {
			continue
		}
		if t := l.cat.Entities[v.Target]; t != nil && len(t.KeyVars) > 1 {
			out = append(out, t.KeyVars...)
		}
	}
	return out
}

func hasKey(n *yaml.Node, k string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == k {
			return true
		}
	}
	return false
}

// taggedCond reads Plasm's condition form, tagged by type, into the same
// model as plasmd's one-key form.
func (p *parser) taggedCond(ctx string, at, n *yaml.Node, depth int) *catalog.Cond {
	o := p.object(ctx, at, n, nil)
	if o == nil {
		return nil
	}
	o.strict = true
	t := o.oneOf("type", []string{"exists", "equals", "bool"})
	if t == "" {
		return nil
	}
	o.check(taggedCondKeys[t], "for type "+t)
	c := &catalog.Cond{}
	switch t {
	case "exists":
		c.Exists = o.name("var")
	case "equals":
		c.Equals = &catalog.EqualsCond{}
		for _, side := range []string{"left", "right"} {
			sn := o.val(side)
			if sn == nil {
				o.missing(side)
				continue
			}
			x := p.expr(o.sub(side), o.key(side), sn, depth+1)
			if side == "left" {
				c.Equals.Left = x
			} else {
				c.Equals.Right = x
			}
		}
	case "bool":
		xn := o.val("expr")
		if xn == nil {
			o.missing("expr")
			return c
		}
		c.Bool = p.expr(o.sub("expr"), o.key("expr"), xn, depth+1)
	}
	return c
}

// preprocessKeys lists the keys of each response_preprocess kind.
var preprocessKeys = map[string][]string{
	catalog.PreArrayFindPluck:     {"kind", "path", "id_field", "id_var", "nested_array"},
	catalog.PreConcatFieldArrays:  {"kind", "path", "from_each"},
	catalog.PreStringIDsToObjects: {"kind", "path", "field"},
}

// preprocess reads Plasm's response_preprocess rule.
func (p *parser) preprocess(ctx string, at, n *yaml.Node) *catalog.Preprocess {
	o := p.object(ctx, at, n, nil)
	if o == nil {
		return nil
	}
	pp := &catalog.Preprocess{Kind: o.oneOf("kind", []string{catalog.PreArrayFindPluck, catalog.PreConcatFieldArrays, catalog.PreStringIDsToObjects})}
	if pp.Kind == "" {
		return nil
	}
	o.check(preprocessKeys[pp.Kind], "for kind "+pp.Kind)
	if pn := o.val("path"); pn == nil {
		o.missing("path")
	} else {
		pp.Path = p.strList(o.sub("path"), pn)
	}
	switch pp.Kind {
	case catalog.PreArrayFindPluck:
		pp.IDField, pp.IDVar, pp.NestedArray = o.name("id_field"), o.name("id_var"), o.name("nested_array")
	case catalog.PreConcatFieldArrays:
		pp.FromEach = o.name("from_each")
	case catalog.PreStringIDsToObjects:
		pp.Field = o.name("field")
	}
	p.preprocessBounds(o, pp)
	return pp
}

// plasmVars are the variables Plasm's forms add to a capability's
// environment: "input" (the call's whole input object), the key vars a
// compound scope spreads into, and <prefix>_<field> for each field a
// preflight reads.
func (l *loader) plasmVars(cp *catalog.Capability) []string {
	out := append([]string{"input"}, l.splatVars(cp)...)
	for _, step := range cp.Preflight {
		g := l.cat.Capabilities[step.Get]
		if g == nil {
			continue
		}
		if e := l.cat.Entities[g.Entity]; e != nil {
			for _, f := range e.FieldOrder {
				out = append(out, step.Prefix+"_"+f)
			}
		}
	}
	return out
}
