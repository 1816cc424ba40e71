package catalog

import (
	"errors"
	"fmt"
)

// The wire catalog crosses the sandbox boundary: the host's loader builds
// it, but the engine receives it as JSON and must treat it as hostile, so
// Freeze checks it first (Check). The invariants are the ones the
// planner, the request compiler and the decoder rely on when they index
// the catalog without looking: every map entry present and named by its
// key, every name a field order, id, relation, capability, mapping or
// view uses resolving to what it names. Value references are left out:
// every consumer treats a value it cannot find as untyped. The loader
// guarantees all of
// them for the catalogs it builds (TestLoadedCatalogsCheck); a catalog
// that breaks one is refused with the first problem found, in a stable
// order, rather than indexed and later panicked on.

// ErrInvalid is wrapped by every Check error.
var ErrInvalid = errors.New("invalid catalog")

// CheckError is one broken invariant: Where names the element (entity
// Issue, field title), Problem says what is wrong with it.
type CheckError struct {
	Entry, Where, Problem string
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("invalid catalog %q: %s: %s", e.Entry, e.Where, e.Problem)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *CheckError) Unwrap() error { return ErrInvalid }

// Check reports the first broken invariant of c, or nil.
func (c *Catalog) Check() error {
	if c == nil {
		return &CheckError{Where: "catalog", Problem: "missing"}
	}
	k := &checker{c: c}
	k.values()
	k.catalogLimits()
	for name, e := range c.Entities {
		k.entity(name, e)
	}
	for name, cp := range c.Capabilities {
		k.capability(name, cp)
	}
	for name, m := range c.Mappings {
		k.mapping(name, m)
	}
	for name, v := range c.Views {
		k.view(name, v)
	}
	if k.err == nil {
		return nil
	}
	return k.err
}

type checker struct {
	c   *Catalog
	err *CheckError
	// seen is order's scratch set, reused across entities.
	seen map[string]bool
}

// fail records a problem. Maps are walked in Go's random order, so of
// several problems the one kept is the first by where and text: the same
// catalog always gets the same error, without sorting every map (Check
// runs on every catalog an instance loads).
func (k *checker) fail(where, format string, args ...any) {
	e := &CheckError{Entry: k.c.EntryID, Where: where, Problem: fmt.Sprintf(format, args...)}
	if k.err == nil || e.Where < k.err.Where || (e.Where == k.err.Where && e.Problem < k.err.Problem) {
		k.err = e
	}
}

func (k *checker) values() {
	// A value_ref, items_ref or entity_ref target naming nothing is not
	// checked: every consumer looks values and their targets up and
	// treats a missing one as untyped (FuzzWireCatalog), and catalogs
	// built in code often name types they do not declare.
	for name, v := range k.c.Values {
		if v == nil {
			k.fail("value "+name, "is null")
		} else if len(v.Type) > MaxText {
			k.fail("value "+name, "type of %d bytes, limit %d", len(v.Type), MaxText)
		}
	}
}

func (k *checker) entity(name string, e *Entity) {
	where := entityWhere(name)
	if e == nil {
		k.fail(where.at(), "is null")
		return
	}
	if e.Name != name {
		k.fail(where.at(), "is named %q inside", e.Name)
	}
	for fn, f := range e.Fields {
		switch {
		case f == nil:
			k.fail(where.at("field "+fn), "is null")
		case f.Name != fn:
			k.fail(where.at("field "+fn), "is named %q inside", f.Name)
		}
		if f != nil && (len(fn) > MaxText || len(f.Path) > 0 || f.Derive != nil) {
			k.fieldLimits(where, fn, f)
		}
	}
	if len(e.Fields) > MaxFields {
		k.fail(where.at(), "has %d fields, limit %d", len(e.Fields), MaxFields)
	}
	if len(e.FieldOrder) > 0 {
		k.order(where, "field_order", e.FieldOrder, len(e.Fields), func(n string) bool { return e.Fields[n] != nil })
	}
	// An id read from elsewhere (id_from) or from the request itself
	// (implicit identity) need not be a field, as the loader allows.
	if e.IDField != "" && e.Fields[e.IDField] == nil && e.IDFrom == nil && !e.Implicit {
		k.fail(where.at(), "id_field %q is not one of its fields", e.IDField)
	}
	for _, kv := range e.KeyVars {
		if e.Fields[kv] == nil {
			k.fail(where.at(), "key_vars names %q, which is not one of its fields", kv)
		}
	}
	if e.PrimaryRead != "" && k.c.Capabilities[e.PrimaryRead] == nil {
		k.fail(where.at(), "primary_read names capability %q, which the catalog does not declare", e.PrimaryRead)
	}
	for rn, r := range e.Relations {
		k.relation(where, rn, r)
	}
	if len(e.RelOrder) > 0 {
		k.order(where, "relation_order", e.RelOrder, len(e.Relations), func(n string) bool { return e.Relations[n] != nil })
	}
}

