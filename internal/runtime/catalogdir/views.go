package catalogdir

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/viewtemplate"
)

// Plasm's views: composed reads. A view's nodes call read capabilities in
// order; its output fills one row of the view's entity. Views run on the
// host (see internal/runtime/executor/view.go); a view that needs
// something plasmd cannot do marks the capabilities serving it "not
// executable here" with the reason.

var (
	viewKeys         = []string{"description", "capability", "entity", "scope", "nodes", "output", "relation_outputs"}
	viewScopeKeys    = []string{"name", "value_ref", "required", "inject", "description"}
	viewNodeKeys     = []string{"id", "capability", "bind"}
	viewInjects      = []string{"session_ui_origin", "session_transport_origin"}
	viewRelationKeys = []string{"relation", "target", "cardinality", "binding"}
	// Keys of each binding kind, for node binds, outputs and relation outputs.
	viewBindKeys = map[string][]string{
		catalog.ViewScope:    {"kind", "param"},
		catalog.ViewLiteral:  {"kind", "value"},
		catalog.ViewField:    {"kind", "node", "field"},
		catalog.ViewComputed: {"kind", "template"},
	}
	viewOutputKeys = map[string][]string{
		catalog.ViewScope:            {"kind", "param"},
		catalog.ViewField:            {"kind", "node", "field"},
		catalog.ViewComputed:         {"kind", "template"},
		catalog.ViewRowCount:         {"kind", "node"},
		catalog.ViewRowCountPositive: {"kind", "node"},
		catalog.ViewHistogram:        {"kind", "node", "field"},
		catalog.ViewAnyRowEquals:     {"kind", "node", "field", "equals"},
	}
	viewRelationBindKeys = map[string][]string{
		catalog.ViewFirstRowWhere: {"kind", "node", "where_field", "equals"},
		catalog.ViewRowsWhere:     {"kind", "node", "where_field", "equals"},
		catalog.ViewAllRows:       {"kind", "node"},
		catalog.ViewSingleRow:     {"kind", "node"},
	}
)

// viewRef is a reference to a node of a view, checked once all nodes are read.
type viewRef struct {
	node    string
	at      *yaml.Node
	ctx     string
	earlier int // for node binds: only nodes before this index may be named
}

// viewSite is what the later checks need of one view.
type viewSite struct {
	p         *parser
	v         *catalog.View
	refs      []viewRef
	caps      map[string]*yaml.Node // node capability → where named
	templates []string              // "not executable" reasons found in templates
	fields    map[string]*yaml.Node // output fields
	rels      map[string]*yaml.Node // relation outputs
	ids       map[string]*yaml.Node // node ids
	scopes    map[string]*yaml.Node // scope names
}

// viewEnvNodes is the name under which a computed node bind sees every
// earlier node's first row (next to the scope values and node ids).
const viewEnvNodes = "nodes"

func (l *loader) parseView(p *parser, ctx string, key, val *yaml.Node) {
	o := p.object(ctx, key, val, viewKeys)
	if o == nil {
		return
	}
	v := &catalog.View{Name: key.Value, Description: o.str("description"), Capability: o.name("capability"), Entity: o.name("entity")}
	l.entityRef(p, o.sub("entity"), o.val("entity"), v.Entity)
	s := &viewSite{p: p, v: v, caps: map[string]*yaml.Node{}, fields: map[string]*yaml.Node{}, rels: map[string]*yaml.Node{}, ids: map[string]*yaml.Node{}, scopes: map[string]*yaml.Node{}}
	if n := o.val("scope"); n != nil {
		l.viewScope(s, o.sub("scope"), n)
	}
	if nn := o.val("nodes"); nn == nil {
		o.missing("nodes")
	} else {
		l.viewNodes(s, o.sub("nodes"), nn)
	}
	if n := o.val("output"); n != nil {
		es, _ := p.pairs(o.sub("output"), n)
		for _, e := range es {
			out := catalog.ViewOutput{Field: e.key.Value}
			bo := l.viewBinding(s, join(o.sub("output"), e.key.Value), e.key, e.val, viewOutputKeys, len(v.Nodes)+1)
			if bo != nil {
				out.Kind, out.Param, out.Node, out.Of, out.Template = bo.kind, bo.param, bo.node, bo.field, bo.template
				out.Equals = bo.equals
			}
			s.fields[e.key.Value] = e.key
			v.Output = append(v.Output, out)
		}
	}
	if n := o.val("relation_outputs"); n != nil {
		l.viewRelations(s, o.sub("relation_outputs"), n)
	}
	if l.cat.Views == nil {
		l.cat.Views = map[string]*catalog.View{}
	}
	l.cat.Views[v.Name] = v
	l.later(func() { l.checkView(s, o) })
}

