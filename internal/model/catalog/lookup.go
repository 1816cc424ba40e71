package catalog

import (
	"slices"
	"sort"
	"strings"
)

// MethodLabel is the label agents use for a capability: its name without the
// "<entity_lower>_" prefix, with "_" replaced by "-" (issue_add_label → add-label).
func MethodLabel(c *Capability) string {
	name := c.Name
	prefix := strings.ToLower(c.Entity) + "_"
	name = strings.TrimPrefix(name, prefix)
	return strings.ReplaceAll(name, "_", "-")
}

// CapabilitiesOf returns the capabilities on entity, sorted by name so that
// every caller sees the same order. Capabilities plasmd cannot execute
// (Unavailable) are left out: they are neither taught nor planned.
// The result is shared once the catalog is frozen: callers only read it.
func (c *Catalog) CapabilitiesOf(entity string) []*Capability {
	if c.idx != nil {
		if i := c.idx.capsOf.find(entity); i >= 0 {
			return c.idx.capsOfVals[i]
		}
		return nil
	}
	return c.capabilitiesOf(entity)
}

// Freeze checks the catalog (Check) and, when it holds, indexes the
// catalog's capabilities by entity, so CapabilitiesOf
// (which the planner calls for almost every step) no longer walks and
// sorts the whole capability map, and indexes the names of entities,
// capabilities, fields and relations for EntityNamed and its kin
// (names.go), and lists the declared origins (origins.go). The caller
// promises not to change Entities, Capabilities, an entity's Fields or
// Relations, any capability's Entity or Unavailable, HTTPBackend,
// Auth.TokenURL or a mapping's Path afterwards: the
// engine freezes each catalog once it is installed in an instance, where
// nothing changes it until it is replaced. Host code, which edits
// catalogs while loading them, does not freeze. A catalog that fails the
// check is left as it was and its error returned: the engine refuses to
// install it.
func (c *Catalog) Freeze() error {
	if err := c.Check(); err != nil {
		return err
	}
	idx := make(map[string][]*Capability, len(c.Entities))
	for _, cp := range c.Capabilities {
		if _, done := idx[cp.Entity]; !done {
			idx[cp.Entity] = slices.Clip(c.capabilitiesOf(cp.Entity))
		}
	}
	x := c.buildIndex()
	x.capsOf, x.capsOfVals = indexOf(idx)
	x.origins = c.declaredOrigins()
	c.idx = x
	return nil
}

func (c *Catalog) capabilitiesOf(entity string) []*Capability {
	var out []*Capability
	for _, cp := range c.Capabilities {
		if cp.Entity == entity && cp.Unavailable == "" {
			out = append(out, cp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FirstOfKind returns the first capability (by name) of kind on entity, or nil.
func (c *Catalog) FirstOfKind(entity, kind string) *Capability {
	for _, cp := range c.CapabilitiesOf(entity) {
		if cp.Kind == kind {
			return cp
		}
	}
	return nil
}

// GetCapability returns the capability used to read one row of entity:
// primary_read when declared, else the first get.
func (c *Catalog) GetCapability(entity string) *Capability {
	if e := c.EntityNamed(entity); e != nil && e.PrimaryRead != "" {
		if cp := c.CapabilityNamed(e.PrimaryRead); cp != nil && cp.Unavailable == "" {
			return cp
		}
	}
	return c.FirstOfKind(entity, KindGet)
}

// MethodByLabel finds the capability of entity whose MethodLabel (or name) is label.
func (c *Catalog) MethodByLabel(entity, label string) *Capability {
	for _, cp := range c.CapabilitiesOf(entity) {
		if MethodLabel(cp) == label || cp.Name == label {
			return cp
		}
	}
	return nil
}

// Param returns the named parameter of a capability, or nil.
func (c *Capability) Param(name string) *Parameter {
	for i := range c.Parameters {
		if c.Parameters[i].Name == name {
			return &c.Parameters[i]
		}
	}
	return nil
}

// PhraseParam is the parameter a search phrase is sent in: the one with the
// search role, or the first parameter when none declares the role. It is ""
// when the capability has no parameter at all: such a search cannot carry a
// phrase, so the planner refuses `E~"text"` over it and teaching leaves it
// out (one rule, used by both).
func (c *Capability) PhraseParam() string {
	for _, p := range c.Parameters {
		if p.Role == RoleSearch {
			return p.Name
		}
	}
	if len(c.Parameters) > 0 {
		return c.Parameters[0].Name
	}
	return ""
}

// IsRead reports whether the capability only reads.
func (c *Capability) IsRead() bool {
	switch c.Kind {
	case KindQuery, KindSearch, KindGet, KindSingleton:
		return true
	}
	return false
}

// WirePath is the JSON path of a field in the wire object.
func (f *Field) WirePath() []string {
	if len(f.Path) > 0 {
		return f.Path
	}
	return []string{f.Name}
}

// SecretNames returns every secret name the catalog declares: its auth's
// env names and its vendor module's secrets, sorted and without duplicates.
// The host resolves no other name on the catalog's behalf.
func (c *Catalog) SecretNames() []string {
	var names []string
	for _, n := range []string{c.Auth.Env, c.Auth.ClientIDEnv, c.Auth.ClientSecretEnv} {
		if n != "" {
			names = append(names, n)
		}
	}
	if c.Module != nil {
		for _, n := range c.Module.Secrets {
			if n != "" {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	return out
}
