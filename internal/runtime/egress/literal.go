package egress

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// IP-literal origins. A catalog's http_backend and auth.token_url are the
// two lines an operator edits to point a catalog at their deployment, so
// an IP literal there is dialled as declared even on the host's own
// networks (the demo's loopback backend; a token server on 10.x, for the
// token fetch only: mappings, redirects and URL values on its origin are
// judged like any other). Hosts are judged in the ASCII form net/http
// dials (hostAddr), never as written. Every
// other origin a catalog declares is written by the catalog's author
// inside one of possibly hundreds of mappings, where the operator who
// loads the catalog does not look; an IP literal there gets the checks a
// DNS answer gets. No literal reaches link-local or metadata addresses
// unless the operator names that range, and none reaches what no backend
// can be (unspecified, multicast, broadcast), a zone id, or an IPv4
// address in a form resolvers disagree on (2130706433, 0177.0.0.1,
// 0x7f.1, 127.1). See docs/decisions.md, "IP-literal origins".

// ErrUndialable is wrapped when an origin a catalog declares can never be
// dialled: refused when the catalog loads or the server starts, rather
// than on the first call.
var ErrUndialable = errors.New("origin can never be dialled")

// HostClass is what egress makes of an origin's host.
type HostClass int

// Host classes, from the least to the most guarded.
const (
	// HostName is a DNS name: its answers are checked when dialled.
	HostName HostClass = iota
	// HostPublic is an IP literal outside the ranges below.
	HostPublic
	// HostPrivate is an IP literal on the host's own networks: loopback,
	// RFC 1918, CGNAT, unique-local, local-use NAT64.
	HostPrivate
	// HostSensitive is an IP literal that is link-local or a cloud
	// metadata address.
	HostSensitive
)

// ClassifyHost classifies an origin's host (as url.URL.Hostname returns
// it: no brackets), in the form net/http dials it (hostAddr). IPv4-mapped and NAT64 addresses are classified by the
// IPv4 address they reach. The error wraps ErrUndialable for a host no
// configuration dials.
func ClassifyHost(host string) (HostClass, error) {
	a, err := hostAddr(host)
	if err != nil || !a.IsValid() {
		return HostName, err
	}
	switch _, class, _ := judge(a); class {
	case classNever:
		return 0, fmt.Errorf("%w: %s is an unspecified, multicast, broadcast or IPv4-compatible address, which no backend is", ErrUndialable, host)
	case classSensitive:
		return HostSensitive, nil
	case classPrivate:
		return HostPrivate, nil
	}
	return HostPublic, nil
}

// hostAddr parses host (as url.URL.Hostname returns it, or as net/http
// hands it to dial) as an IP literal, judging the form net/http dials
// (catalog.DialHost: IDNA for a non-ASCII host), so a loopback address
// spelled "１２７.０.０.１" is not taken for a DNS name. It returns the
// zero Addr for a DNS name, and an error wrapping ErrUndialable for a
// host IDNA refuses, an IP address written in non-ASCII characters (no
// reviewer reads it as the address it is), a zone id, or an IPv4 address
// in a non-standard form.
func hostAddr(host string) (netip.Addr, error) {
	ascii, err := catalog.DialHost(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: %v", ErrUndialable, err)
	}
	a, err := netip.ParseAddr(ascii)
	if err != nil {
		if endsInNumber(ascii) {
			return netip.Addr{}, fmt.Errorf("%w: host %q is an IPv4 address in a form resolvers read differently (decimal, octal, hex, shortened or non-ASCII); write it as four decimal parts", ErrUndialable, host)
		}
		return netip.Addr{}, nil
	}
	if ascii != strings.ToLower(host) {
		return netip.Addr{}, fmt.Errorf("%w: host %q is the IP address %s written in non-ASCII characters, which net/http dials as %s; write it in ASCII", ErrUndialable, host, a, a)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%w: %s carries a zone id, which names one of this host's interfaces, not a backend", ErrUndialable, host)
	}
	return a, nil
}

// endsInNumber reports a host the WHATWG URL standard (and inet_aton)
// reads as an IPv4 address: its last label, a trailing dot aside, is
// decimal digits or 0x and hex digits. No DNS top-level label is.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	digits := "0123456789"
	if l := strings.ToLower(last); strings.HasPrefix(l, "0x") {
		last, digits = l[2:], "0123456789abcdef"
	}
	return strings.Trim(last, digits) == ""
}

