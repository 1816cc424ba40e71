package cml

import (
	"net/url"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Absolute URLs in a mapping path. Plasm joins a path that holds a full
// http(s) URL by sending to that URL instead of appending it to
// http_backend: hackernews writes its Algolia search as a literal
// https://hn.algolia.com/… segment, and pokeapi's rows use resource URLs
// as ids, which land in the path variable of a get. plasmd does the same
// with one rule Plasm lacks: a URL that comes from a call's values (a row
// or an argument) must be on an origin the catalog declares
// (catalog.DeclaredURLs), or the call fails here, before anything is sent.

// hintUndeclared says what a catalog declares, for the refusal of a URL
// value on another origin.
const hintUndeclared = "a URL taken from a row or an argument may only point at an origin the catalog declares: " +
	"its http_backend, auth.token_url, or an absolute URL written in a mapping's path"

// absoluteSegment is the absolute URL seg holds (a literal written so, or
// a variable whose string value is one), or "".
func (c *compiler) absoluteSegment(seg catalog.Segment, state map[string]any) string {
	switch seg.Type {
	case "literal", "":
		if catalog.IsAbsoluteURL(seg.Value) {
			return seg.Value
		}
	case "var":
		// Only a read follows a URL value: a write's path variable stays
		// one escaped segment, so a row id or an argument cannot aim the
		// tenant's credentials at another resource to change it.
		if m := strings.ToUpper(c.m.Method); m != "" && m != "GET" {
			return ""
		}
		v := c.req.Vars[seg.Name]
		if v == nil {
			v = state[seg.Name]
		}
		if s, ok := v.(string); ok && catalog.IsAbsoluteURL(s) {
			return s
		}
	}
	return ""
}

// restart makes raw the request's base: b is reset to raw's scheme, host
// and path (trailing slashes trimmed, as for http_backend, so the
// segments after it join with one slash), followed by a variable's
// suffix. It returns raw's query string, which goes in front of the
// mapping's query as http_backend's would; a fragment is dropped. The
// base is rebuilt from the parsed URL, so the host checked here is the
// host the request goes to.
func (c *compiler) restart(b *strings.Builder, raw string, seg catalog.Segment) (string, error) {
	u, err := url.Parse(raw)
	origin, ok := catalog.Origin(raw)
	if seg.Type == "var" {
		if err != nil || !ok {
			return "", c.fail("a URL in a path variable is sent to as it is, so it must be a plain http(s) URL: scheme, host, path and query",
				"path variable %q holds a URL that is not a plain absolute http(s) URL (no user info)", seg.Name)
		}
		if !c.cat.DeclaresOrigin(origin) {
			return "", c.fail(hintUndeclared, "path variable %q is a URL on %s, an origin catalog %q does not declare (it declares %s); nothing was sent",
				seg.Name, origin, c.cat.EntryID, strings.Join(c.cat.DeclaredOrigins(), ", "))
		}
		if prefix := b.String(); !underPrefix(u, prefix) {
			return "", c.fail("a URL in a path variable may only name a resource under the path the mapping builds up to it (pokeapi's ids are the very URL its get would call)",
				"path variable %q is the URL %s, which is not under %s/; nothing was sent", seg.Name, u.Redacted(), prefix)
		}
	} else if err != nil || !ok {
		return "", c.fail("write an absolute http(s) URL without user info", "path literal %q is not a plain absolute http(s) URL", raw)
	}
	b.Reset()
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(u.Host)
	b.WriteString(strings.TrimRight(u.EscapedPath(), "/"))
	if seg.Type == "var" {
		b.WriteString(url.PathEscape(seg.Suffix))
	}
	return u.RawQuery, nil
}

// absoluteLiteral is the first absolute URL written as a literal in the
// mapping's path, or "".
func (c *compiler) absoluteLiteral() string {
	for _, seg := range c.m.Path {
		if (seg.Type == "literal" || seg.Type == "") && catalog.IsAbsoluteURL(seg.Value) {
			return seg.Value
		}
	}
	return ""
}

// atHome reports whether raw is on the origin of the catalog's
// http_backend, the only origin the catalog's credentials go to: another
// origin it declares (a third-party search API written as an absolute URL
// in a path) is called without them. The host refuses credentials
// anywhere else too (egress.Client.Do); this keeps the compiled request
// honest about what will be sent.
func (c *compiler) atHome(raw string) bool {
	home, ok := catalog.Origin(c.cat.HTTPBackend)
	if !ok {
		return false
	}
	o, ok := catalog.Origin(raw)
	return ok && o == home
}

// underPrefix reports whether u lies under prefix, the URL a mapping has
// built before its variable (http_backend and the literal segments
// before it): same origin, its path continuing prefix's path after a
// slash, and no "." or ".." segment (in any escaping), which a server
// would resolve to somewhere else.
func underPrefix(u *url.URL, prefix string) bool {
	p, err := url.Parse(prefix)
	if err != nil {
		return false
	}
	uo, ok1 := catalog.Origin(u.String())
	po, ok2 := catalog.Origin(prefix)
	if !ok1 || !ok2 || uo != po {
		return false
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		// Servers differ on what else climbs: a decoded "/" or "\", a
		// ";" parameter after "..", a second round of decoding. A URL
		// value needs none of them.
		dec, err := url.PathUnescape(seg)
		if err != nil || dec == "." || dec == ".." || strings.ContainsAny(dec, "/\\;%") {
			return false
		}
	}
	base := strings.TrimRight(p.EscapedPath(), "/") + "/"
	return strings.HasPrefix(u.EscapedPath(), base)
}
