package catalogdir

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Allowed words of the mappings format.
var (
	mappingKeys        = []string{"method", "path", "query", "body", "headers", "body_format", "transport", "response", "pagination"}
	methods            = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
	bodyFormats        = []string{"json", "form_urlencoded", "multipart"}
	transports         = []string{"http", "graphql", "wasm", "view", "evm_call", "evm_logs"}
	segmentTypes       = []string{"literal", "var"}
	responseShorthands = []string{"single", "bare_list", "results_list", "items_list"}
	responseKeys       = []string{"items", "items_path", "single", "item_inner_key", "example", "wrap_root_scalar", "response_preprocess", "auxiliary_merge"}
	paginationKeys     = []string{"params", "location", "response_prefix", "stop_when", "body_merge_path", "response_next_url_field"}
	locations          = []string{"query", "body", "link_header", "response_next_url", "block_range"}
	pageParamKeys      = []string{"counter", "step", "max", "fixed", "from_response"}
	pageModes          = []string{"counter", "fixed", "from_response"}
	stopWhenKeys       = []string{"field", "eq", "absent"}
	exprTypes          = []string{catalog.ExprVar, catalog.ExprConst, catalog.ExprObject, catalog.ExprArray, catalog.ExprIf, catalog.ExprJoin, catalog.ExprFormat, exprGmailSend, exprGmailReply}
	allExprKeys        = []string{"type", "name", "value", "fields", "items", "elements", "condition", "then_expr", "else_expr", "sep", "expr", "template", "vars"}
	condKeys           = []string{"exists", "equals", "bool"}
)

// exprKeys lists the keys each CML expression type may carry.
var exprKeys = map[string][]string{
	catalog.ExprVar:    {"type", "name"},
	catalog.ExprConst:  {"type", "value"},
	catalog.ExprObject: {"type", "fields"},
	catalog.ExprArray:  {"type", "items", "elements"},
	catalog.ExprIf:     {"type", "condition", "then_expr", "else_expr"},
	catalog.ExprJoin:   {"type", "sep", "expr"},
	catalog.ExprFormat: {"type", "template", "vars"},
	exprGmailSend:      {"type"},
	exprGmailReply:     {"type"},
}

// parseMappings fills l.cat.Mappings. ctx prefixes problem paths ("" for
// mappings.yaml, "mappings" inside a combined file).
func (l *loader) parseMappings(p *parser, ctx string, at, root *yaml.Node) {
	if root == nil {
		return
	}
	es, ok := p.pairs(ctxOr(ctx, "mappings"), root)
	if !ok {
		return
	}
	for _, e := range es {
		name := e.key.Value
		if name == "" {
			p.errorf(e.key, "%s: capability name must not be empty", ctxOr(ctx, "mappings"))
			continue
		}
		if strings.HasPrefix(name, "x-") {
			continue // an extension key, e.g. a holder for YAML anchors
		}
		if m := l.parseMapping(p, join(ctx, name), e.key, e.val); m != nil {
			l.cat.Mappings[name] = m
		} else {
			l.broken["mapping:"+name] = true
		}
	}
}

func ctxOr(ctx, dflt string) string {
	if ctx == "" {
		return dflt
	}
	return ctx
}