// CheckDeclared reports whether an origin a catalog declares, the URL
// raw, can be dialled with allow as the operator's allowed ranges. home
// says whether raw is on the origin of the catalog's http_backend, or is
// its auth.token_url, whose literals may be on the host's own networks. The
// error wraps ErrUndialable; a name is never refused here (its answers
// are checked when dialled).
func CheckDeclared(raw string, home bool, allow []netip.Prefix) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUndialable, err)
	}
	o, err := originOf(u)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUndialable, err)
	}
	a, err := hostAddr(u.Hostname())
	if err != nil || !a.IsValid() {
		return err
	}
	if reason := literalRefusal(a, home, allow); reason != "" {
		return fmt.Errorf("%w: %s: %s", ErrUndialable, o, refusalHint(reason, a, home))
	}
	return nil
}

// literalRefusal is addrRefusal for an IP-literal origin: a home
// literal may be on the host's own networks.
func literalRefusal(a netip.Addr, home bool, allow []netip.Prefix) string {
	reason := addrRefusal(a, allow)
	if home && reason == "private_address" {
		return ""
	}
	return reason
}

// refusalHint says why a literal is refused and what would open it.
func refusalHint(reason string, a netip.Addr, home bool) string {
	r, class, widest := judge(a)
	what := r.String()
	switch {
	case nat64Local.Contains(a.Unmap()) && r != a.Unmap():
		what = fmt.Sprintf("%s (which may reach %s through a local-use NAT64)", a, r)
	case r != a.WithZone(""):
		what = fmt.Sprintf("%s (reaching %s)", a, r)
	}
	switch {
	case class == classNever:
		return fmt.Sprintf("%s is an unspecified, multicast, broadcast or IPv4-compatible address, which no backend is", what)
	case class == classSensitive && widest.IsSingleIP():
		return fmt.Sprintf("%s is a cloud metadata address, which egress dials only if the operator names it: --egress-allow-private %s", what, r)
	case class == classSensitive:
		return fmt.Sprintf("%s is link-local, which egress dials only inside a range the operator allows within %s (--egress-allow-private)", what, widest)
	case reason == "private_address" && !home:
		return fmt.Sprintf("%s is on the host's own networks, where only a catalog's http_backend literal (and its auth.token_url's, for the token fetch) is dialled as declared; any other origin needs --egress-allow-private %s", what, r)
	}
	return reason
}

// trustKey carries, in the context of a request Do or the token fetch
// sends, the one origin whose IP literal check let through on the host's
// own networks: dial, which knows no catalog, opens a private literal
// only if it is that origin's (see Client.dial).
type trustKey struct{}

// withTrust marks ctx's requests as trusting o's literal (see trustKey).
func withTrust(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, trustKey{}, o)
}

// trusted reports whether the literal a on port is the origin ctx
// trusts (withTrust).
func trusted(ctx context.Context, a netip.Addr, port string) bool {
	o, _ := ctx.Value(trustKey{}).(Origin)
	if o == (Origin{}) || o.Port != port {
		return false
	}
	t, err := hostAddr(o.Host)
	return err == nil && t.IsValid() && t.Unmap() == a.Unmap()
}

// checkLiteral refuses a request to an IP-literal origin the policy above
// does not open; names pass (dial checks their answers). host is the URL's
// own (url.URL.Hostname), o its origin, and trust the origin whose literal
// may be on the host's own networks for this request: the home origin in
// Do and its redirects, the token endpoint's inside the token fetch only
// (so a token_url of http://10.0.0.7/t does not open every path on
// 10.0.0.7 to the catalog's mappings), or none.
func (c *Client) checkLiteral(host string, o, trust Origin) error {
	a, err := hostAddr(host)
	if err != nil {
		c.denied("forbidden_address")
		return fmt.Errorf("%w: %v", ErrDenied, err)
	}
	if !a.IsValid() {
		return nil
	}
	home := trust != (Origin{}) && o == trust
	if reason := literalRefusal(a, home, c.AllowPrivate); reason != "" {
		c.denied(reason)
		return fmt.Errorf("%w: %s: %s", ErrDenied, o, refusalHint(reason, a, home))
	}
	return nil
}