// entityWhere names a place inside entity name; a string built only
// when a problem is found.
type entityWhere string

func (w entityWhere) at(sub ...string) string {
	out := "entity " + string(w)
	for _, s := range sub {
		out += ", " + s
	}
	return out
}

// order checks that names lists each of a map's n keys exactly once.
func (k *checker) order(where entityWhere, what string, names []string, n int, has func(string) bool) {
	if k.seen == nil {
		k.seen = make(map[string]bool, len(names))
	}
	seen := k.seen
	clear(seen)
	for _, s := range names {
		switch {
		case !has(s):
			k.fail(where.at(what), "names %q, which is not declared", s)
			return
		case seen[s]:
			k.fail(where.at(what), "names %q twice", s)
			return
		}
		seen[s] = true
	}
	if len(seen) != n {
		k.fail(where.at(what), "lists %d of %d", len(seen), n)
	}
}

func (k *checker) relation(where entityWhere, name string, r *Relation) {
	switch {
	case r == nil:
		k.fail(where.at("relation "+name), "is null")
		return
	case r.Name != name:
		k.fail(where.at("relation "+name), "is named %q inside", r.Name)
	case k.c.Entities[r.Target] == nil:
		k.fail(where.at("relation "+name), "targets entity %q, which the catalog does not declare", r.Target)
	}
	// The decoder reads anything but "one" as many, so a misspelt "ONE"
	// would silently accept several values where one is declared.
	if r.Cardinality != "one" && r.Cardinality != "many" {
		k.fail(where.at("relation "+name), "cardinality %q is not one or many", r.Cardinality)
	}
	m := r.Materialize
	switch m.Kind {
	case "":
	case FromParentGet:
		k.relationLimits(func() string { return where.at("relation " + name) }, name, r)
		for i, st := range m.Path {
			if (st.Key == "") == !st.Wildcard {
				k.fail(where.at("relation "+name), "materialize path step %d must be a key or a wildcard", i+1)
			}
		}
	case QueryScoped, QueryScopedBindings, GetScopedBindings:
		if k.c.Capabilities[m.Capability] == nil {
			k.fail(where.at("relation "+name), "materialize names capability %q, which the catalog does not declare", m.Capability)
		}
	default:
		k.fail(where.at("relation "+name), "materialize kind %q is not one plasmd knows", m.Kind)
	}
}

func (k *checker) capability(name string, cp *Capability) {
	if len(name) > MaxText {
		k.fail("capability", "name of %d bytes, limit %d", len(name), MaxText)
	}
	if cp != nil && cp.Name == name && k.c.Entities[cp.Entity] != nil && len(cp.Parameters) == 0 && len(cp.Preflight) == 0 {
		return // the common case, without building where
	}
	where := "capability " + name
	switch {
	case cp == nil:
		k.fail(where, "is null")
		return
	case cp.Name != name:
		k.fail(where, "is named %q inside", cp.Name)
	case k.c.Entities[cp.Entity] == nil:
		k.fail(where, "is on entity %q, which the catalog does not declare", cp.Entity)
	}
	seen := map[string]bool{}
	for _, p := range cp.Parameters {
		if seen[p.Name] {
			k.fail(where, "declares parameter %q twice", p.Name)
		}
		seen[p.Name] = true
	}
	for _, st := range cp.Preflight {
		if st.Get != "" && k.c.Capabilities[st.Get] == nil {
			k.fail(where, "preflight reads capability %q, which the catalog does not declare", st.Get)
		}
	}
}