func (l *loader) parseMapping(p *parser, ctx string, key, val *yaml.Node) *catalog.Mapping {
	name := key.Value
	errsBefore := len(l.errs) + l.dropped
	l.later(func() {
		if l.cat.Capabilities[name] == nil && !l.broken["capability:"+name] {
			// Plasm ignores a mapping no capability uses; so does plasmd,
			// but says so: it is usually a renamed capability.
			p.warnf(key, "%s: mapping for %s; it is ignored", ctx, p.unknownRefOf("capability", name, "", l.capNames))
			delete(l.cat.Mappings, name)
		}
	})
	o := p.object(ctx, key, val, nil)
	if o == nil {
		return nil
	}
	m := &catalog.Mapping{Transport: o.optOneOf("transport", transports)}
	if l.foreignMapping(p, o, m) {
		return m
	}
	p.holdBounds()
	o.check(append(mappingKeys, "multipart"), "")
	p.builtin = ""
	wasm := m.Transport == "wasm"
	// A module-served capability never reaches the HTTP compiler, so its
	// method and path are optional.
	if o.has("method") || !wasm {
		m.Method = o.oneOf("method", methods)
	}
	var varNodes []*yaml.Node
	if n := o.val("path"); n != nil {
		m.Path, varNodes = p.segments(o.sub("path"), n)
	} else if !wasm {
		o.missing("path")
	}
	for _, k := range []string{"query", "body", "headers"} {
		n := o.val(k)
		if n == nil {
			continue
		}
		e := p.expr(o.sub(k), o.key(k), n, 0)
		switch k {
		case "query":
			m.Query = e
		case "body":
			m.Body = e
		case "headers":
			m.Headers = e
		}
	}
	m.BodyFormat = o.optOneOf("body_format", bodyFormats)
	var why []string
	if p.builtin != "" {
		why = append(why, "CML expression "+p.builtin+" is a Plasm built-in plasmd does not implement")
	}
	if o.has("multipart") {
		why = append(why, "multipart parts (Plasm's multipart:) are not compiled by plasmd; use body_format: multipart with a body")
	}
	if n := o.val("response"); n != nil {
		var w string
		m.Response, w = p.response(o.sub("response"), o.key("response"), n)
		if w != "" {
			why = append(why, w)
		}
	} else {
		l.later(func() { l.defaultListResponse(name, m) })
	}
	if n := o.val("pagination"); n != nil {
		m.Pagination = p.pagination(o.sub("pagination"), o.key("pagination"), n)
		if m.Pagination != nil && m.Pagination.Location == "block_range" {
			why = append(why, "pagination location block_range pages an EVM chain")
		}
	}
	l.releaseBounds(p, name, m)
	if len(why) > 0 {
		l.unavailable(name, strings.Join(why, "; "))
	}
	if m.Transport == "graphql" && m.Method != "" && m.Method != "POST" {
		p.errorf(o.val("method"), "%s: transport graphql sends POST, not %s", o.sub("method"), m.Method)
	}
	if wasm {
		tn := o.val("transport")
		l.later(func() {
			if !l.hasHook("invoke") {
				p.errorf(tn, "%s: transport wasm needs module: {hooks: [invoke]} in the domain", o.sub("transport"))
			}
		})
	}
	l.later(func() { l.checkPathVars(p, o.sub("path"), name, m, varNodes) })
	if len(l.errs)+l.dropped == errsBefore { // a broken mapping's variables are noise
		l.later(func() { l.checkAnswers(p, name, o) })
	}
	return m
}

// defaultListResponse gives a query or search mapping without `response`
// Plasm's default shape: its rows are the list under "results" (a bare list
// body is the rows, see extract.selectItems). Without it such a mapping read
// a {count, next, results: […]} page, the most common shape there is, as one
// row of empty fields.
func (l *loader) defaultListResponse(name string, m *catalog.Mapping) {
	cp := l.cat.Capabilities[name]
	if cp == nil || m.Response != nil || (m.Transport != "" && m.Transport != "http" && m.Transport != "graphql") {
		return
	}
	if cp.Kind == catalog.KindQuery || cp.Kind == catalog.KindSearch {
		m.Response = &catalog.Response{ItemsPath: []string{"results"}, Default: true}
	}
}

