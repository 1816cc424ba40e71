package catalogdir

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Allowed words of the domain format.
var (
	domainKeys   = []string{"version", "description", "http_backend", "auth", "registry_aliases", "values", "entities", "capabilities", "module", "oauth", "views", "schema_overlay"}
	combinedKeys = append(append([]string(nil), domainKeys...), "mappings")

	valueTypes       = []string{"string", "uuid", "integer", "number", "boolean", "select", "multi_select", "date", "array", "entity_ref", "blob", "json"}
	allValueKeys     = []string{"type", "target", "allowed_values", "value_format", "string_semantics", "items", "description"}
	dateFormats      = []string{"rfc3339", "iso8601_date", "unix_ms", "unix_sec"}
	entityKeys       = []string{"id_field", "key_vars", "description", "fields", "relations", "abstract", "primary_read", "id_from", "id_format", "expression_aliases", "implicit_request_identity", "domain_projection_examples", "discovery"}
	fieldKeys        = []string{"value_ref", "required", "description", "path", "derive", "agent_presentation", "mime_type_hint", "attachment_media"}
	relationKeys     = []string{"target", "cardinality", "description", "materialize", "discovery", "via_param"}
	cardinalities    = []string{"one", "many"}
	materializeKinds = []string{catalog.FromParentGet, catalog.QueryScoped, catalog.QueryScopedBindings, catalog.GetScopedBindings}
	capabilityKeys   = []string{"kind", "entity", "description", "parameters", "provides", "output", "input_schema", "preflight", "scope_aggregate_key_policy", "discovery"}
	capabilityKinds  = []string{catalog.KindQuery, catalog.KindSearch, catalog.KindGet, catalog.KindCreate, catalog.KindUpdate, catalog.KindDelete, catalog.KindAction, catalog.KindSingleton}
	parameterKeys    = []string{"name", "value_ref", "required", "role", "description"}
	roles            = []string{catalog.RoleFilter, catalog.RoleSearch, catalog.RoleSort, catalog.RoleSortDirection, catalog.RoleResponseControl, catalog.RoleScope}
	outputKeys       = []string{"type", "description"}
	outputTypes      = []string{"side_effect"}
	authSchemes      = []string{"none", "api_key_header", "api_key_query", "bearer_token", "oauth_bearer", "oauth2_client_credentials"}
	moduleKeys       = []string{"sha256", "hooks", "secrets"}
	moduleHooks      = []string{"prepare_request", "decode_response", "invoke"}
)

// valueKeys lists the keys a value of type t may carry.
func valueKeys(t string) []string {
	keys := []string{"type", "description", "string_semantics"}
	switch t {
	case "select", "multi_select":
		keys = append(keys, "allowed_values")
	case "date":
		keys = append(keys, "value_format")
	case "array":
		keys = append(keys, "items")
	case "entity_ref":
		keys = append(keys, "target")
	}
	return keys
}

// authKeys lists the keys of each auth scheme, required ones after "scheme".
var authKeys = map[string][]string{
	"none":                      {"scheme"},
	"api_key_header":            {"scheme", "header", "env", "hosted_kv"},
	"api_key_query":             {"scheme", "param", "env", "hosted_kv"},
	"bearer_token":              {"scheme", "env", "hosted_kv", "optional_env"},
	"oauth_bearer":              {"scheme", "env", "hosted_kv", "optional_env"},
	"oauth2_client_credentials": {"scheme", "token_url", "client_id_env", "client_secret_env", "client_id_hosted_kv", "client_secret_hosted_kv", "scopes"},
}

// site is where something was declared, for problems found later.
type site struct {
	p   *parser
	key *yaml.Node
}

