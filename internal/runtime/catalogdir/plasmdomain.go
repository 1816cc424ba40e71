package catalogdir

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Plasm's domain forms beyond plasmd's original core: agent-tuning keys,
// derived fields, relations without materialize, views, the oauth block.
// Keys that only tune Plasm's prompts (discovery hints, projection
// examples) are checked for shape and otherwise ignored.

var (
	idFormats          = []string{"slug", "uuid", "integer", "email", "other"}
	presentations      = []string{"default", "reference_only", "lossy"}
	aggregatePolicies  = []string{"retain", "omit_when_redundant"}
	deriveTypes        = []string{catalog.DeriveSegmentsAfterPrefix, catalog.DeriveNameValueLookup, catalog.DeriveObjectKeyLookup, catalog.DeriveColonPair}
	deriveKeys         = []string{"type", "prefix", "alternate_prefixes", "part_index", "equals", "match_key_field", "value_field", "key", "case_insensitive", "prefer_keys", "blocks_key", "ref_field", "segment"}
	oauthKeys          = []string{"provider", "scopes", "default_scope_sets", "requirements"}
	inputSchemaKeys    = []string{"input_type", "validation", "description", "examples"}
	preflightStepKinds = []string{"hydrate_invoke_target", "hydrate_entity_ref_param", "query_pick", "label_ids_delta"}
	// preflightKeys lists each step kind's keys.
	preflightKeys = map[string][]string{
		"hydrate_invoke_target":    {"kind", "get", "prefix"},
		"hydrate_entity_ref_param": {"kind", "param", "get", "merge"},
		"query_pick":               {"kind", "when", "query", "scope", "pick", "merge"},
		"label_ids_delta":          {"kind", "add_when", "remove_when", "lookup", "from_preflight", "merge"},
	}
)

// secretName reads the secret of an auth slot: env names the tenant secret;
// Plasm's hosted_kv (a key of its hosted store) is accepted as the secret's
// name when env is absent. One of them is required unless optional.
func secretName(o *object, env, hosted string, optional bool) string {
	if o.has(env) {
		return o.name(env)
	}
	if o.has(hosted) {
		return o.name(hosted)
	}
	if !optional {
		o.missingFor(env, "the name of the tenant secret holding it (or "+hosted+")")
	}
	return ""
}

func (l *loader) parseEntityExtras(p *parser, o *object, e *catalog.Entity) {
	e.Aliases = o.strList("expression_aliases")
	e.Implicit = o.boolean("implicit_request_identity")
	o.boolean("domain_projection_examples")
	o.optOneOf("id_format", idFormats)
	l.parseDiscovery(p, o)
	if e.IDFrom == nil {
		return
	}
	if e.IDField == "" {
		p.errorf(o.key("id_from"), "%s: id_from needs id_field to name the identity", o.ctx)
		return
	}
	if f := e.Fields[e.IDField]; f == nil || f.Path == nil {
		// The id field reads id_from (fieldFromIDFrom), so it is a wire path.
		p.wirePathBound(o, "id_from", o.val("id_from"), e.IDFrom)
		if f == nil {
			// ...and one the entity does not declare is added by that name.
			p.textBound(o.sub("id_field"), o.val("id_field"), e.IDField)
		}
	}
	l.fieldFromIDFrom(e)
}

// idFromValue is the value domain plasmd gives an id read through id_from
// when no declared field already reads that path.
const idFromValue = "plasmd_id_from"

// fieldFromIDFrom makes the id readable like any field: the id field reads
// its value at id_from (Plasm's row identity path). An id field the entity
// does not declare is added, typed like the field at that path if any.
func (l *loader) fieldFromIDFrom(e *catalog.Entity) {
	if f := e.Fields[e.IDField]; f != nil {
		if f.Path == nil {
			f.Path = e.IDFrom
		}
		return
	}
	ref := ""
	for _, name := range e.FieldOrder {
		if f := e.Fields[name]; slices.Equal(f.WirePath(), e.IDFrom) {
			ref = f.ValueRef
			break
		}
	}
	if ref == "" {
		ref = idFromValue
		if l.cat.Values == nil {
			l.cat.Values = map[string]*catalog.Value{}
		}
		if l.cat.Values[ref] == nil {
			l.cat.Values[ref] = &catalog.Value{Type: "string", Description: "an id read through id_from"}
		}
	}
	e.Fields[e.IDField] = &catalog.Field{Name: e.IDField, ValueRef: ref, Required: true, Path: e.IDFrom}
	e.FieldOrder = append([]string{e.IDField}, e.FieldOrder...)
}

