package egress

import (
	"net/netip"
	"testing"
)

func TestAddrRefusal(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("::1/128")}
	tests := []struct{ addr, want string }{
		{"8.8.8.8", ""},
		{"2001:db8::1", ""},
		{"100.63.255.255", ""}, // just below CGNAT
		{"100.128.0.0", ""},    // just above
		{"172.32.0.1", ""},     // just past 172.16/12
		{"127.0.0.1", "private_address"},
		{"127.255.0.9", "private_address"},
		{"10.0.0.1", "private_address"},
		{"10.1.2.3", ""}, // allowed range
		{"::1", ""},      // allowed
		{"::ffff:10.1.2.3", ""},
		{"::ffff:10.2.0.1", "private_address"},
		{"172.16.0.1", "private_address"},
		{"192.168.0.1", "private_address"},
		{"100.64.0.1", "private_address"},
		{"fc00::1", "private_address"},
		{"fdff::1", "private_address"},
		{"64:ff9b::a00:1", "private_address"}, // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", ""},              // NAT64 of 8.8.8.8
		{"64:ff9b::a9fe:a9fe", "forbidden_address"},
		{"169.254.169.254", "forbidden_address"},
		{"fe80::1", "forbidden_address"},
		{"0.0.0.0", "forbidden_address"},
		{"0.0.0.1", "private_address"},
	}
	for _, tt := range tests {
		if got := addrRefusal(netip.MustParseAddr(tt.addr), allow); got != tt.want {
			t.Errorf("addrRefusal(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestParsePrefixes(t *testing.T) {
	got, err := ParsePrefixes([]string{"10.0.0.0/8", " 192.168.1.7 ", "fd00::/8", "10.1.2.3/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.168.1.7/32", "fd00::/8", "10.0.0.0/8"}
	for i, p := range got {
		if p.String() != want[i] {
			t.Errorf("prefix %d = %s, want %s", i, p, want[i])
		}
	}
	for _, bad := range []string{"", "10.0.0.0/33", "example.com", "10.0.0"} {
		if _, err := ParsePrefixes([]string{bad}); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestAddrClasses: what each address reaches and how it is guarded,
// including the metadata and credential services besides
// 169.254.169.254 and the ranges that are not the public internet.
func TestAddrClasses(t *testing.T) {
	tests := []struct {
		addr   string
		class  addrClass
		widest string // for classSensitive: the widest allow entry opening it
	}{
		{"8.8.8.8", classPublic, ""},
		{"169.254.169.254", classSensitive, "169.254.169.254/32"},
		{"169.254.170.2", classSensitive, "169.254.170.2/32"},   // ECS task credentials
		{"169.254.170.23", classSensitive, "169.254.170.23/32"}, // EKS Pod Identity
		{"fd00:ec2::23", classSensitive, "fd00:ec2::23/128"},
		{"fd00:ec2::254", classSensitive, "fd00:ec2::254/128"},
		{"169.254.0.23", classSensitive, "169.254.0.23/32"},   // Tencent
		{"168.63.129.16", classSensitive, "168.63.129.16/32"}, // Azure WireServer
		{"100.100.100.200", classSensitive, "100.100.100.200/32"},
		{"::ffff:168.63.129.16", classSensitive, "168.63.129.16/32"},
		{"64:ff9b::a83f:8110", classSensitive, "168.63.129.16/32"}, // NAT64 of the WireServer
		{"169.254.7.7", classSensitive, "169.254.0.0/16"},
		{"fec0::1", classPrivate, ""},        // site-local
		{"198.18.0.1", classPrivate, ""},     // benchmarking
		{"198.19.255.255", classPrivate, ""}, // benchmarking, last
		{"198.20.0.1", classPublic, ""},
		{"240.0.0.1", classPrivate, ""}, // reserved
		{"255.255.255.254", classPrivate, ""},
		{"255.255.255.255", classNever, ""},
		// Other IPv6 forms carrying an IPv4 address a translator or
		// relay delivers to: judged by it.
		{"::ffff:0:a9fe:a9fe", classSensitive, "169.254.169.254/32"}, // RFC 6145 translated
		{"::ffff:0:808:808", classPublic, ""},
		{"2002:a9fe:a9fe::1", classSensitive, "169.254.169.254/32"}, // 6to4
		{"2002:a00:5::1", classPrivate, ""},                         // 6to4 of 10.0.0.5
		{"2002:808:808::1", classPublic, ""},
		{"2001:0:4136:e378:8000:63bf:5601:5601", classSensitive, "169.254.169.254/32"}, // Teredo, client 169.254.169.254 obfuscated
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", classPrivate, ""},                     // Teredo, client 8.8.8.8: still a relay
		// RFC 8215 local-use NAT64, at each RFC 6052 embedding a /48
		// allows: the strictest counts.
		{"64:ff9b:1::a00:5", classPrivate, ""},                               // /96: 10.0.0.5
		{"64:ff9b:1::808:808", classPrivate, ""},                             // /96: 8.8.8.8, still the site's own translator
		{"64:ff9b:1::a9fe:a9fe", classSensitive, "169.254.169.254/32"},       // /96
		{"64:ff9b:1:0:a9:fea9:fe00:0", classSensitive, "169.254.169.254/32"}, // /64
		{"64:ff9b:1:a9:fe:a9fe::", classSensitive, "169.254.169.254/32"},     // /56
		{"64:ff9b:1:a9fe:a9:fe00::", classSensitive, "169.254.169.254/32"},   // /48
		{"64:ff9b:1:a9fe:7:700::", classSensitive, "169.254.0.0/16"},         // /48: 169.254.7.7
		{"64:ff9b:1::", classPrivate, ""},                                    // 0.0.0.0 at every offset: the range counts
	}
	for _, tt := range tests {
		_, class, widest := judge(netip.MustParseAddr(tt.addr))
		got := ""
		if widest.IsValid() {
			got = widest.String()
		}
		if class != tt.class || got != tt.widest {
			t.Errorf("judge(%s) = class %d, widest %q; want %d, %q", tt.addr, class, got, tt.class, tt.widest)
		}
	}
}

// TestMetadataNeedsNaming: a metadata or credential service is opened by
// no range around it, and a local-use NAT64 address embedding one is
// opened neither by the NAT64 range nor as a catalog's http_backend.
func TestMetadataNeedsNaming(t *testing.T) {
	p := func(s string) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix(s)} }
	for _, tc := range []struct {
		raw   string
		home  bool
		allow []netip.Prefix
		ok    bool
	}{
		{"http://[64:ff9b:1::a9fe:a9fe]/", true, nil, false},
		{"http://[64:ff9b:1::a9fe:a9fe]/", false, p("64:ff9b:1::/48"), false},
		{"http://[64:ff9b:1::a9fe:a9fe]/", false, p("169.254.169.254/32"), true},
		{"http://[64:ff9b:1::a00:5]/", false, p("64:ff9b:1::/48"), true},
		{"http://[64:ff9b:1::a00:5]/", true, nil, true},
		{"http://169.254.170.2/v2/credentials", false, p("169.254.0.0/16"), false},
		{"http://169.254.170.2/v2/credentials", false, p("169.254.170.2/32"), true},
		{"http://169.254.170.23/v1/credentials", true, p("169.254.0.0/16"), false},
		{"http://[fd00:ec2::23]/", false, p("fd00:ec2::/32"), false},
		{"http://169.254.0.23/", false, p("169.254.0.0/16"), false},
		{"http://168.63.129.16/machine?comp=goalstate", false, nil, false},
		{"http://168.63.129.16/machine?comp=goalstate", true, p("0.0.0.0/0"), false},
		{"http://168.63.129.16/", false, p("168.63.129.16/32"), true},
		{"http://[fec0::1]/", false, nil, false},
		{"http://198.18.0.1/", false, nil, false},
		{"http://240.0.0.1/", false, nil, false},
		{"http://240.0.0.1/", true, nil, true},
	} {
		if err := CheckDeclared(tc.raw, tc.home, tc.allow); (err == nil) != tc.ok {
			t.Errorf("CheckDeclared(%s, home %v, allow %v) = %v; want ok %v", tc.raw, tc.home, tc.allow, err, tc.ok)
		}
	}
	// A DNS answer in local-use NAT64 embedding metadata is not opened by
	// allowing the NAT64 range.
	if r := addrRefusal(netip.MustParseAddr("64:ff9b:1::a9fe:a9fe"), p("64:ff9b:1::/48")); r != "forbidden_address" {
		t.Errorf("addrRefusal(64:ff9b:1::a9fe:a9fe, 64:ff9b:1::/48) = %q, want forbidden_address", r)
	}
}