// parseDomain fills l.cat from the domain document. With combined it also
// accepts the "mappings" key and returns its key and value nodes.
func (l *loader) parseDomain(p *parser, root *yaml.Node, combined bool) (mapKey, mapVal *yaml.Node) {
	allowed := domainKeys
	if combined {
		allowed = combinedKeys
	}
	if root == nil {
		// An empty file is an empty mapping, so that the problem reported is
		// the missing version rather than a type mismatch.
		root = &yaml.Node{Kind: yaml.MappingNode, Line: 1, Column: 1}
	}
	o := p.object("", root, root, allowed)
	if o == nil {
		return nil, nil
	}
	c := l.cat

	if v := o.val("version"); v == nil {
		o.missingFor("version", "an integer ≥ 1")
	} else if n, ok := p.integer("version", v); ok {
		if n < 1 || n > 1<<31-1 {
			p.errorf(v, "version: must be an integer ≥ 1, got %d", n)
		} else {
			c.Version = int(n)
		}
	}
	c.Description = o.str("description")
	if v := o.val("http_backend"); v != nil {
		if s, ok := p.str("http_backend", v); ok {
			if !isHTTPURL(s) {
				p.errorf(v, "http_backend: %q is not an absolute http(s) URL", s)
			} else if msg := portProblem(s); msg != "" && !placeholderPort(s) {
				p.errorf(v, "http_backend: %q: %s", s, msg)
			} else {
				p.declaredOrigin(v, "http_backend", s)
			}
			c.HTTPBackend = s
			p.textBound("http_backend", v, s)
		}
	}
	c.Auth = catalog.Auth{Scheme: "none"}
	if v := o.val("auth"); v != nil {
		l.parseAuth(p, o.key("auth"), v)
	}
	if v := o.val("registry_aliases"); v != nil {
		c.RegistryAliases = p.uniqueList("registry_aliases", v)
		if v.Kind == yaml.SequenceNode {
			for i, a := range v.Content {
				if a.Kind == yaml.ScalarNode && a.Value == l.entryID {
					p.errorf(a, "registry_aliases[%d]: %q is the catalog's own entry id", i, a.Value)
				}
			}
		}
	}
	if v := o.val("values"); v != nil {
		l.parseValues(p, v)
	}
	if v := o.val("entities"); v != nil {
		es, _ := p.pairs("entities", v)
		for _, e := range es {
			if e.key.Value == "" {
				p.errorf(e.key, "entities: entity name must not be empty")
				continue
			}
			if ent := l.parseEntity(p, "entities."+e.key.Value, e.key, e.val); ent != nil {
				c.Entities[e.key.Value] = ent
			} else {
				l.broken["entity:"+e.key.Value] = true
			}
		}
	}
	if v := o.val("capabilities"); v != nil {
		es, _ := p.pairs("capabilities", v)
		for _, e := range es {
			if e.key.Value == "" {
				p.errorf(e.key, "capabilities: capability name must not be empty")
				continue
			}
			p.nameBound(nil, "capabilities", "a capability", e.key)
			if cp := l.parseCapability(p, "capabilities."+e.key.Value, e.key, e.val); cp != nil {
				c.Capabilities[e.key.Value] = cp
			} else {
				l.broken["capability:"+e.key.Value] = true
			}
			l.capSites[e.key.Value] = site{p, e.key}
		}
	}
	if v := o.val("module"); v != nil {
		l.parseModule(p, o.key("module"), v)
	}
	l.parseDomainExtras(p, o)
	if combined {
		return o.key("mappings"), o.val("mappings")
	}
	return nil, nil
}