// checkPathVars requires that the path of a single-row capability only uses
// variables its environment defines: id, its parameters and the entity's key
// vars. List and create capabilities draw on predicates too, which are open.
func (l *loader) checkPathVars(p *parser, ctx, name string, m *catalog.Mapping, varNodes []*yaml.Node) {
	cp := l.cat.Capabilities[name]
	if cp == nil {
		return
	}
	switch cp.Kind {
	case catalog.KindGet, catalog.KindUpdate, catalog.KindDelete, catalog.KindAction, catalog.KindSingleton:
	default:
		return
	}
	params := l.params(cp)
	var keyVars []string
	isKeyVar := map[string]bool{}
	if ent := l.cat.Entities[cp.Entity]; ent != nil {
		keyVars = ent.KeyVars
		for _, k := range keyVars {
			isKeyVar[k] = true
		}
	}
	// A scope parameter that references an entity with a compound key
	// spreads into that entity's key vars (Plasm's scope splat).
	for _, k := range l.splatVars(cp) {
		isKeyVar[k] = true
		keyVars = append(keyVars, k)
	}
	if v := singleIDVar(m, params, isKeyVar); v != "" {
		// Plasm: the only path variable of a single-row read binds the id.
		m.IDVar = v
		return
	}
	for i, seg := range m.Path {
		if seg.Type != "var" || seg.Name == "" || seg.Name == "id" || params[seg.Name] || isKeyVar[seg.Name] || varNodes[i] == nil {
			continue
		}
		known := append(append([]string{"id"}, paramNames(cp)...), keyVars...)
		hint := p.suggest(seg.Name, known)
		if hint == "" {
			list := strings.Join(known, ", ")
			if len(known) > 8 {
				list = strings.Join(known[:8], ", ") + ", …"
			}
			hint = fmt.Sprintf(" (a %s path may use id, the parameters of %s and the key_vars of %s: %s)", cp.Kind, cp.Name, cp.Entity, list)
		}
		// Plasm does not check path variables; a call without one fails
		// when compiled, naming it. Worth a warning, not a refusal.
		p.warnf(varNodes[i], "%s: unknown variable %q%s; calls fail unless it is given", index(ctx, i)+".name", seg.Name, hint)
	}
}

// segments reads a mapping path; the second result holds, per segment, the
// node of a variable's name (nil for literals) for later checks.
func (p *parser) segments(ctx string, n *yaml.Node) ([]catalog.Segment, []*yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of {type: literal, value: v} or {type: var, name: n}, got %s", ctx, describe(n))
		return nil, nil
	}
	segs := make([]catalog.Segment, 0, len(n.Content))
	nodes := make([]*yaml.Node, 0, len(n.Content))
	for i, c := range n.Content {
		sctx := index(ctx, i)
		o := p.object(sctx, c, c, nil)
		if o == nil {
			continue
		}
		seg := catalog.Segment{Type: o.oneOf("type", segmentTypes)}
		switch seg.Type {
		case "":
			o.check([]string{"type", "value", "name"}, "")
			continue
		case "literal":
			o.check([]string{"type", "value"}, "for type literal")
			if !o.has("value") {
				o.missing("value")
			} else {
				// An empty literal is meaningful: it makes a trailing slash.
				seg.Value, _ = p.str(o.sub("value"), o.val("value"))
				// An absolute URL names the request's URL and declares its
				// origin (catalog.DeclaredURLs), so it must name one.
				if _, ok := catalog.Origin(seg.Value); catalog.IsAbsoluteURL(seg.Value) && !ok {
					p.errorf(o.val("value"), "%s.value: %q is not a plain absolute http(s) URL (a host, no user info)%s", sctx, seg.Value, hostProblem(seg.Value))
				} else if msg := portProblem(seg.Value); msg != "" && catalog.IsAbsoluteURL(seg.Value) {
					p.errorf(o.val("value"), "%s.value: %q: %s", sctx, seg.Value, msg)
				} else if ok {
					p.declaredOrigin(o.val("value"), sctx+".value", seg.Value)
				}
			}
			nodes = append(nodes, nil)
		case "var":
			o.check([]string{"type", "name", "suffix"}, "for type var")
			seg.Name = o.name("name")
			seg.Suffix = o.str("suffix")
			nodes = append(nodes, o.val("name"))
		}
		segs = append(segs, seg)
	}
	return segs, nodes
}