func (l *loader) viewScope(s *viewSite, ctx string, n *yaml.Node) {
	add := func(c string, name string, at, val *yaml.Node) {
		so := s.p.object(c, at, val, viewScopeKeys)
		if so == nil {
			return
		}
		sp := catalog.ViewScopeParam{Name: name, ValueRef: so.optName("value_ref"), Required: so.boolean("required"), Inject: so.optOneOf("inject", viewInjects)}
		nameAt := at
		if sp.Name == "" {
			sp.Name, nameAt = so.name("name"), so.val("name")
		} else if so.has("name") && so.str("name") != name {
			s.p.errorf(so.val("name"), "%s: names %q under the key %q", so.sub("name"), so.str("name"), name)
		}
		if sp.ValueRef != "" {
			l.valueRef(s.p, so.sub("value_ref"), so.val("value_ref"), sp.ValueRef)
		}
		if sp.Name != "" && s.scopes[sp.Name] == nil {
			s.scopes[sp.Name] = nameAt
		}
		s.v.Scope = append(s.v.Scope, sp)
	}
	switch n.Kind {
	case yaml.SequenceNode: // [{name: item_id, value_ref: …}]
		for i, c := range n.Content {
			add(index(ctx, i), "", c, c)
		}
	case yaml.MappingNode: // {item_id: {required: true}}
		es, _ := s.p.pairs(ctx, n)
		for _, e := range es {
			add(join(ctx, e.key.Value), e.key.Value, e.key, e.val)
		}
	default:
		s.p.errorf(n, "%s: expected a list of {name, value_ref, required} or a mapping name → {required, …}, got %s", label(ctx), describe(n))
	}
}

func (l *loader) viewNodes(s *viewSite, ctx string, n *yaml.Node) {
	ids := map[string]bool{}
	add := func(c, id string, at, val *yaml.Node) {
		no := s.p.object(c, at, val, viewNodeKeys)
		if no == nil {
			return
		}
		idAt := at
		if id == "" {
			id, idAt = no.name("id"), no.val("id")
		}
		if id != "" && ids[id] {
			s.p.errorf(at, "%s: node id %q is used twice", label(c), id)
		}
		ids[id] = true
		if id != "" && s.ids[id] == nil {
			s.ids[id] = idAt
		}
		node := catalog.ViewNode{ID: id, Capability: no.name("capability")}
		if node.Capability != "" {
			s.caps[node.Capability] = no.val("capability")
		}
		if bn := no.val("bind"); bn != nil {
			es, _ := s.p.pairs(no.sub("bind"), bn)
			for _, e := range es {
				b := catalog.ViewBind{Param: e.key.Value}
				if bo := l.viewBinding(s, join(no.sub("bind"), e.key.Value), e.key, e.val, viewBindKeys, len(s.v.Nodes)); bo != nil {
					b.Kind, b.From, b.Node, b.Field, b.Value, b.Template = bo.kind, bo.param, bo.node, bo.field, bo.value, bo.template
				}
				node.Bind = append(node.Bind, b)
			}
		}
		s.v.Nodes = append(s.v.Nodes, node)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			add(index(ctx, i), "", c, c)
		}
	case yaml.MappingNode:
		es, _ := s.p.pairs(ctx, n)
		for _, e := range es {
			add(join(ctx, e.key.Value), e.key.Value, e.key, e.val)
		}
	default:
		s.p.errorf(n, "%s: expected a list of {id, capability, bind}, got %s", label(ctx), describe(n))
	}
}