// parseValues reads the values: map.
func (l *loader) parseValues(p *parser, v *yaml.Node) {
	es, _ := p.pairs("values", v)
	l.cat.Values = make(map[string]*catalog.Value, len(es))
	for _, e := range es {
		if e.key.Value == "" {
			p.errorf(e.key, "values: value name must not be empty")
			continue
		}
		if val := l.parseValue(p, "values."+e.key.Value, e.key, e.val); val != nil {
			l.cat.Values[e.key.Value] = val
			l.valueSites[e.key.Value] = site{p, e.key}
		} else {
			l.broken["value:"+e.key.Value] = true
		}
	}
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

func (l *loader) parseAuth(p *parser, key, val *yaml.Node) {
	o := p.object("auth", key, val, nil)
	if o == nil {
		return
	}
	scheme := o.oneOf("scheme", authSchemes)
	if scheme == "" {
		return
	}
	keys := authKeys[scheme]
	o.check(keys, "for scheme "+scheme)
	a := catalog.Auth{Scheme: scheme}
	switch scheme {
	case "api_key_header":
		a.Header, a.Env = o.name("header"), secretName(o, "env", "hosted_kv", false)
	case "api_key_query":
		a.Param, a.Env = o.name("param"), secretName(o, "env", "hosted_kv", false)
	case "bearer_token", "oauth_bearer":
		a.OptionalEnv = o.boolean("optional_env")
		a.Env = secretName(o, "env", "hosted_kv", a.OptionalEnv)
	case "oauth2_client_credentials":
		a.TokenURL = o.name("token_url")
		if a.TokenURL != "" && !isHTTPURL(a.TokenURL) {
			p.errorf(o.val("token_url"), "auth.token_url: %q is not an absolute http(s) URL", a.TokenURL)
		} else if msg := portProblem(a.TokenURL); msg != "" {
			p.errorf(o.val("token_url"), "auth.token_url: %q: %s", a.TokenURL, msg)
		} else if a.TokenURL != "" {
			p.declaredOrigin(o.val("token_url"), "auth.token_url", a.TokenURL)
		}
		a.ClientIDEnv = secretName(o, "client_id_env", "client_id_hosted_kv", false)
		a.ClientSecretEnv = secretName(o, "client_secret_env", "client_secret_hosted_kv", false)
		a.Scopes = o.strList("scopes")
	}
	if a.Env != "" {
		p.envBound(o)
	}
	l.cat.Auth = a
}

func (l *loader) parseValue(p *parser, ctx string, key, val *yaml.Node) *catalog.Value {
	o := p.object(ctx, key, val, nil)
	if o == nil {
		return nil
	}
	v := &catalog.Value{Type: o.oneOf("type", valueTypes)}
	if v.Type == "" {
		// Kept so that references to it do not report it as undeclared.
		o.check(allValueKeys, "")
		return v
	}
	o.check(valueKeys(v.Type), "for type "+v.Type)
	v.Description = o.str("description")
	v.StringSemantics = o.optName("string_semantics")
	switch v.Type {
	case "select", "multi_select":
		if n := o.val("allowed_values"); n == nil {
			o.missingFor("allowed_values", "for type "+v.Type)
		} else {
			v.AllowedValues = p.uniqueList(o.sub("allowed_values"), n)
			if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
				p.errorf(n, "%s: must list at least one value", o.sub("allowed_values"))
			}
		}
	case "date":
		v.ValueFormat = o.optOneOf("value_format", dateFormats)
	case "array":
		n := o.val("items")
		if n == nil {
			o.missingFor("items", "for type array: items: {value_ref: …}")
			break
		}
		io := p.object(o.sub("items"), o.key("items"), n, []string{"value_ref"})
		if io == nil {
			break
		}
		v.ItemsRef = io.name("value_ref")
		l.valueRef(p, io.sub("value_ref"), io.val("value_ref"), v.ItemsRef)
	case "entity_ref":
		if !o.has("target") {
			o.missingFor("target", "for type entity_ref")
			break
		}
		v.Target = o.name("target")
		l.entityRef(p, o.sub("target"), o.val("target"), v.Target)
	}
	return v
}