// expr reads a CML expression. at locates "missing key" problems.
func (p *parser) expr(ctx string, at, n *yaml.Node, depth int) *catalog.Expr {
	if depth > maxExprDepth {
		p.errorf(n, "%s: expression nested deeper than %d levels", ctx, maxExprDepth)
		return nil
	}
	o := p.object(ctx, at, n, nil)
	if o == nil {
		return nil
	}
	o.strict = true
	t := o.oneOf("type", exprTypes)
	if t == "" {
		o.check(allExprKeys, "")
		return nil
	}
	o.check(exprKeys[t], "for type "+t)
	e := &catalog.Expr{Type: t}
	switch t {
	case catalog.ExprVar:
		e.Name = o.name("name")
	case catalog.ExprConst:
		if !o.has("value") {
			o.missing("value")
		} else {
			e.Value, _ = p.literal(o.sub("value"), o.val("value"), 0)
		}
	case catalog.ExprObject:
		fn := o.val("fields")
		if fn == nil {
			o.missing("fields")
			break
		}
		e.Fields = p.objectFields(o.sub("fields"), fn, depth)
	case exprGmailSend, exprGmailReply:
		p.builtin = t
	case catalog.ExprArray:
		in := o.val("items")
		if in == nil {
			in = o.val("elements") // Plasm's spelling
		}
		if o.has("items") && o.has("elements") {
			p.errorf(o.key("elements"), "%s: items and elements are the same list; write one", ctx)
		}
		if in == nil {
			o.missing("items")
			break
		}
		if in.Kind != yaml.SequenceNode {
			p.errorf(in, "%s: expected a list of expressions, got %s", o.sub("items"), describe(in))
			break
		}
		e.Items = make([]*catalog.Expr, 0, len(in.Content))
		for i, c := range in.Content {
			if x := p.expr(index(o.sub("items"), i), c, c, depth+1); x != nil {
				e.Items = append(e.Items, x)
			}
		}
	case catalog.ExprIf:
		if cn := o.val("condition"); cn == nil {
			o.missing("condition")
		} else {
			e.Cond = p.cond(o.sub("condition"), o.key("condition"), cn, depth+1)
		}
		if tn := o.val("then_expr"); tn == nil {
			o.missing("then_expr")
		} else {
			e.Then = p.expr(o.sub("then_expr"), o.key("then_expr"), tn, depth+1)
		}
		// Without else_expr the expression is null when the condition fails,
		// which drops the key it is the value of.
		if en := o.val("else_expr"); en != nil {
			e.Else = p.expr(o.sub("else_expr"), o.key("else_expr"), en, depth+1)
		}
	case catalog.ExprJoin:
		if sn := o.val("sep"); sn == nil {
			o.missing("sep")
		} else {
			e.Sep, _ = p.str(o.sub("sep"), sn)
		}
		if xn := o.val("expr"); xn == nil {
			o.missing("expr")
		} else {
			e.Expr = p.expr(o.sub("expr"), o.key("expr"), xn, depth+1)
		}
	case catalog.ExprFormat:
		e.Template = o.name("template")
		if vn := o.val("vars"); vn != nil {
			if es, ok := p.pairs(o.sub("vars"), vn); ok {
				e.Vars = make(map[string]*catalog.Expr, len(es))
				for _, v := range es {
					if x := p.expr(o.sub("vars")+"."+v.key.Value, v.key, v.val, depth+1); x != nil {
						e.Vars[v.key.Value] = x
					}
				}
			}
		}
	}
	return e
}

// objectFields reads [[key, expr], …], keeping the order.
func (p *parser) objectFields(ctx string, n *yaml.Node, depth int) []catalog.ObjectKV {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of [key, expr] pairs, got %s", ctx, describe(n))
		return nil
	}
	out := make([]catalog.ObjectKV, 0, len(n.Content))
	seen := map[string]bool{}
	for i, c := range n.Content {
		ictx := index(ctx, i)
		if c.Kind != yaml.SequenceNode || len(c.Content) != 2 {
			p.errorf(c, "%s: expected a [key, expr] pair, got %s", ictx, describeLen(c))
			continue
		}
		k, ok := p.str(index(ictx, 0), c.Content[0])
		if !ok {
			continue
		}
		if seen[k] {
			p.errorf(c.Content[0], "%s: duplicate key %q", index(ictx, 0), k)
			continue
		}
		seen[k] = true
		if x := p.expr(index(ictx, 1), c.Content[1], c.Content[1], depth+1); x != nil {
			out = append(out, catalog.ObjectKV{Key: k, Value: x})
		}
	}
	return out
}