// binding is one parsed binding of any of the three families.
type binding struct {
	kind, param, node, field, template string
	value, equals                      any
}

// viewBinding reads a {kind: …} binding whose kind is among kinds' keys.
// earlier bounds the nodes it may name (node binds read earlier nodes).
func (l *loader) viewBinding(s *viewSite, ctx string, at, n *yaml.Node, kinds map[string][]string, earlier int) *binding {
	o := s.p.object(ctx, at, n, nil)
	if o == nil {
		return nil
	}
	allowed := keysOf(kinds)
	kind := o.oneOf("kind", allowed)
	keys, ok := kinds[kind]
	if !ok {
		return nil
	}
	o.check(keys, "for kind "+kind)
	b := &binding{kind: kind}
	for _, k := range keys {
		switch k {
		case "param":
			b.param = o.name("param")
		case "node":
			b.node = o.name("node")
			s.refs = append(s.refs, viewRef{node: b.node, at: o.val("node"), ctx: o.sub("node"), earlier: earlier})
		case "field", "where_field":
			b.field = o.name(k)
		case "template":
			b.template = o.name("template")
			l.viewTemplate(s, o.sub("template"), o.val("template"), b.template)
		case "value", "equals":
			vn := o.val(k)
			if vn == nil {
				o.missing(k)
				continue
			}
			lit, _ := s.p.literal(o.sub(k), vn, 0)
			if k == "value" {
				b.value = lit
			} else {
				b.equals = lit
			}
		}
	}
	return b
}

// viewTemplate parses a computed template: a syntax error is the catalog's
// (reported at the template, with the line and column inside it); valid
// Jinja this subset does not run makes the view not executable here.
func (l *loader) viewTemplate(s *viewSite, ctx string, at *yaml.Node, src string) {
	if src == "" {
		return
	}
	t, err := viewtemplate.Parse(src)
	var te *viewtemplate.Error
	switch {
	case errors.Is(err, viewtemplate.ErrUnsupported) && errors.As(err, &te):
		s.templates = append(s.templates, fmt.Sprintf("%s (template line %d, column %d): %s", ctx, te.Line, te.Column, te.Msg))
	case errors.As(err, &te):
		s.p.errorf(at, "%s: template line %d, column %d: %s", ctx, te.Line, te.Column, te.Msg)
	case err != nil:
		s.p.errorf(at, "%s: %v", ctx, err)
	default:
		if f := t.Unknown(); f != "" {
			s.templates = append(s.templates, fmt.Sprintf("%s uses the template filter %q, which plasmd does not provide", ctx, f))
		}
	}
}

func (l *loader) viewRelations(s *viewSite, ctx string, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		s.p.errorf(n, "%s: expected a list of {relation, target, cardinality, binding}, got %s", label(ctx), describe(n))
		return
	}
	for i, c := range n.Content {
		ro := s.p.object(index(ctx, i), c, c, viewRelationKeys)
		if ro == nil {
			continue
		}
		r := catalog.ViewRelationOutput{Relation: ro.name("relation"), Target: ro.name("target"), Cardinality: ro.oneOf("cardinality", []string{"one", "many"})}
		l.entityRef(s.p, ro.sub("target"), ro.val("target"), r.Target)
		if bn := ro.val("binding"); bn == nil {
			ro.missing("binding")
		} else if bo := l.viewBinding(s, ro.sub("binding"), bn, bn, viewRelationBindKeys, len(s.v.Nodes)+1); bo != nil {
			r.Kind, r.Node, r.Where, r.Equals = bo.kind, bo.node, bo.field, bo.equals
		}
		if r.Relation != "" {
			if s.rels[r.Relation] != nil {
				s.p.errorf(ro.val("relation"), "%s: relation %q is output twice", ro.sub("relation"), r.Relation)
			}
			s.rels[r.Relation] = ro.val("relation")
		}
		s.v.Relations = append(s.v.Relations, r)
	}
}