// checkArrayCycles refuses arrays whose item chain leads back to itself,
// which would make every consumer that expands item types loop. Each value
// has at most one items edge, so one walk per chain visits every value once.
func (l *loader) checkArrayCycles() {
	const (
		walking = 1
		done    = 2
	)
	state := map[string]int{}
	for _, name := range l.valueNames {
		var chain []string
		at := map[string]int{}
		for cur := name; ; {
			v := l.cat.Values[cur]
			if v == nil || v.Type != "array" || v.ItemsRef == "" || state[cur] == done {
				break
			}
			if state[cur] == walking {
				cycle := append(chain[at[cur]:], cur)
				desc := strings.Join(cycle, " → ")
				if len(cycle) > 8 {
					desc = strings.Join(cycle[:4], " → ") + fmt.Sprintf(" → … (%d values)", len(cycle)-1)
				}
				s := l.valueSites[cur]
				s.p.errorf(s.key, "values.%s: array items refer back to %q: %s", cur, cur, desc)
				break
			}
			state[cur] = walking
			at[cur] = len(chain)
			chain = append(chain, cur)
			cur = v.ItemsRef
		}
		for _, c := range chain {
			state[c] = done
		}
	}
}

// valueRef checks, once every file is parsed, that ref names a value.
func (l *loader) valueRef(p *parser, ctx string, n *yaml.Node, ref string) {
	if ref == "" || n == nil {
		return
	}
	l.later(func() {
		if _, ok := l.cat.Values[ref]; !ok && !l.broken["value:"+ref] {
			p.errorf(n, "%s: %s", ctx, p.unknownRefOf("value", ref, "", l.valueNames))
		}
	})
}

// entityRef checks, once every file is parsed, that ref names an entity.
func (l *loader) entityRef(p *parser, ctx string, n *yaml.Node, ref string) {
	if ref == "" || n == nil {
		return
	}
	l.later(func() {
		if _, ok := l.cat.Entities[ref]; !ok && !l.broken["entity:"+ref] {
			p.errorf(n, "%s: %s", ctx, p.unknownRefOf("entity", ref, "", l.entityNames))
		}
	})
}

func (l *loader) parseEntity(p *parser, ctx string, key, val *yaml.Node) *catalog.Entity {
	o := p.object(ctx, key, val, entityKeys)
	if o == nil {
		return nil
	}
	e := &catalog.Entity{
		Name:        key.Value,
		Description: o.str("description"),
		Fields:      map[string]*catalog.Field{},
		FieldOrder:  []string{},
		Abstract:    o.boolean("abstract"),
	}
	if n := o.val("fields"); n != nil {
		es, _ := p.pairs(o.sub("fields"), n)
		for _, fe := range es {
			p.nameBound(o, "fields", "a field", fe.key)
			if f := l.parseField(p, o.sub("fields")+"."+fe.key.Value, fe.key, fe.val); f != nil {
				e.Fields[f.Name] = f
				e.FieldOrder = append(e.FieldOrder, f.Name)
			}
		}
	}
	if n := o.val("id_from"); n != nil {
		e.IDFrom = l.parseFieldPath(p, o.sub("id_from"), n)
	}
	if n := o.val("id_field"); n != nil {
		e.IDField = p.name(o.sub("id_field"), n)
		// With id_from the id is read from that path, so id_field names
		// the identity rather than a declared field.
		if e.IDField != "" && e.Fields[e.IDField] == nil && e.IDFrom == nil && !o.boolean("implicit_request_identity") {
			p.errorf(n, "%s: %s", o.sub("id_field"), p.unknownRefOf("field", e.IDField, e.Name, e.FieldOrder))
		}
	}
	l.parseEntityExtras(p, o, e)
	if n := o.val("key_vars"); n != nil {
		e.KeyVars = p.uniqueList(o.sub("key_vars"), n)
		if e.IDField == "" && len(e.KeyVars) > 0 {
			e.IDField = e.KeyVars[0] // Plasm: a compound key's first var is the id
		}
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				if c.Value != "" && e.Fields[c.Value] == nil && c.Kind == yaml.ScalarNode {
					p.errorf(c, "%s: %s", index(o.sub("key_vars"), i), p.unknownRefOf("field", c.Value, e.Name, e.FieldOrder))
				}
			}
		}
	}
	if n := o.val("relations"); n != nil {
		es, _ := p.pairs(o.sub("relations"), n)
		for _, re := range es {
			if r := l.parseRelation(p, e, o.sub("relations")+"."+re.key.Value, re.key, re.val); r != nil {
				if e.Relations == nil {
					e.Relations = map[string]*catalog.Relation{}
				}
				e.Relations[r.Name] = r
				e.RelOrder = append(e.RelOrder, r.Name)
			}
		}
	}
	if n := o.val("primary_read"); n != nil {
		e.PrimaryRead = p.name(o.sub("primary_read"), n)
		if e.PrimaryRead != "" {
			ctx := o.sub("primary_read")
			l.later(func() {
				cp := l.cat.Capabilities[e.PrimaryRead]
				switch {
				case l.broken["capability:"+e.PrimaryRead]:
				case cp == nil:
					p.errorf(n, "%s: %s", ctx, p.unknownRefOf("capability", e.PrimaryRead, "", l.capNames))
				case cp.Entity != "" && cp.Entity != e.Name:
					p.errorf(n, "%s: capability %q is on entity %q, not %q", ctx, cp.Name, cp.Entity, e.Name)
				}
			})
		}
	}
	p.fieldsBound(o, key, e)
	return e
}