// parseDiscovery checks that a discovery: hint block is a mapping of word
// lists; Plasm's discovery ranks catalogs with it, plasmd does not.
func (l *loader) parseDiscovery(p *parser, o *object) {
	n := o.val("discovery")
	if n == nil {
		return
	}
	do := p.object(o.sub("discovery"), o.key("discovery"), n, nil)
	if do == nil {
		return
	}
	for _, e := range do.ord {
		if e.val.Kind == yaml.SequenceNode {
			p.strList(do.sub(e.key.Value), e.val)
		}
	}
}

func (l *loader) parseFieldExtras(p *parser, o *object, f *catalog.Field) {
	f.Presentation = o.optOneOf("agent_presentation", presentations)
	o.str("mime_type_hint")
	o.str("attachment_media")
	n := o.val("derive")
	if n == nil {
		return
	}
	do := p.object(o.sub("derive"), o.key("derive"), n, nil)
	if do == nil {
		return
	}
	d := &catalog.Derive{Type: do.oneOf("type", deriveTypes)}
	do.check(deriveKeys, "")
	switch d.Type {
	case "":
		return
	case catalog.DeriveSegmentsAfterPrefix:
		d.Prefix = do.name("prefix")
		d.AltPrefixes = do.strList("alternate_prefixes")
		if v := do.val("part_index"); v != nil {
			if i, ok := p.integer(do.sub("part_index"), v); ok {
				if i < 0 || i > 1<<16 {
					p.errorf(v, "%s: must be between 0 and 65536, got %d", do.sub("part_index"), i)
				}
				d.PartIndex = int(i)
			}
		}
	case catalog.DeriveNameValueLookup:
		d.Equals = do.name("equals")
		d.MatchKey, d.ValueField = "name", "value"
		if do.has("match_key_field") {
			d.MatchKey = do.name("match_key_field")
		}
		if do.has("value_field") {
			d.ValueField = do.name("value_field")
		}
		d.CaseInsensitive = do.boolean("case_insensitive")
	case catalog.DeriveObjectKeyLookup:
		d.Key = do.name("key")
		d.CaseInsensitive = do.boolean("case_insensitive")
	case catalog.DeriveColonPair:
		d.PreferKeys = do.strList("prefer_keys")
		d.BlocksKey = do.name("blocks_key")
		d.RefField = "ref"
		if do.has("ref_field") {
			d.RefField = do.name("ref_field")
		}
		d.Segment = do.name("segment")
	}
	p.deriveBounds(do, d.Type)
	f.Derive = d
}

// relationWithoutMaterialize handles a relation that declares no
// materialize. With the legacy via_param it is query_scoped through the
// target's only query that takes that parameter; otherwise it is declared
// but not traversable, as in Plasm (the planner says so when followed).
func (l *loader) relationWithoutMaterialize(p *parser, parent *catalog.Entity, r *catalog.Relation, o *object) {
	vn := o.val("via_param")
	if vn == nil {
		return
	}
	param := p.name(o.sub("via_param"), vn)
	if param == "" {
		return
	}
	l.later(func() {
		var found []string
		for _, name := range l.capNames {
			cp := l.cat.Capabilities[name]
			if cp.Entity == r.Target && (cp.Kind == catalog.KindQuery || cp.Kind == catalog.KindSearch) && l.params(cp)[param] {
				found = append(found, name)
			}
		}
		switch len(found) {
		case 1:
			r.Materialize = catalog.Materialize{Kind: catalog.QueryScoped, Capability: found[0], Param: param}
		case 0:
			p.warnf(vn, "%s: no query of %s takes %q; the relation is declared but not traversable", o.sub("via_param"), r.Target, param)
		default:
			p.warnf(vn, "%s: several queries of %s take %q (%v); the relation is declared but not traversable (write materialize: {kind: query_scoped, capability, param})", o.sub("via_param"), r.Target, param, found)
		}
	})
}

// checkGetScoped verifies a get_scoped_bindings relation: a get of the
// target whose parameters or path take every binding.
func (l *loader) checkGetScoped(p *parser, r *catalog.Relation, mo *object) {
	m := &r.Materialize
	if m.Capability == "" {
		return
	}
	capNode := mo.val("capability")
	l.later(func() {
		cp := l.cat.Capabilities[m.Capability]
		switch {
		case l.broken["capability:"+m.Capability]:
		case cp == nil:
			p.errorf(capNode, "%s.capability: %s", mo.ctx, p.unknownRefOf("capability", m.Capability, "", l.capNames))
		case cp.Kind != catalog.KindGet && cp.Kind != catalog.KindSingleton:
			p.errorf(capNode, "%s.capability: %q is a %s; get_scoped_bindings needs a get", mo.ctx, cp.Name, cp.Kind)
		case r.Target != "" && cp.Entity != r.Target:
			p.errorf(capNode, "%s.capability: %q is on entity %q, not the relation target %q", mo.ctx, cp.Name, cp.Entity, r.Target)
		}
	})
}

