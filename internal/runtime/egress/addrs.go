package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// Address classes. A name is resolved by whoever controls its DNS, so its
// answers are checked: never unspecified, multicast or broadcast; never
// link-local or a cloud metadata address unless the operator names that
// range; and not the host's own networks (loopback, RFC 1918 private,
// CGNAT, IPv6 unique-local) unless the operator allows a range
// (Limits.AllowPrivate, --egress-allow-private). Without this, a hosted
// plasmd could be pointed at its own admin ports or internal services by
// a DNS name resolving to 127.0.0.1 or 10.0.0.1. An IP literal gets the
// same checks (literal.go), except that the literal of a catalog's
// http_backend (or, for the token fetch, its auth.token_url) may be on
// the host's own networks.

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	// thisNetwork (0.0.0.0/8) reaches the local host on several systems.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// nat64 embeds an IPv4 address in its low 32 bits; a DNS64 answer
	// for 127.0.0.1 is 64:ff9b::7f00:1.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// nat64Local is RFC 8215's local-use NAT64 prefix: the site picks
	// the prefix length, and with it where the IPv4 address sits (RFC
	// 6052), so judge classifies every embedding a /48 allows.
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	// ipv4Translated (RFC 6145, ::ffff:0:a.b.c.d, i.e. ::ffff:0:0:0/96) and 6to4 (RFC 3056,
	// 2002:AABB:CCDD::/48) carry an IPv4 address that a translator or
	// relay on the host's path delivers to: judged by that address.
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	// teredo (RFC 4380) hides its client's IPv4 address, obfuscated, in
	// its last bytes and its server's in bytes 4-7: a relay may deliver to
	// either, so it counts as the host's own networks.
	teredo = netip.MustParsePrefix("2001::/32")
	// siteLocal is RFC 3879's deprecated IPv6 site-local range, still
	// routed inside some sites; benchmarking (RFC 2544) and the reserved
	// class E range are not the public internet either.
	siteLocal    = netip.MustParsePrefix("fec0::/10")
	benchmarking = netip.MustParsePrefix("198.18.0.0/15")
	reserved4    = netip.MustParsePrefix("240.0.0.0/4")
	linkLocal4   = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6   = netip.MustParsePrefix("fe80::/10")
	broadcast    = netip.MustParseAddr("255.255.255.255")
	// ipv4Compatible is RFC 4291's deprecated ::a.b.c.d form (:: and ::1
	// aside), which some stacks still carry to the IPv4 address; no
	// backend has one.
	ipv4Compatible = netip.MustParsePrefix("::/96")
)

// metadataAddrs are the cloud metadata and credential services, which
// hand out the host's own credentials. Allowing a range around one does
// not open it: only an allow entry naming the address itself does (see
// classOf).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack...
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6 IMDS
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
	netip.MustParseAddr("169.254.170.23"),  // AWS EKS Pod Identity
	netip.MustParseAddr("fd00:ec2::23"),    // AWS EKS Pod Identity, IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("169.254.0.23"),    // Tencent Cloud
	// Azure WireServer: a public address only Azure hosts reach, which
	// hands out certificates and the VM's goal state.
	netip.MustParseAddr("168.63.129.16"),
}

// addrClass is how egress treats an address.
type addrClass int

const (
	classPublic addrClass = iota
	// classPrivate is the host's own networks: reachable through a range
	// the operator allows, or as a catalog's http_backend literal.
	classPrivate
	// classSensitive is link-local and metadata: reachable only through an
	// allow entry no wider than the address's own range (classOf).
	classSensitive
	// classNever is unspecified, multicast, broadcast and IPv4-compatible
	// IPv6: nothing a backend can be, and 0.0.0.0 or :: connects to the
	// local host.
	classNever
)

// reached is the address a connection to a ends up at: an IPv4-mapped or
// NAT64 address reaches the IPv4 address it embeds. The zone is dropped
// (a literal with one is refused before this; see hostAddr).
func reached(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), ipv4Translated.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// nat64LocalOffsets are where RFC 6052 puts the IPv4 address (its four
// bytes' positions in the IPv6 address, byte 8 being reserved) for the
// prefix lengths a local-use /48 allows: /48, /56, /64 and /96.
var nat64LocalOffsets = [][4]int{{6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}, {12, 13, 14, 15}}