func (l *loader) parseField(p *parser, ctx string, key, val *yaml.Node) *catalog.Field {
	if key.Value == "" {
		p.errorf(key, "%s: field name must not be empty", strings.TrimSuffix(ctx, "."))
		return nil
	}
	o := p.object(ctx, key, val, fieldKeys)
	if o == nil {
		return nil
	}
	f := &catalog.Field{
		Name:        key.Value,
		ValueRef:    o.name("value_ref"),
		Required:    o.boolean("required"),
		Description: o.str("description"),
	}
	l.valueRef(p, o.sub("value_ref"), o.val("value_ref"), f.ValueRef)
	if n := o.val("path"); n != nil {
		if n.Kind == yaml.SequenceNode && len(n.Content) == 0 && o.has("derive") {
			f.WholeRow = true // path: [] with derive reads the whole row
		} else {
			f.Path = l.parseFieldPath(p, o.sub("path"), n)
			p.wirePathBound(o, "path", n, f.Path)
		}
	}
	l.parseFieldExtras(p, o, f)
	return f
}

// parseFieldPath accepts a list of keys or, as a shorthand, one string of
// keys joined by dots ("user.login").
func (l *loader) parseFieldPath(p *parser, ctx string, n *yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.SequenceNode:
		out = p.strList(ctx, n)
	case yaml.ScalarNode:
		s, ok := p.str(ctx, n)
		if !ok {
			return nil
		}
		out = strings.Split(s, ".")
		for _, k := range out {
			if k == "" {
				p.errorf(n, "%s: %q has an empty key", ctx, s)
				return nil
			}
		}
	default:
		p.errorf(n, "%s: expected a list of keys, got %s", ctx, describe(n))
		return nil
	}
	if len(out) == 0 {
		p.errorf(n, "%s: must name at least one key", ctx)
		return nil
	}
	return out
}