func (l *loader) parseCapabilityExtras(p *parser, o *object, cp *catalog.Capability) {
	cp.ScopeAggregateKeyPolicy = o.optOneOf("scope_aggregate_key_policy", aggregatePolicies)
	l.parseDiscovery(p, o)
	if n := o.val("input_schema"); n != nil {
		l.parseInputSchema(p, o, n, cp)
	}
	if n := o.val("preflight"); n != nil {
		l.parsePreflight(p, o.sub("preflight"), n, cp)
	}
}

// parseInputSchema accepts Plasm's structured input for an object whose
// declared fields come from parameters: additional_fields: true opens the
// input to any field. Typed input fields beyond parameters are Plasm's
// own type language, which plasmd does not model: such a capability loads
// but is not executable here.
func (l *loader) parseInputSchema(p *parser, o *object, n *yaml.Node, cp *catalog.Capability) {
	io := p.object(o.sub("input_schema"), o.key("input_schema"), n, inputSchemaKeys)
	if io == nil {
		return
	}
	tn := io.val("input_type")
	if tn == nil {
		io.missing("input_type")
		return
	}
	to := p.object(io.sub("input_type"), io.key("input_type"), tn, nil)
	if to == nil {
		return
	}
	t := to.str("type")
	if t != "object" {
		cp.Unavailable = fmt.Sprintf("input_schema of type %q is Plasm's structured input, which plasmd does not model", t)
		return
	}
	to.check([]string{"type", "fields", "additional_fields"}, "for type object")
	cp.OpenInput = to.boolean("additional_fields")
	if fn := to.val("fields"); fn != nil && (fn.Kind != yaml.SequenceNode || len(fn.Content) > 0) {
		cp.Unavailable = "input_schema declares typed input fields (Plasm's structured input), which plasmd does not model; declare them as parameters"
	}
}

// parsePreflight checks Plasm's preflight steps (a get run before the
// capability to fill parent_* variables). plasmd does not run preflights,
// so the capability is not executable here.
func (l *loader) parsePreflight(p *parser, ctx string, n *yaml.Node, cp *catalog.Capability) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of steps, got %s", ctx, describe(n))
		return
	}
	why := ""
	for i, c := range n.Content {
		so := p.object(index(ctx, i), c, c, nil)
		if so == nil {
			continue
		}
		kind := so.oneOf("kind", preflightStepKinds)
		if kind == "" {
			continue
		}
		so.check(preflightKeys[kind], "for kind "+kind)
		if kind == catalog.PreHydrateTarget {
			cp.Preflight = append(cp.Preflight, catalog.PreflightStep{Kind: kind, Get: so.name("get"), Prefix: so.name("prefix")})
		} else {
			why = kind
		}
		for _, k := range []string{"get", "query", "lookup"} {
			if !so.has(k) {
				continue
			}
			ref, rn, rctx := so.name(k), so.val(k), so.sub(k)
			l.later(func() {
				if ref != "" && l.cat.Capabilities[ref] == nil && !l.broken["capability:"+ref] {
					p.errorf(rn, "%s: %s", rctx, p.unknownRefOf("capability", ref, "", l.capNames))
				}
			})
		}
	}
	if why != "" {
		cp.Unavailable = "preflight step " + why + " is not run by plasmd (only hydrate_invoke_target is)"
	}
	if cp.Kind == catalog.KindCreate && len(cp.Preflight) > 0 {
		cp.Preflight = nil // Plasm skips hydrate_invoke_target for create: there is no target yet
	}
}

// parseDomainExtras reads Plasm's top-level oauth:, views: and
// schema_overlay: blocks.
func (l *loader) parseDomainExtras(p *parser, o *object) {
	if n := o.val("oauth"); n != nil {
		if oo := p.object("oauth", o.key("oauth"), n, oauthKeys); oo != nil {
			a := &catalog.OAuth{Provider: oo.name("provider")}
			if sn := oo.val("scopes"); sn != nil {
				if es, ok := p.pairs("oauth.scopes", sn); ok {
					for _, e := range es {
						a.Scopes = append(a.Scopes, e.key.Value)
					}
				}
			}
			l.cat.OAuth = a
		}
	}
	if n := o.val("schema_overlay"); n != nil {
		// A runtime overlay fetches extra schema from the API at session
		// start (Plasm's hosted feature); the static catalog is complete
		// without it.
		p.object("schema_overlay", o.key("schema_overlay"), n, nil)
	}
	if n := o.val("views"); n != nil {
		es, _ := p.pairs("views", n)
		for _, e := range es {
			l.parseView(p, "views."+e.key.Value, e.key, e.val)
		}
	}
}