// checkView checks a view's references once every declaration is read.
func (l *loader) checkView(s *viewSite, o *object) {
	v, p := s.v, s.p
	if cp := l.cat.Capabilities[v.Capability]; v.Capability != "" && !l.broken["capability:"+v.Capability] {
		switch {
		case cp == nil:
			p.errorf(o.val("capability"), "%s.capability: %s", o.ctx, p.unknownRefOf("capability", v.Capability, "", l.capNames))
		case cp.Entity != v.Entity:
			p.errorf(o.val("capability"), "%s.capability: %q is on entity %q, not the view's %q", o.ctx, cp.Name, cp.Entity, v.Entity)
		}
	}
	var ids []string
	for _, n := range v.Nodes {
		ids = append(ids, n.ID)
	}
	for _, r := range s.refs {
		i := slices.Index(ids, r.node)
		switch {
		case r.node == "":
		case i < 0:
			p.errorf(r.at, "%s: %s", r.ctx, p.unknownRefOf("node", r.node, "view "+v.Name, ids))
		case i >= r.earlier:
			p.errorf(r.at, "%s: node %q runs after this one; a node's binds read only the nodes before it", r.ctx, r.node)
		}
	}
	l.checkViewNames(s, o)
	for name, at := range s.caps {
		if l.cat.Capabilities[name] == nil && !l.broken["capability:"+name] {
			p.errorf(at, "views.%s.nodes: %s", v.Name, p.unknownRefOf("capability", name, "", l.capNames))
		}
	}
	e := l.cat.Entities[v.Entity]
	if e == nil {
		return
	}
	for _, f := range sortedKeys(s.fields) {
		if e.Fields[f] == nil {
			p.errorf(s.fields[f], "%s.output.%s: %s", o.ctx, f, p.unknownRefOf("field", f, v.Entity, keysOf(e.Fields)))
		}
	}
	keys := e.KeyVars
	if len(keys) == 0 && e.IDField != "" {
		keys = []string{e.IDField}
	}
	for _, k := range keys {
		if s.fields[k] == nil {
			// Plasm loads it and fails every read: a row needs its id.
			l.viewWhy(v, fmt.Sprintf("its output fills no %s, the id of %s rows", k, v.Entity))
		}
	}
	for _, r := range v.Relations {
		rel := e.Relations[r.Relation]
		switch {
		case r.Relation == "":
		case rel == nil:
			p.errorf(s.rels[r.Relation], "%s.relation_outputs: %s", o.ctx, p.unknownRefOf("relation", r.Relation, v.Entity, keysOf(e.Relations)))
		case rel.Target != r.Target && r.Target != "":
			p.errorf(s.rels[r.Relation], "%s.relation_outputs: relation %s of %s targets %s, not %s", o.ctx, r.Relation, v.Entity, rel.Target, r.Target)
		default:
			l.checkViewRelation(s, o, r)
		}
	}
	if len(s.templates) > 0 {
		l.viewWhy(v, strings.Join(s.templates, "; "))
	}
}

// checkViewNames refuses names that would shadow one another where a
// computed bind reads them: its template sees the scope values, each
// earlier node's first row under the node's id, and all of them under
// "nodes"; a node id equal to a scope name would silently replace the
// scope value.
func (l *loader) checkViewNames(s *viewSite, o *object) {
	for _, id := range sortedKeys(s.ids) {
		switch {
		case id == viewEnvNodes:
			s.p.errorf(s.ids[id], "%s.nodes: node id %q is reserved (templates read every node's row under it)", o.ctx, id)
		case s.scopes[id] != nil:
			s.p.errorf(s.ids[id], "%s.nodes: node id %q is also a scope name; a template could not tell the two apart", o.ctx, id)
		}
	}
	if at := s.scopes[viewEnvNodes]; at != nil {
		s.p.errorf(at, "%s.scope: scope name %q is reserved (templates read every node's row under it)", o.ctx, viewEnvNodes)
	}
}