func (l *loader) parseRelation(p *parser, parent *catalog.Entity, ctx string, key, val *yaml.Node) *catalog.Relation {
	if key.Value == "" {
		p.errorf(key, "%s: relation name must not be empty", strings.TrimSuffix(ctx, "."))
		return nil
	}
	o := p.object(ctx, key, val, relationKeys)
	if o == nil {
		return nil
	}
	r := &catalog.Relation{
		Name:        key.Value,
		Target:      o.name("target"),
		Cardinality: o.oneOf("cardinality", cardinalities),
		Description: o.str("description"),
	}
	l.entityRef(p, o.sub("target"), o.val("target"), r.Target)
	l.parseDiscovery(p, o)
	n := o.val("materialize")
	if n == nil {
		// Declared but not traversable (Plasm's "unavailable"), or, with
		// the legacy via_param, scoped through the target's query.
		l.relationWithoutMaterialize(p, parent, r, o)
		return r
	}
	mo := p.object(o.sub("materialize"), o.key("materialize"), n, nil)
	if mo == nil {
		return r
	}
	m := &r.Materialize
	m.Kind = mo.oneOf("kind", materializeKinds)
	switch m.Kind {
	case "":
		mo.check([]string{"kind", "path", "capability", "param", "bindings"}, "")
		l.broken["relation:"+parent.Name+"."+r.Name] = true
	case catalog.FromParentGet:
		mo.check([]string{"kind", "path"}, "for kind "+m.Kind)
		p.nameBound(nil, strings.TrimSuffix(ctx, "."+key.Value), "a relation", key)
		pn := mo.val("path")
		if pn == nil {
			mo.missing("path")
			break
		}
		m.Path = l.parsePathSteps(p, mo.sub("path"), pn)
	case catalog.QueryScoped:
		mo.check([]string{"kind", "capability", "param"}, "for kind "+m.Kind)
		m.Capability = mo.name("capability")
		m.Param = mo.name("param")
		l.checkScoped(p, parent, r, mo)
	case catalog.QueryScopedBindings:
		mo.check([]string{"kind", "capability", "bindings"}, "for kind "+m.Kind)
		m.Capability = mo.name("capability")
		m.Bindings = l.parseBindings(p, parent, mo)
		l.checkScoped(p, parent, r, mo)
	case catalog.GetScopedBindings:
		mo.check([]string{"kind", "capability", "bindings"}, "for kind "+m.Kind)
		m.Capability = mo.name("capability")
		m.Bindings = l.parseBindings(p, parent, mo)
		l.checkGetScoped(p, r, mo)
	}
	return r
}

// parseBindings reads the bindings of a *_scoped_bindings relation:
// target parameter -> parent field.
func (l *loader) parseBindings(p *parser, parent *catalog.Entity, mo *object) map[string]string {
	var out map[string]string
	bn := mo.val("bindings")
	if bn == nil {
		mo.missing("bindings")
	} else if es, ok := p.pairs(mo.sub("bindings"), bn); ok {
		if len(es) == 0 {
			p.errorf(bn, "%s: must bind at least one parameter", mo.sub("bindings"))
		}
		out = make(map[string]string, len(es))
		for _, e := range es {
			if f := p.name(mo.sub("bindings")+"."+e.key.Value, e.val); f != "" {
				out[e.key.Value] = f
				if parent.Fields[f] == nil {
					p.errorf(e.val, "%s: %s", mo.sub("bindings")+"."+e.key.Value, p.unknownRefOf("field", f, parent.Name, parent.FieldOrder))
				}
			}
		}
	}
	return out
}

// checkScoped verifies, once capabilities are known, that a query_scoped*
// relation runs a query or search on its target and binds real parameters.
func (l *loader) checkScoped(p *parser, parent *catalog.Entity, r *catalog.Relation, mo *object) {
	m := &r.Materialize
	if m.Capability == "" {
		return
	}
	capNode, paramNode, bindNode := mo.val("capability"), mo.val("param"), mo.val("bindings")
	ctx := mo.ctx
	l.later(func() {
		cp := l.cat.Capabilities[m.Capability]
		if l.broken["capability:"+m.Capability] {
			return
		}
		if cp == nil {
			p.errorf(capNode, "%s.capability: %s", ctx, p.unknownRefOf("capability", m.Capability, "", l.capNames))
			return
		}
		if cp.Kind != "" && cp.Kind != catalog.KindQuery && cp.Kind != catalog.KindSearch {
			p.errorf(capNode, "%s.capability: %q is a %s; a scoped relation needs a query or search", ctx, cp.Name, cp.Kind)
		}
		if r.Target != "" && cp.Entity != "" && cp.Entity != r.Target {
			p.errorf(capNode, "%s.capability: %q is on entity %q, not the relation target %q", ctx, cp.Name, cp.Entity, r.Target)
		}
		params := l.params(cp)
		if m.Kind == catalog.QueryScoped && m.Param != "" && !params[m.Param] {
			p.errorf(paramNode, "%s.param: %s", ctx, p.unknownRefOf("parameter", m.Param, cp.Name, paramNames(cp)))
		}
		if m.Kind == catalog.QueryScopedBindings && bindNode != nil && bindNode.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(bindNode.Content); i += 2 {
				k := bindNode.Content[i]
				if _, bound := m.Bindings[k.Value]; bound && !params[k.Value] {
					p.errorf(k, "%s.bindings: %s", ctx, p.unknownRefOf("parameter", k.Value, cp.Name, paramNames(cp)))
				}
			}
		}
	})
}