// judge is the address egress judges a by, its class and, for
// classSensitive, the widest allow entry that opens it (classOf). A
// local-use NAT64 address is the host's own networks at least, and
// sensitive if the IPv4 address at any embedding a site may have chosen
// is: judged by that IPv4 address, so only an allow entry naming it (or,
// for link-local, within its range) opens it, and 64:ff9b:1::/48 does
// not. An embedding that reads as unspecified, multicast or broadcast
// counts as private there: most addresses in the range read so at one
// offset or another.
func judge(a netip.Addr) (netip.Addr, addrClass, netip.Prefix) {
	r := reached(a)
	if teredo.Contains(r) {
		b := r.As16()
		for _, v4 := range []netip.Addr{
			netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}),
			netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}),
		} {
			if class, widest := classOf(v4); class == classSensitive {
				return v4, class, widest
			}
		}
		return r, classPrivate, netip.Prefix{}
	}
	if !nat64Local.Contains(r) {
		class, widest := classOf(r)
		return r, class, widest
	}
	b := r.As16()
	for _, off := range nat64LocalOffsets {
		v4 := netip.AddrFrom4([4]byte{b[off[0]], b[off[1]], b[off[2]], b[off[3]]})
		if class, widest := classOf(v4); class == classSensitive {
			return v4, class, widest
		}
	}
	return r, classPrivate, netip.Prefix{}
}

// classOf classifies a reached address. For classSensitive it also
// returns the widest prefix an allow entry may have to open it: the
// link-local range, or the metadata address alone, so neither
// 0.0.0.0/0 nor CGNAT's 100.64.0.0/10 opens a metadata service.
func classOf(a netip.Addr) (addrClass, netip.Prefix) {
	if a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a == broadcast ||
		(ipv4Compatible.Contains(a) && !a.IsLoopback()) {
		return classNever, netip.Prefix{}
	}
	for _, m := range metadataAddrs {
		if a == m {
			return classSensitive, netip.PrefixFrom(a, a.BitLen())
		}
	}
	if a.IsLinkLocalUnicast() {
		if a.Is4() {
			return classSensitive, linkLocal4
		}
		return classSensitive, linkLocal6
	}
	if private(a) {
		return classPrivate, netip.Prefix{}
	}
	return classPublic, netip.Prefix{}
}

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

// addrRefusal says why an address may not be dialled ("" if it may):
// "forbidden_address" for classes no allow entry opened,
// "private_address" for the host's own networks outside allow.
func addrRefusal(a netip.Addr, allow []netip.Prefix) string {
	a, class, widest := judge(a)
	switch class {
	case classNever:
		return "forbidden_address"
	case classSensitive:
		for _, p := range allow {
			if p.Bits() >= widest.Bits() && p.Contains(a) {
				return ""
			}
		}
		return "forbidden_address"
	case classPrivate:
		for _, p := range allow {
			if p.Contains(a) {
				return ""
			}
		}
		return "private_address"
	}
	return ""
}

// forbidden reports the classes no range of the host's own networks
// opens: link-local, metadata, unspecified, multicast, broadcast.
func forbidden(a netip.Addr) bool {
	_, class, _ := judge(a)
	return class == classSensitive || class == classNever
}

// private reports the host's own networks: loopback, RFC 1918 and IPv6
// unique-local (netip's IsPrivate), CGNAT, 0.0.0.0/8, local-use NAT64,
// and what is not the public internet either: IPv6 site-local,
// benchmarking (198.18.0.0/15) and reserved (240.0.0.0/4).
func private(a netip.Addr) bool {
	return a.IsLoopback() || a.IsPrivate() || cgnat.Contains(a) || thisNetwork.Contains(a) || nat64Local.Contains(a) ||
		siteLocal.Contains(a) || benchmarking.Contains(a) || reserved4.Contains(a)
}