func describeLen(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		return "a list of " + strconv.Itoa(len(n.Content))
	}
	return describe(n)
}

func (p *parser) cond(ctx string, at, n *yaml.Node, depth int) *catalog.Cond {
	if depth > maxExprDepth {
		p.errorf(n, "%s: expression nested deeper than %d levels", ctx, maxExprDepth)
		return nil
	}
	if n.Kind == yaml.MappingNode && hasKey(n, "type") {
		return p.taggedCond(ctx, at, n, depth)
	}
	o := p.object(ctx, at, n, condKeys)
	if o == nil {
		return nil
	}
	o.strict = true
	if len(o.ord) != 1 {
		p.errorf(o.at, "%s: expected exactly one of %s, got %d", ctx, strings.Join(condKeys, ", "), len(o.ord))
		return nil
	}
	c := &catalog.Cond{}
	switch o.ord[0].key.Value {
	case "exists":
		c.Exists = o.name("exists")
	case "equals":
		eo := p.object(o.sub("equals"), o.key("equals"), o.val("equals"), []string{"left", "right"})
		if eo == nil {
			return c
		}
		c.Equals = &catalog.EqualsCond{}
		for _, side := range []string{"left", "right"} {
			sn := eo.val(side)
			if sn == nil {
				eo.missing(side)
				continue
			}
			x := p.expr(eo.sub(side), eo.key(side), sn, depth+1)
			if side == "left" {
				c.Equals.Left = x
			} else {
				c.Equals.Right = x
			}
		}
	case "bool":
		c.Bool = p.expr(o.sub("bool"), o.key("bool"), o.val("bool"), depth+1)
	default:
		return nil
	}
	return c
}

// response reads where rows live. The second result, when not empty, is
// why the capability cannot run here (a Plasm response reshape plasmd does
// not implement).
func (p *parser) response(ctx string, at, n *yaml.Node) (*catalog.Response, string) {
	if n.Kind == yaml.ScalarNode {
		switch p.oneOf(ctx, n, responseShorthands) {
		case "single":
			return &catalog.Response{Single: true}, ""
		case "bare_list":
			return &catalog.Response{Items: true}, ""
		case "results_list":
			return &catalog.Response{ItemsPath: []string{"results"}}, ""
		case "items_list":
			return &catalog.Response{ItemsPath: []string{"items"}}, ""
		}
		return nil, ""
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: expected one of %s or a mapping {items, items_path, single, item_inner_key}, got %s", ctx, strings.Join(responseShorthands, ", "), describe(n))
		return nil, ""
	}
	o := p.object(ctx, at, n, responseKeys)
	r := &catalog.Response{
		Single:         o.boolean("single"),
		ItemInnerKey:   o.optName("item_inner_key"),
		WrapRootScalar: o.boolean("wrap_root_scalar"),
	}
	// items: true (plasmd) says the body is the list; items: <key>
	// (Plasm) names the key holding it, the same as items_path: [key].
	itemsKey := ""
	if in := o.val("items"); in != nil {
		if in.Kind == yaml.ScalarNode && in.ShortTag() == "!!str" {
			itemsKey = p.name(o.sub("items"), in)
		} else {
			r.Items = p.boolean(o.sub("items"), in)
		}
	}
	if pn := o.val("items_path"); pn != nil {
		r.ItemsPath = p.strList(o.sub("items_path"), pn)
		p.wirePathBound(o, "items_path", pn, r.ItemsPath)
		if pn.Kind == yaml.SequenceNode && len(pn.Content) == 0 {
			p.errorf(pn, "%s: must name at least one key", o.sub("items_path"))
		}
	}
	if itemsKey != "" && r.ItemsPath == nil {
		// Bounded only when used: items_path wins over items.
		p.scalarBound(o, "items")
		r.ItemsPath = []string{itemsKey}
	}
	p.scalarBound(o, "item_inner_key")
	list := r.Items || len(r.ItemsPath) > 0
	switch {
	case r.Single && r.Items:
		// single + items_path is allowed: one object found at that path
		// (a GraphQL field such as data.issue).
		p.errorf(o.at, "%s: single cannot be combined with items: true", ctx)
	case r.Items && len(r.ItemsPath) > 0:
		p.errorf(o.at, "%s: items: true (the body is the list) and items_path are exclusive", ctx)
	case !r.Single && !list && !o.has("items_path"):
		// Plasm's default: the list is under "results".
		r.ItemsPath = []string{"results"}
	}
	var why []string
	if n := o.val("response_preprocess"); n != nil {
		r.Preprocess = p.preprocess(o.sub("response_preprocess"), o.key("response_preprocess"), n)
	}
	if o.has("auxiliary_merge") {
		p.object(o.sub("auxiliary_merge"), o.key("auxiliary_merge"), o.val("auxiliary_merge"), nil)
		why = append(why, "auxiliary_merge (a second GET merged into the body) is not run by plasmd")
	}
	return r, strings.Join(why, "; ")
}