// params returns the parameter names of cp as a set, built once per
// capability so that many references to one capability stay linear.
func (l *loader) params(cp *catalog.Capability) map[string]bool {
	if set, ok := l.paramSets[cp.Name]; ok {
		return set
	}
	set := make(map[string]bool, len(cp.Parameters))
	for _, prm := range cp.Parameters {
		set[prm.Name] = true
	}
	l.paramSets[cp.Name] = set
	return set
}

func paramNames(cp *catalog.Capability) []string {
	out := make([]string, len(cp.Parameters))
	for i, prm := range cp.Parameters {
		out[i] = prm.Name
	}
	return out
}

func (l *loader) parsePathSteps(p *parser, ctx string, n *yaml.Node) []catalog.PathStep {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of {key: k} or {wildcard: true} steps, got %s", ctx, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n, "%s: must have at least one step", ctx)
		return nil
	}
	out := make([]catalog.PathStep, 0, len(n.Content))
	for i, c := range n.Content {
		sctx := index(ctx, i)
		o := p.object(sctx, c, c, []string{"key", "wildcard"})
		if o == nil {
			continue
		}
		switch {
		case o.has("key") && o.has("wildcard"):
			p.errorf(c, "%s: a step is either {key: k} or {wildcard: true}, not both", sctx)
		case o.has("key"):
			out = append(out, catalog.PathStep{Key: o.name("key")})
			p.scalarBound(o, "key")
		case o.has("wildcard"):
			if !o.boolean("wildcard") {
				p.errorf(o.val("wildcard"), "%s.wildcard: must be true", sctx)
				continue
			}
			out = append(out, catalog.PathStep{Wildcard: true})
		default:
			p.errorf(c, "%s: expected {key: k} or {wildcard: true}", sctx)
		}
	}
	if checkBounds && len(out) > catalog.MaxWirePath {
		p.boundf(n, "%s: %d steps, over the limit of %d%s", ctx, len(out), catalog.MaxWirePath, stepsWhy)
	}
	return out
}

func (l *loader) parseCapability(p *parser, ctx string, key, val *yaml.Node) *catalog.Capability {
	o := p.object(ctx, key, val, capabilityKeys)
	if o == nil {
		return nil
	}
	cp := &catalog.Capability{
		Name:        key.Value,
		Kind:        o.oneOf("kind", capabilityKinds),
		Entity:      o.name("entity"),
		Description: o.str("description"),
	}
	l.entityRef(p, o.sub("entity"), o.val("entity"), cp.Entity)
	if n := o.val("parameters"); n != nil {
		cp.Parameters = l.parseParameters(p, o.sub("parameters"), n)
	}
	if n := o.val("provides"); n != nil {
		cp.Provides = p.uniqueList(o.sub("provides"), n)
		pctx := o.sub("provides")
		l.later(func() { l.checkProvidesID(p, pctx, cp, n) })
		l.later(func() {
			ent := l.cat.Entities[cp.Entity]
			if ent == nil || n.Kind != yaml.SequenceNode {
				return
			}
			for i, c := range n.Content {
				// Plasm lets provides name relations too (the capability
				// returns what they are built from).
				if c.Kind == yaml.ScalarNode && c.Value != "" && ent.Fields[c.Value] == nil && ent.Relations[c.Value] == nil {
					if p.suggest(c.Value, ent.FieldOrder) != "" {
						p.errorf(c, "%s: %s", index(pctx, i), p.unknownRefOf("field", c.Value, ent.Name, ent.FieldOrder))
						continue
					}
					p.warnf(c, "%s: %s; rows will not carry it", index(pctx, i), p.unknownRefOf("field", c.Value, ent.Name, ent.FieldOrder))
				}
			}
		})
	}
	if n := o.val("output"); n != nil {
		if oo := p.object(o.sub("output"), o.key("output"), n, outputKeys); oo != nil {
			cp.Output = &catalog.Output{Type: oo.oneOf("type", outputTypes), Description: oo.str("description")}
		}
	}
	l.parseCapabilityExtras(p, o, cp)
	if cp.Kind == catalog.KindAction && !o.has("provides") && !o.has("output") {
		p.errorf(key, "%s: an action must declare provides (the fields it returns) or output: {type: side_effect}", ctx)
	}
	return cp
}

