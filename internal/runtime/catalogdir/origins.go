package catalogdir

import (
	"net/url"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// IP-literal origins. Hosts are judged in the form net/http dials them
// (catalog.DialHost: IDNA for a non-ASCII host), so an address spelled
// "１２７.０.０.１" is refused, not taken for a name. Egress dials an IP
// literal at http_backend as declared even on the host's own networks,
// auth.token_url's so for the token fetch only, and gives one anywhere
// else a DNS answer's checks (egress/literal.go). The loader refuses a
// host no configuration dials (a zone id, an unspecified or multicast
// address, an IPv4 address in a form resolvers disagree on or in
// non-ASCII characters, a host IDNA refuses) and warns, at its line and
// column, about every other literal whose reach depends on
// --egress-allow-private, or that sits outside http_backend, so `plasmd
// catalog check` shows what the server would refuse to start with
// (server/egresscheck.go) and a reviewer sees every address a catalog
// names.

// declaredOrigin checks raw, a URL declared at node n under ctx
// (http_backend, auth.token_url or a mapping path literal), once every
// file is parsed and the catalog's home origins are known.
func (p *parser) declaredOrigin(n *yaml.Node, ctx, raw string) {
	p.l.later(func() { p.l.checkOrigin(p, n, ctx, raw) })
}

// hostProblem says, after a colon, why raw's host names no origin when
// IDNA refuses it (catalog.DialHost), or is "".
func hostProblem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if _, err := catalog.DialHost(u.Hostname()); err != nil {
		return ": " + err.Error()
	}
	return ""
}

func (l *loader) checkOrigin(p *parser, n *yaml.Node, ctx, raw string) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return // reported where it was read
	}
	class, err := egress.ClassifyHost(u.Hostname())
	if err != nil {
		p.errorf(n, "%s: %v", ctx, err)
		return
	}
	origin, _ := catalog.Origin(raw)
	backend, _ := catalog.Origin(l.cat.HTTPBackend)
	token, _ := catalog.Origin(l.cat.Auth.TokenURL)
	switch {
	case class == egress.HostName:
	case class == egress.HostSensitive:
		p.warnf(n, "%s: %s is a link-local or cloud metadata address (or reaches one); egress never dials it, and the server refuses to start with this catalog, unless --egress-allow-private names that address (or, for link-local, a range within 169.254.0.0/16 or fe80::/10)", ctx, origin)
	case origin == backend:
		// The operator's own deployment: dialled as declared.
	case class == egress.HostPrivate && ctx == "auth.token_url":
		p.warnf(n, "%s: %s is an IP literal on the host's own networks, dialled as declared for the token fetch only (a mapping's request to it gets a DNS answer's checks)", ctx, origin)
	case class == egress.HostPrivate && origin == token:
		p.warnf(n, "%s: %s is an IP literal on the host's own networks; auth.token_url's origin is trusted for the token fetch only, so the server refuses to start with this catalog unless --egress-allow-private covers it", ctx, origin)
	case class == egress.HostPrivate:
		p.warnf(n, "%s: %s is an IP literal on the host's own networks; an origin outside http_backend gets a DNS answer's checks, so the server refuses to start with this catalog unless --egress-allow-private covers it", ctx, origin)
	default:
		p.warnf(n, "%s: %s is an IP-literal origin, dialled as written with a DNS answer's checks", ctx, origin)
	}
}
