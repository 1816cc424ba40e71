package tenant

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// This file is the one place a tenant's secret names become values. Every
// caller (compiled requests, vendor-module hooks, hmac) goes through
// Tenant.SecretsFor, so a rule about who may read what (catalog binding
// here; per-principal credentials later) is written once.

// EnvPrefix is the prefix an environment variable needs before the
// anonymous tenant of an auth-off server reads it for a catalog's auth
// block without an explicit --env-allow.
const EnvPrefix = "PLASMD_"

// Secret is one tenant secret and the catalogs allowed to use it. Secret
// names are chosen by catalogs, and a catalog (or its vendor module) may
// declare any name, so the name alone cannot say whose token it is: the
// binding to catalog entry ids can.
type Secret struct {
	Value string `yaml:"value" json:"-"`
	// Catalogs are the entry ids allowed to resolve this secret.
	Catalogs []string `yaml:"catalogs" json:"catalogs"`
}

// UnmarshalYAML accepts only the bound form; the older flat form
// (NAME: value) is refused with the way to write it, since reading it
// would hand the value to any catalog that names it.
func (s *Secret) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a secret must be {value: ..., catalogs: [entry, ...]} so it is bound to the catalogs allowed to use it", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "value", "catalogs":
		default:
			return fmt.Errorf("line %d: unknown secret field %q (want value, catalogs)", k.Line, k.Value)
		}
	}
	type plain Secret
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if len(p.Catalogs) == 0 {
		return fmt.Errorf("line %d: secret has no catalogs: name the entry ids allowed to use it", n.Line)
	}
	*s = Secret(p)
	return nil
}

// Bind returns values bound each to the catalogs in bindings (name →
// entry ids); a name without a binding is left out, so it resolves for
// no catalog. It is for built-in tenants (the demo's anonymous secrets).
func Bind(values map[string]string, bindings map[string][]string) map[string]Secret {
	out := make(map[string]Secret, len(values))
	for name, v := range values {
		if cats := bindings[name]; len(cats) > 0 {
			out[name] = Secret{Value: v, Catalogs: slices.Clone(cats)}
		}
	}
	return out
}

// ErrEnvAllow is a malformed --env-allow entry.
var ErrEnvAllow = errors.New("bad --env-allow")

// EnvPolicy is what an auth-off server's anonymous tenant may read from the
// process environment. By default only variables with EnvPrefix that a
// catalog names in its auth block; the operator can allow more names
// (for auth-block use) or bind a name to catalogs (for any use the catalog
// declares, e.g. a vendor module's secret). A name a catalog declares only
// under module.secrets is never read unless bound, so a module cannot ask
// for TRACKER_TOKEN or AWS_SECRET_ACCESS_KEY and get it.
type EnvPolicy struct {
	authNames map[string]bool     // allowed for auth-block use without the prefix
	bound     map[string][]string // name → catalogs, for any declared use
	lookup    func(string) (string, bool)
}

// ParseEnvAllow reads --env-allow entries: NAME (auth-block use by any
// catalog) or NAME=entry[,entry...] (bound to those catalogs).
func ParseEnvAllow(specs []string) (*EnvPolicy, error) {
	p := &EnvPolicy{authNames: map[string]bool{}, bound: map[string][]string{}, lookup: os.LookupEnv}
	for _, s := range specs {
		name, cats, hasCats := strings.Cut(strings.TrimSpace(s), "=")
		if !validEnvName(name) {
			return nil, fmt.Errorf("%w %q: want NAME or NAME=catalog[,catalog]", ErrEnvAllow, s)
		}
		if !hasCats {
			p.authNames[name] = true
			continue
		}
		for _, c := range strings.Split(cats, ",") {
			if c = strings.TrimSpace(c); c == "" {
				return nil, fmt.Errorf("%w %q: empty catalog id", ErrEnvAllow, s)
			}
			p.bound[name] = append(p.bound[name], c)
		}
	}
	return p, nil
}

// WithLookup returns p reading variables through lookup (tests).
func (p *EnvPolicy) WithLookup(lookup func(string) (string, bool)) *EnvPolicy {
	q := *p
	q.lookup = lookup
	return &q
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// env reads name for catalog c, or reports false when the policy does not
// let c read it.
func (p *EnvPolicy) env(c *catalog.Catalog, name string) (string, bool) {
	if p == nil || p.lookup == nil {
		return "", false
	}
	allowed := slices.Contains(p.bound[name], c.EntryID)
	if !allowed && isAuthName(c, name) {
		allowed = strings.HasPrefix(name, EnvPrefix) || p.authNames[name]
	}
	if !allowed {
		return "", false
	}
	return p.lookup(name)
}

func isAuthName(c *catalog.Catalog, name string) bool {
	for _, n := range []string{c.Auth.Env, c.Auth.ClientIDEnv, c.Auth.ClientSecretEnv} {
		if n != "" && n == name {
			return true
		}
	}
	return false
}

// SecretsFor returns the secrets catalog c may resolve for this tenant:
// a name must be declared by c (its auth's env names or its module's
// secrets) and bound to c in the tenant's secrets, or, for the anonymous
// tenant, allowed by its EnvPolicy. Anything else is refused as not
// configured, whatever names the catalog declares.
func (t *Tenant) SecretsFor(c *catalog.Catalog) egress.Secrets {
	return egress.ScopeSecrets(boundSecrets{t: t, c: c}, c.EntryID, c.SecretNames())
}

// SecretFor resolves a secret the tenants file names for catalog entryID
// itself (e.g. a token_exchange entry's client credentials): only a secret
// bound to that catalog resolves.
func (t *Tenant) SecretFor(entryID, name string) (string, bool) {
	if s, ok := t.Secrets[name]; ok && slices.Contains(s.Catalogs, entryID) {
		return s.Value, true
	}
	return "", false
}

// boundSecrets resolves a tenant's secrets as catalog c may see them.
type boundSecrets struct {
	t *Tenant
	c *catalog.Catalog
}

func (b boundSecrets) Secret(name string) (string, bool) {
	if s, ok := b.t.Secrets[name]; ok && slices.Contains(s.Catalogs, b.c.EntryID) {
		return s.Value, true
	}
	if b.t.ID == Anonymous {
		return b.t.Env.env(b.c, name)
	}
	return "", false
}

// validateSecrets checks bindings against the tenant's catalog list: a
// secret bound only to catalogs the tenant may not use is a typo.
func (t *Tenant) validateSecrets() error {
	names := make([]string, 0, len(t.Secrets))
	for n := range t.Secrets {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, c := range t.Secrets[n].Catalogs {
			if !t.Allows(c) {
				return fmt.Errorf("secret %s is bound to catalog %s, which the tenant may not use", n, c)
			}
		}
	}
	return nil
}
