package server

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// checkDeclaredOrigins refuses to start with a catalog that declares an
// origin egress can never dial with the operator's allowed ranges
// (egress.CheckDeclared): an IP literal for a metadata address written in
// a mapping's path is refused here, naming the catalog and the mapping,
// rather than on the first call that reaches it. `plasmd catalog check`
// warns about the same literals at their line and column.
func checkDeclaredOrigins(cats []*catalog.Catalog, allow []netip.Prefix) error {
	var errs []error
	for _, c := range cats {
		// The http_backend's origin is home for every request; the token
		// endpoint's only for the token fetch (egress.Client.Do), so a
		// mapping path on it is judged like any other.
		backend, _ := catalog.Origin(c.HTTPBackend)
		for _, u := range c.DeclaredURLs() {
			o, _ := catalog.Origin(u)
			home := (o == backend && backend != "") || (u == c.Auth.TokenURL && u != "")
			if err := egress.CheckDeclared(u, home, allow); err != nil {
				errs = append(errs, fmt.Errorf("catalog %q: %s: %w", c.EntryID, declaredAt(c, u), err))
			}
		}
	}
	return errors.Join(errs...)
}

// declaredAt names where catalog c declares the URL u.
func declaredAt(c *catalog.Catalog, u string) string {
	switch u {
	case c.HTTPBackend:
		return "http_backend"
	case c.Auth.TokenURL:
		return "auth.token_url"
	}
	var names []string
	for name, m := range c.Mappings {
		if m == nil {
			continue
		}
		for _, seg := range m.Path {
			if (seg.Type == "literal" || seg.Type == "") && seg.Value == u {
				names = append(names, name)
				break
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "a declared URL"
	}
	return fmt.Sprintf("mapping %s's path", names[0])
}
