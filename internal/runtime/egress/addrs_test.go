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
