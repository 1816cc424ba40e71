package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// Address classes a resolved name may not reach. A catalog that declares
// an IP literal reaches exactly that address (the operator loaded the
// catalog and saw it); a name is resolved by whoever controls its DNS, so
// its answers are checked: never link-local, metadata, unspecified or
// multicast, and not the host's own networks (loopback, RFC 1918 private,
// CGNAT, IPv6 unique-local) unless the operator allows a range
// (Limits.AllowPrivate, --egress-allow-private). Without this, a hosted
// plasmd could be pointed at its own admin ports or internal services by
// a DNS name resolving to 127.0.0.1 or 10.0.0.1.

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	// thisNetwork (0.0.0.0/8) reaches the local host on several systems.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// nat64 embeds an IPv4 address in its low 32 bits; a DNS64 answer
	// for 127.0.0.1 is 64:ff9b::7f00:1.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

// ParsePrefixes reads --egress-allow-private values: CIDR prefixes or
// single addresses.
func ParsePrefixes(specs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("egress allow-private %q: want a CIDR prefix (10.0.0.0/8) or an address", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// addrRefusal says why a resolved address may not be dialled ("" if it
// may): "forbidden_address" for classes never reachable through a name,
// "private_address" for the host's own networks outside allow.
func addrRefusal(a netip.Addr, allow []netip.Prefix) string {
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if forbidden(a) {
		return "forbidden_address"
	}
	if !private(a) {
		return ""
	}
	for _, p := range allow {
		if p.Contains(a) {
			return ""
		}
	}
	return "private_address"
}

// private reports the host's own networks: loopback, RFC 1918 and IPv6
// unique-local (netip's IsPrivate), CGNAT and 0.0.0.0/8.
func private(a netip.Addr) bool {
	return a.IsLoopback() || a.IsPrivate() || cgnat.Contains(a) || thisNetwork.Contains(a)
}