func (p *parser) pagination(ctx string, at, n *yaml.Node) *catalog.Pagination {
	o := p.object(ctx, at, n, paginationKeys)
	if o == nil {
		return nil
	}
	pg := &catalog.Pagination{
		Params:   map[string]catalog.PageParam{},
		Location: o.optOneOf("location", locations),
	}
	if pn := o.val("params"); pn != nil {
		es, _ := p.pairs(o.sub("params"), pn)
		keys := map[string]*yaml.Node{}
		for _, e := range es {
			if e.key.Value == "" {
				p.errorf(e.key, "%s: parameter name must not be empty", o.sub("params"))
				continue
			}
			p.nameBound(o, "params", "a parameter", e.key)
			if pp, ok := p.pageParam(o.sub("params")+"."+e.key.Value, e.key, e.val); ok {
				pg.Params[e.key.Value] = pp
				pg.ParamOrder = append(pg.ParamOrder, e.key.Value)
				keys[e.key.Value] = e.key
			}
		}
		p.checkOffsetStep(o.sub("params"), pg, keys)
		p.paramsBound(o, pg)
	} else if pg.Location != "link_header" && pg.Location != "response_next_url" && pg.Location != "block_range" {
		// Only the next-URL locations can continue without parameters.
		p.errorf(o.at, "%s: missing required key \"params\" (location %s advances by parameters)", ctx, ctxOr(pg.Location, "query"))
	}
	if rn := o.val("response_prefix"); rn != nil {
		pg.ResponsePrefix = p.strList(o.sub("response_prefix"), rn)
		p.wirePathBound(o, "response_prefix", rn, pg.ResponsePrefix)
	}
	if bn := o.val("body_merge_path"); bn != nil {
		pg.BodyMergePath = p.strList(o.sub("body_merge_path"), bn)
	}
	if pg.Location == "response_next_url" {
		// Plasm reads the next URL from response_next_url_field, by
		// default Microsoft Graph's @odata.nextLink.
		pg.NextURLField = "@odata.nextLink"
		if o.has("response_next_url_field") {
			pg.NextURLField = o.name("response_next_url_field")
			p.scalarBound(o, "response_next_url_field")
		} else {
			for _, pp := range pg.Params {
				if pp.FromResponse != "" {
					pg.NextURLField = ""
				}
			}
		}
	} else if o.has("response_next_url_field") {
		p.errorf(o.key("response_next_url_field"), "%s: only meaningful with location: response_next_url", o.sub("response_next_url_field"))
	}
	if sn := o.val("stop_when"); sn != nil {
		pg.StopWhen = p.stopWhen(o.sub("stop_when"), o.key("stop_when"), sn)
	}
	return pg
}

// offsetNames are counter names that count rows, not pages.
var offsetNames = []string{"offset", "startat", "start", "skip", "startindex", "start_index"}

