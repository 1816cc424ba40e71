package catalogdir

import (
	"net/url"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// IP-literal origins. Egress dials an IP literal at http_backend or
// auth.token_url as declared even on the host's own networks, and gives
// one anywhere else a DNS answer's checks (egress/literal.go). The loader
// refuses a host no configuration dials (a zone id, an unspecified or
// multicast address, an IPv4 address in a form resolvers disagree on)
// and warns, at its line and column, about every other literal whose
// reach depends on --egress-allow-private, or that sits outside
// http_backend, so `plasmd catalog check` shows what the server would
// refuse to start with (server/egresscheck.go) and a reviewer sees every
// address a catalog names.

// declaredOrigin checks raw, a URL declared at node n under ctx
// (http_backend, auth.token_url or a mapping path literal), once every
// file is parsed and the catalog's home origins are known.
func (p *parser) declaredOrigin(n *yaml.Node, ctx, raw string) {
	p.l.later(func() { p.l.checkOrigin(p, n, ctx, raw) })
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
	case class == egress.HostPrivate && origin == token:
		p.warnf(n, "%s: %s is an IP literal on the host's own networks, dialled as declared because it is the catalog's auth.token_url origin", ctx, origin)
	case class == egress.HostPrivate:
		p.warnf(n, "%s: %s is an IP literal on the host's own networks; an origin outside http_backend and auth.token_url gets a DNS answer's checks, so the server refuses to start with this catalog unless --egress-allow-private covers it", ctx, origin)
	default:
		p.warnf(n, "%s: %s is an IP-literal origin, dialled as written with a DNS answer's checks", ctx, origin)
	}
}