func (k *checker) mapping(name string, m *Mapping) {
	const where = "mapping "
	switch {
	case m == nil:
		k.fail(where+name, "is null")
		return
	case k.c.Capabilities[name] == nil:
		k.fail(where+name, "maps capability %q, which the catalog does not declare", name)
	}
	if m.Response != nil || m.Pagination != nil {
		k.mappingLimits(func() string { return where + name }, m)
	}
	for i, s := range m.Path {
		if s.Type != "literal" && s.Type != "var" {
			k.fail(where+name, "path segment %d has type %q (literal or var)", i+1, s.Type)
		}
	}
	for _, e := range [...]*Expr{m.Query, m.Body, m.Headers} {
		if e != nil && !k.expr(e, 0) {
			k.fail(where+name, "an expression is null where its parent needs one, or nests deeper than %d", maxExprDepth)
		}
	}
	if p := m.Pagination; p != nil {
		for _, n := range p.ParamOrder {
			if _, ok := p.Params[n]; !ok {
				k.fail(where+name, "pagination param_order names %q, which is not one of its params", n)
			}
		}
	}
}

// maxExprDepth bounds how deep a mapping's expressions nest; the
// compiler walks them recursively.
const maxExprDepth = 64

// expr reports whether an expression tree has a node wherever its
// parent needs one and nests at most maxExprDepth deep.
func (k *checker) expr(e *Expr, depth int) bool {
	if depth > maxExprDepth {
		return false
	}
	ok := func(c *Expr) bool { return c != nil && k.expr(c, depth+1) }
	opt := func(c *Expr) bool { return c == nil || k.expr(c, depth+1) }
	for _, it := range e.Items {
		if !ok(it) {
			return false
		}
	}
	for _, kv := range e.Fields {
		if !ok(kv.Value) {
			return false
		}
	}
	for _, v := range e.Vars {
		if !ok(v) {
			return false
		}
	}
	if c := e.Cond; c != nil {
		if c.Equals != nil && (!opt(c.Equals.Left) || !opt(c.Equals.Right)) {
			return false
		}
		if !opt(c.Bool) {
			return false
		}
	}
	return opt(e.Then) && opt(e.Else) && opt(e.Expr)
}

func (k *checker) view(name string, v *View) {
	where := "view " + name
	if v == nil {
		k.fail(where, "is null")
		return
	}
	if k.c.Entities[v.Entity] == nil {
		k.fail(where, "is of entity %q, which the catalog does not declare", v.Entity)
	}
	for _, s := range v.Serves {
		if k.c.Capabilities[s] == nil {
			k.fail(where, "serves capability %q, which the catalog does not declare", s)
		}
	}
	nodes := map[string]bool{}
	for _, n := range v.Nodes {
		if k.c.Capabilities[n.Capability] == nil {
			k.fail(where+", node "+n.ID, "calls capability %q, which the catalog does not declare", n.Capability)
		}
		for _, b := range n.Bind {
			if b.Kind == ViewField && !nodes[b.Node] {
				k.fail(where+", node "+n.ID, "binds %s from node %q, which does not come before it", b.Param, b.Node)
			}
		}
		nodes[n.ID] = true
	}
	for _, ro := range v.Relations {
		if k.c.Entities[ro.Target] == nil {
			k.fail(where+", relation "+ro.Relation, "targets entity %q, which the catalog does not declare", ro.Target)
		}
		if !nodes[ro.Node] {
			k.fail(where+", relation "+ro.Relation, "reads node %q, which the view does not have", ro.Node)
		}
	}
	for _, o := range v.Output {
		if o.Node != "" && !nodes[o.Node] {
			k.fail(where+", output "+o.Field, "reads node %q, which the view does not have", o.Node)
		}
	}
}
