package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/idna"
)

// Declared origins: where a catalog's requests may go. The host's egress
// allowlist and the guest's request compiler both derive them from here,
// so the two cannot disagree about what a catalog declares.

// IsAbsoluteURL reports whether s starts with an http:// or https://
// scheme (in any case). A path segment of that form names a whole request
// URL rather than one segment: Plasm's hackernews catalog writes its
// Algolia search as such a literal, and pokeapi rows use resource URLs as
// their ids.
func IsAbsoluteURL(s string) bool {
	return hasPrefixFold(s, "https://") || hasPrefixFold(s, "http://")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ErrHost is wrapped by DialHost for a non-ASCII host IDNA refuses.
var ErrHost = errors.New("not a valid internationalised domain name")

// DialHost is host (as url.URL.Hostname returns it) in the form net/http
// dials it, lower-cased: an ASCII host as written, any other through
// IDNA's lookup profile (golang.org/x/net/idna, the package net/http
// vendors; see its idnaASCII and canonicalAddr). IDNA maps full-width
// digits and ideographic dots to ASCII, so "１２７.０.０.１" and
// "127。0。0。1" (or their percent-encoded UTF-8, which url.Parse
// decodes) are dialled as 127.0.0.1: an origin judged by its written
// form would be judged as a DNS name while the connection goes to an IP
// address. The error wraps ErrHost; net/http would dial such a host as
// written, but no catalog origin is one.
func DialHost(host string) (string, error) {
	if isASCII(host) {
		return strings.ToLower(host), nil
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("host %q: %w: %v", host, ErrHost, err)
	}
	return strings.ToLower(a), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Origin returns the origin of an absolute http(s) URL as
// scheme://host:port, lower-cased, the host as net/http dials it
// (DialHost) and the port explicit, the form two origins are compared
// in. ok is false for anything else, for a host IDNA refuses, and for a
// URL carrying user info, which names no origin a catalog can declare
// (and net/http would turn into credentials).
func Origin(raw string) (origin string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host, err := DialHost(u.Hostname())
	if err != nil || (scheme != "http" && scheme != "https") || host == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port, true
}

// DeclaredURLs lists the URLs whose origins the catalog declares as its
// egress destinations: http_backend, auth.token_url, and every absolute
// URL written literally as a segment of a mapping's path (in mapping
// name order, each once). A URL that arrives in a call's variables (a row
// id such as pokeapi's resource URLs) declares nothing: it may only point
// at one of these origins.
func (c *Catalog) DeclaredURLs() []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(c.HTTPBackend)
	add(c.Auth.TokenURL)
	names := make([]string, 0, len(c.Mappings))
	for name, m := range c.Mappings {
		if m != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, seg := range c.Mappings[name].Path {
			if (seg.Type == "literal" || seg.Type == "") && IsAbsoluteURL(seg.Value) {
				add(seg.Value)
			}
		}
	}
	return out
}

// DeclaresOrigin reports whether origin (as Origin returns it) is the
// origin of one of the catalog's DeclaredURLs. The compiler asks for
// every URL value it follows (each row of pokeapi's URL ids), so a
// frozen catalog answers from the list Freeze made once.
func (c *Catalog) DeclaresOrigin(origin string) bool {
	return slices.Contains(c.DeclaredOrigins(), origin)
}

// DeclaredOrigins is the origins of DeclaredURLs, each once, in order;
// URLs that name no origin are left out (the loader reports them). A
// frozen catalog's answer is shared: callers only read it.
func (c *Catalog) DeclaredOrigins() []string {
	if c.idx != nil {
		return c.idx.origins
	}
	return c.declaredOrigins()
}

func (c *Catalog) declaredOrigins() []string {
	var out []string
	for _, u := range c.DeclaredURLs() {
		if o, ok := Origin(u); ok && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}