// checkOffsetStep warns about a counter named as an item offset that steps
// by 1 while a fixed parameter asks for more rows a page (Plasm's pokeapi
// and jira catalogs): every page then repeats all but one row of the page
// before, which the executor refuses (executor.OverlapError).
func (p *parser) checkOffsetStep(ctx string, pg *catalog.Pagination, keys map[string]*yaml.Node) {
	size := int64(0)
	sizeName := ""
	for _, name := range pg.ParamOrder {
		if n, ok := pg.Params[name].Fixed.(int64); ok && n > 1 {
			size, sizeName = n, name
		}
	}
	if size == 0 {
		return
	}
	for _, name := range pg.ParamOrder {
		pp := pg.Params[name]
		if pp.Counter == nil || pp.Step != 1 || !slices.Contains(offsetNames, strings.ToLower(name)) || p.warnedAt[keys[name]] {
			continue
		}
		if p.warnedAt == nil {
			p.warnedAt = map[*yaml.Node]bool{}
		}
		p.warnedAt[keys[name]] = true
		p.warnf(keys[name], "%s.%s: an item offset that steps by 1 a page while %s asks for %d rows: every page repeats the page before, and plasmd refuses such a list (add step: %d)",
			ctx, name, sizeName, size, size)
	}
}

func (p *parser) pageParam(ctx string, at, n *yaml.Node) (catalog.PageParam, bool) {
	var pp catalog.PageParam
	o := p.object(ctx, at, n, pageParamKeys)
	if o == nil {
		return pp, false
	}
	var modes []string
	for _, m := range pageModes {
		if o.has(m) {
			modes = append(modes, m)
		}
	}
	if len(modes) != 1 {
		p.errorf(o.at, "%s: expected exactly one of counter, fixed, from_response, got %s", ctx, orNone(modes))
		return pp, false
	}
	ok := true
	if modes[0] != "counter" {
		for _, k := range []string{"step", "max"} {
			if o.has(k) {
				p.errorf(o.key(k), "%s: %s is only valid with counter", ctx, k)
				ok = false
			}
		}
	}
	switch modes[0] {
	case "counter":
		start, good := p.integer(o.sub("counter"), o.val("counter"))
		if !good {
			return pp, false
		}
		pp.Counter = &start
		// Plasm's counter grows by 1 per page unless step says otherwise
		// ({counter: 1} is a page number).
		pp.Step = 1
		for _, k := range []string{"step", "max"} {
			kn := o.val(k)
			if kn == nil {
				continue
			}
			v, good := p.integer(o.sub(k), kn)
			if !good {
				ok = false
				continue
			}
			if v < 1 {
				p.errorf(kn, "%s: must be at least 1, got %d", o.sub(k), v)
				ok = false
			}
			if k == "step" {
				pp.Step = v
			} else {
				pp.Max = v
			}
		}
	case "fixed":
		fn := o.val("fixed")
		if isNull(fn) {
			p.errorf(fn, "%s: must not be null", o.sub("fixed"))
			return pp, false
		}
		v, good := p.literal(o.sub("fixed"), fn, 0)
		if !good {
			return pp, false
		}
		pp.Fixed = v
	case "from_response":
		pp.FromResponse = o.name("from_response")
		p.scalarBound(o, "from_response")
		ok = ok && pp.FromResponse != ""
	}
	return pp, ok
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, " and ")
}

func (p *parser) stopWhen(ctx string, at, n *yaml.Node) *catalog.StopWhen {
	o := p.object(ctx, at, n, stopWhenKeys)
	if o == nil {
		return nil
	}
	sw := &catalog.StopWhen{Field: o.name("field")}
	p.scalarBound(o, "field")
	switch {
	case o.has("eq") && o.has("absent"):
		p.errorf(o.at, "%s: expected eq or absent, not both", ctx)
	case o.has("eq"):
		// eq: null is a real condition (stop when the field is null), so
		// HasEq records that eq was written at all.
		sw.Eq, _ = p.literal(o.sub("eq"), o.val("eq"), 0)
		sw.HasEq = true
	case o.has("absent"):
		if !o.boolean("absent") {
			p.errorf(o.val("absent"), "%s: must be true", o.sub("absent"))
		}
		sw.Absent = true
	default:
		p.errorf(o.at, "%s: expected eq: <value> or absent: true", ctx)
	}
	return sw
}