func (l *loader) parseParameters(p *parser, ctx string, n *yaml.Node) []catalog.Parameter {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of {name, value_ref, required, role}, got %s", ctx, describe(n))
		return nil
	}
	out := make([]catalog.Parameter, 0, len(n.Content))
	seen := map[string]bool{}
	for i, c := range n.Content {
		pctx := index(ctx, i)
		o := p.object(pctx, c, c, parameterKeys)
		if o == nil {
			continue
		}
		prm := catalog.Parameter{
			Name:        o.name("name"),
			ValueRef:    o.name("value_ref"),
			Required:    o.boolean("required"),
			Role:        o.optOneOf("role", roles),
			Description: o.str("description"),
		}
		l.valueRef(p, o.sub("value_ref"), o.val("value_ref"), prm.ValueRef)
		if prm.Name != "" {
			if seen[prm.Name] {
				p.errorf(o.val("name"), "%s.name: duplicate parameter %q", pctx, prm.Name)
				continue
			}
			seen[prm.Name] = true
		}
		out = append(out, prm)
	}
	return out
}

func (l *loader) parseModule(p *parser, key, val *yaml.Node) {
	o := p.object("module", key, val, moduleKeys)
	if o == nil {
		return
	}
	m := &catalog.Module{SHA256: strings.ToLower(o.name("sha256"))}
	if m.SHA256 != "" {
		if b, err := hex.DecodeString(m.SHA256); err != nil || len(b) != 32 {
			p.errorf(o.val("sha256"), "module.sha256: expected 64 hex digits (the sha256 of module.wasm), got %s", describe(o.val("sha256")))
		}
	}
	if n := o.val("hooks"); n == nil {
		o.missing("hooks")
	} else {
		for _, h := range p.uniqueList("module.hooks", n) {
			if contains(moduleHooks, h) {
				m.Hooks = append(m.Hooks, h)
			}
		}
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				if c.Kind == yaml.ScalarNode && c.Value != "" && !contains(moduleHooks, c.Value) {
					p.errorf(c, "module.hooks[%d]: %q is not one of %s%s", i, c.Value, strings.Join(moduleHooks, ", "), p.suggest(c.Value, moduleHooks))
				}
			}
		}
		if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
			p.errorf(n, "module.hooks: must list at least one of %s", strings.Join(moduleHooks, ", "))
		}
	}
	// Secret names are the module's whole reach into the tenant's secrets:
	// the host resolves nothing else for it, so the list is kept exact.
	if n := o.val("secrets"); n != nil {
		m.Secrets = p.uniqueList("module.secrets", n)
		if len(m.Secrets) == 0 {
			m.Secrets = nil
		}
	}
	l.cat.Module = m
	l.moduleSite = site{p, key}
}

// hasHook reports whether the catalog's module declares hook.
func (l *loader) hasHook(hook string) bool {
	return l.cat.Module != nil && contains(l.cat.Module.Hooks, hook)
}