// checkViewRelation refuses a relation of one entity output by two views:
// a hop along it could not tell which view's rows to follow.
func (l *loader) checkViewRelation(s *viewSite, o *object, r catalog.ViewRelationOutput) {
	key := s.v.Entity + "." + r.Relation
	if l.viewRels == nil {
		l.viewRels = map[string]string{}
	}
	if other, ok := l.viewRels[key]; ok && other != s.v.Name {
		s.p.errorf(s.rels[r.Relation], "%s.relation_outputs: relation %s of %s is already output by view %s; one relation has one view", o.ctx, r.Relation, s.v.Entity, other)
		return
	}
	l.viewRels[key] = s.v.Name
}

// viewWhy records why a view cannot run here; finishViews passes it on to
// the capabilities that serve it.
func (l *loader) viewWhy(v *catalog.View, why string) {
	if l.viewReasons == nil {
		l.viewReasons = map[string][]string{}
	}
	l.viewReasons[v.Name] = append(l.viewReasons[v.Name], why)
}

// finishViews runs after every other check, when each capability's own
// executability is known: a view runs only if every node it calls does.
func (l *loader) finishViews() {
	for _, name := range sortedKeys(l.cat.Views) {
		v := l.cat.Views[name]
		why := l.viewReasons[name]
		for _, n := range v.Nodes {
			cp := l.cat.Capabilities[n.Capability]
			switch {
			case cp == nil:
			case l.cat.ViewServing(cp.Name) != nil:
				why = append(why, fmt.Sprintf("node %s calls %s, itself a view; plasmd does not nest views", n.ID, cp.Name))
			case cp.Unavailable != "":
				why = append(why, fmt.Sprintf("node %s calls %s, which is not executable here (%s)", n.ID, cp.Name, cp.Unavailable))
			case !cp.IsRead():
				why = append(why, fmt.Sprintf("node %s calls %s, a %s; a view only reads", n.ID, cp.Name, cp.Kind))
			}
		}
		for _, c := range v.Serves {
			cp := l.cat.Capabilities[c]
			if cp == nil {
				continue
			}
			reasons := why
			if miss := l.unscoped(v, cp); len(miss) > 0 {
				reasons = append(slices.Clip(reasons), fmt.Sprintf("a %s of %s gives no %s, which the view reads from its scope (Plasm fails such a read at run time)", cp.Kind, v.Entity, strings.Join(miss, ", ")))
			}
			if len(reasons) == 0 {
				continue
			}
			msg := "view " + name + ": " + strings.Join(reasons, "; ")
			if cp.Unavailable != "" {
				cp.Unavailable += "; " + msg
			} else {
				cp.Unavailable = msg
			}
		}
	}
}

// unscoped lists the scope values v needs (required ones, and those its
// node binds read) that a read through cp cannot supply: a read gives its
// parameters, a get also the view entity's id (or key vars), and injected
// values come from the host.
func (l *loader) unscoped(v *catalog.View, cp *catalog.Capability) []string {
	have := map[string]bool{}
	if e := l.cat.Entities[v.Entity]; e != nil && cp.Kind == catalog.KindGet {
		for _, k := range e.KeyVars {
			have[k] = true
		}
		have[e.IDField] = true
	}
	for _, p := range cp.Parameters { // a get names them: Entity(k=…, …)
		have[p.Name] = true
	}
	for _, s := range v.Scope {
		if s.Inject != "" {
			have[s.Name] = true
		}
	}
	var miss []string
	need := func(name string) {
		if name != "" && !have[name] && !slices.Contains(miss, name) {
			miss = append(miss, name)
		}
	}
	for _, s := range v.Scope {
		if s.Required {
			need(s.Name)
		}
	}
	for _, n := range v.Nodes {
		for _, b := range n.Bind {
			if b.Kind == catalog.ViewScope {
				need(b.From)
			}
		}
	}
	return miss
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
