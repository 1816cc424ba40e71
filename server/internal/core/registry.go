package core

import (
	"fmt"
	"slices"
	"sort"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// Registry is the set of catalogs this process serves, addressed by entry
// id or registry alias. It is immutable once built.
type Registry struct {
	byID    map[string]*catalog.Catalog
	alias   map[string]string
	origins map[string][]egress.Origin
	ids     []string
}

// NewRegistry indexes catalogs. A catalog's allowed egress destinations are
// the origins it declares (catalog.DeclaredURLs): its http_backend, its
// token_url, and absolute URLs written in its mappings' paths.
func NewRegistry(cats []*catalog.Catalog) (*Registry, error) {
	r := &Registry{byID: map[string]*catalog.Catalog{}, alias: map[string]string{}, origins: map[string][]egress.Origin{}}
	for _, c := range cats {
		if _, dup := r.byID[c.EntryID]; dup {
			return nil, fmt.Errorf("registry: catalog %q is loaded twice", c.EntryID)
		}
		r.byID[c.EntryID] = c
		r.ids = append(r.ids, c.EntryID)
		if c.HTTPBackend != "" {
			o, err := egress.ParseOrigin(c.HTTPBackend)
			if err != nil {
				return nil, fmt.Errorf("registry: catalog %q: http_backend: %w", c.EntryID, err)
			}
			r.origins[c.EntryID] = []egress.Origin{o}
		} else {
			// The home origin comes first (egress.Client.Do sends
			// credentials there only, and trusts an IP literal on the
			// host's own networks there, and in the token slot for the
			// token fetch only); a
			// catalog with no http_backend has none, which the zero
			// Origin, matching no URL, stands for.
			r.origins[c.EntryID] = []egress.Origin{{}}
		}
		// An oauth2_client_credentials token endpoint is a declared
		// destination too, and the second entry: egress fetches tokens
		// only from the home origin or that one (the zero Origin when the
		// catalog names none).
		var tok egress.Origin
		if c.Auth.TokenURL != "" {
			o, err := egress.ParseOrigin(c.Auth.TokenURL)
			if err != nil {
				return nil, fmt.Errorf("registry: catalog %q: auth.token_url: %w", c.EntryID, err)
			}
			tok = o
		}
		r.origins[c.EntryID] = append(r.origins[c.EntryID], tok)
		// An absolute URL written in a mapping's path (hackernews's Algolia
		// search) declares its origin; URLs that arrive in rows declare
		// nothing (the compiler refuses those on other origins).
		for _, u := range c.DeclaredURLs() {
			if u == c.HTTPBackend || u == c.Auth.TokenURL {
				continue
			}
			o, err := egress.ParseOrigin(u)
			if err != nil {
				return nil, fmt.Errorf("registry: catalog %q: mapping path URL: %w", c.EntryID, err)
			}
			if !slices.Contains(r.origins[c.EntryID], o) {
				r.origins[c.EntryID] = append(r.origins[c.EntryID], o)
			}
		}
	}
	for _, c := range cats {
		for _, a := range c.RegistryAliases {
			if _, clash := r.byID[a]; clash {
				return nil, fmt.Errorf("registry: alias %q of %q is another catalog's id", a, c.EntryID)
			}
			if other, clash := r.alias[a]; clash && other != c.EntryID {
				return nil, fmt.Errorf("registry: alias %q is claimed by %q and %q", a, other, c.EntryID)
			}
			r.alias[a] = c.EntryID
		}
	}
	sort.Strings(r.ids)
	return r, nil
}

// Resolve maps an entry id or alias to its catalog.
func (r *Registry) Resolve(name string) (*catalog.Catalog, bool) {
	if c, ok := r.byID[name]; ok {
		return c, true
	}
	if id, ok := r.alias[name]; ok {
		return r.byID[id], true
	}
	return nil, false
}

// IDs returns entry ids, sorted.
func (r *Registry) IDs() []string { return slices.Clone(r.ids) }

// Visible returns the catalogs a predicate admits, sorted by entry id.
func (r *Registry) Visible(allow func(entryID string) bool) []*catalog.Catalog {
	var out []*catalog.Catalog
	for _, id := range r.ids {
		if allow(id) {
			out = append(out, r.byID[id])
		}
	}
	return out
}

// Origins returns the egress allowlist for the given entries.
func (r *Registry) Origins(entries []string) map[string][]egress.Origin {
	out := make(map[string][]egress.Origin, len(entries))
	for _, e := range entries {
		out[e] = r.origins[e]
	}
	return out
}
