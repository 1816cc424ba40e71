package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/idna"

	"github.com/plasmd/plasmd/guest/abi"
)

func TestClassifyHost(t *testing.T) {
	tests := []struct {
		host  string
		want  HostClass
		never bool // ErrUndialable
	}{
		{host: "api.example.test", want: HostName},
		{host: "localhost", want: HostName}, // a name: its answers are checked
		{host: "v2.api.example.test", want: HostName},
		{host: "8.8.8.8", want: HostPublic},
		{host: "2001:db8::1", want: HostPublic},
		{host: "127.0.0.1", want: HostPrivate},
		{host: "::1", want: HostPrivate},
		{host: "10.0.0.5", want: HostPrivate},
		{host: "::ffff:10.0.0.5", want: HostPrivate},
		{host: "64:ff9b::a00:5", want: HostPrivate},   // NAT64 of 10.0.0.5
		{host: "64:ff9b:1::a00:5", want: HostPrivate}, // local-use NAT64
		{host: "fd12::1", want: HostPrivate},
		{host: "100.64.0.1", want: HostPrivate},
		{host: "169.254.169.254", want: HostSensitive},
		{host: "::ffff:169.254.169.254", want: HostSensitive},
		{host: "64:ff9b::a9fe:a9fe", want: HostSensitive},
		{host: "fd00:ec2::254", want: HostSensitive},
		{host: "100.100.100.200", want: HostSensitive},
		{host: "169.254.1.1", want: HostSensitive},
		{host: "fe80::1", want: HostSensitive},
		{host: "0.0.0.0", never: true},
		{host: "::", never: true},
		{host: "::ffff:0.0.0.0", never: true},
		{host: "224.0.0.1", never: true},
		{host: "ff02::1", never: true},
		{host: "255.255.255.255", never: true},
		{host: "::a9fe:a9fe", never: true}, // IPv4-compatible 169.254.169.254
		{host: "::7f00:1", never: true},    // IPv4-compatible 127.0.0.1
		{host: "fe80::1%eth0", never: true},
		{host: "::1%lo", never: true},
		{host: "2130706433", never: true},    // decimal 127.0.0.1
		{host: "0177.0.0.1", never: true},    // octal
		{host: "0x7f.0.0.1", never: true},    // hex
		{host: "0x7F000001", never: true},    // hex, whole
		{host: "127.1", never: true},         // shortened
		{host: "127.0.0.1.", never: true},    // trailing dot
		{host: "169.254.43518", never: true}, // 169.254.169.254, shortened
	}
	for _, tt := range tests {
		got, err := ClassifyHost(tt.host)
		if tt.never {
			if !errors.Is(err, ErrUndialable) {
				t.Errorf("ClassifyHost(%q) = %v, %v; want ErrUndialable", tt.host, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ClassifyHost(%q) = %v, %v; want %v", tt.host, got, err, tt.want)
		}
	}
}

// TestCheckDeclared is the policy for origins a catalog declares: what
// the server refuses to start with.
func TestCheckDeclared(t *testing.T) {
	p := func(s ...string) []netip.Prefix {
		out, err := ParsePrefixes(s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		raw   string
		home  bool
		allow []netip.Prefix
		ok    bool
	}{
		{raw: "https://api.example.test/v1", ok: true},
		{raw: "http://10.0.0.5:8080/", ok: false},
		{raw: "http://10.0.0.5:8080/", home: true, ok: true},
		{raw: "http://10.0.0.5:8080/", allow: p("10.0.0.0/8"), ok: true},
		{raw: "http://10.0.0.5:8080/", allow: p("10.0.0.6"), ok: false},
		{raw: "http://[::ffff:127.0.0.1]:9/", ok: false},
		{raw: "http://[::ffff:127.0.0.1]:9/", home: true, ok: true},
		{raw: "http://8.8.8.8/", ok: true},
		// Metadata: never, home or not, unless its address is named.
		{raw: "http://169.254.169.254/latest/meta-data/", ok: false},
		{raw: "http://169.254.169.254/latest/meta-data/", home: true, ok: false},
		{raw: "http://169.254.169.254/", home: true, allow: p("0.0.0.0/0"), ok: false},
		{raw: "http://169.254.169.254/", allow: p("169.254.0.0/16"), ok: false},
		{raw: "http://169.254.169.254/", allow: p("169.254.169.254"), ok: true},
		{raw: "http://[::ffff:169.254.169.254]/", home: true, ok: false},
		{raw: "http://[64:ff9b::a9fe:a9fe]/", home: true, ok: false},
		{raw: "http://[fd00:ec2::254]/", home: true, allow: p("fd00::/8"), ok: false},
		{raw: "http://100.100.100.200/", home: true, allow: p("100.64.0.0/10"), ok: false},
		{raw: "http://100.100.100.200/", allow: p("100.100.100.200/32"), ok: true},
		// Link-local: an allow entry no wider than its range opens it.
		{raw: "http://169.254.1.1/", home: true, ok: false},
		{raw: "http://169.254.1.1/", allow: p("169.254.0.0/16"), ok: true},
		{raw: "http://169.254.1.1/", allow: p("169.0.0.0/8"), ok: false},
		{raw: "http://[fe80::1]/", allow: p("fe80::/10"), ok: true},
		{raw: "http://[fe80::1]/", allow: p("::/0"), ok: false},
		// Never.
		{raw: "http://0.0.0.0:8080/", home: true, allow: p("0.0.0.0/0"), ok: false},
		{raw: "http://[::]:8080/", home: true, ok: false},
		{raw: "http://224.0.0.1/", home: true, ok: false},
		{raw: "http://[fe80::1%25eth0]/", home: true, allow: p("fe80::/10"), ok: false},
		{raw: "http://2130706433/", home: true, ok: false},
		{raw: "http://0x7f.1/", home: true, ok: false},
		{raw: "ftp://10.0.0.5/", home: true, ok: false},
	}
	for _, tt := range tests {
		err := CheckDeclared(tt.raw, tt.home, tt.allow)
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrUndialable)) {
			t.Errorf("CheckDeclared(%q, home %v, allow %v) = %v, want ok %v", tt.raw, tt.home, tt.allow, err, tt.ok)
		}
	}
}

// TestLiteralOrigins sends requests to IP-literal origins through Do. No
// address but loopback is dialled: connect records what dial would have
// dialled and connects to a loopback backend instead, so an allowed
// metadata or link-local literal is proved allowed without reaching one.
func TestLiteralOrigins(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	srv, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Host+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	home := "http://127.0.0.1:" + port
	// other is another origin for the same loopback address: egress
	// compares origins as written, and ::ffff:127.0.0.1 reaches 127.0.0.1,
	// the backend, which connect dials whatever it is asked for.
	other := "http://[::ffff:127.0.0.1]:" + port
	o := func(raw string) Origin { return mustOrigin(t, raw) }
	loop := netip.MustParsePrefix("127.0.0.1/32")
	tests := []struct {
		name    string
		url     string
		allowed []Origin // home first, then the token endpoint, then the rest
		allow   []netip.Prefix
		dialled string // what connect was asked for; "" = nothing, refused
	}{
		{name: "home loopback literal", url: home + "/x", allowed: []Origin{o(home)}, dialled: "127.0.0.1:" + port},
		// The token endpoint's literal is trusted for the token fetch only
		// (TestTokenLiteralOnlyForTheFetch): a request to its origin is a
		// mapping's like any other.
		{name: "token endpoint loopback literal", url: other + "/x", allowed: []Origin{{}, o(other)}},
		{name: "token endpoint loopback literal, allowed", url: other + "/x", allowed: []Origin{{}, o(other)}, allow: []netip.Prefix{loop}, dialled: "127.0.0.1:" + port},
		{name: "mapping-path loopback literal", url: other + "/x", allowed: []Origin{o(home), {}, o(other)}},
		{name: "mapping-path loopback literal, allowed", url: other + "/x", allowed: []Origin{o(home), {}, o(other)}, allow: []netip.Prefix{loop}, dialled: "127.0.0.1:" + port},
		{name: "redirect from home to a mapping-path literal", url: home + "/redirect?to=" + other + "/y", allowed: []Origin{o(home), {}, o(other)}, dialled: "127.0.0.1:" + port},
		{name: "metadata as home", url: "http://169.254.169.254/latest/meta-data/", allowed: []Origin{o("http://169.254.169.254")}},
		{name: "metadata in a mapping path", url: "http://169.254.169.254/latest/meta-data/", allowed: []Origin{o(home), {}, o("http://169.254.169.254")}},
		{name: "metadata, v4-mapped", url: "http://[::ffff:169.254.169.254]/", allowed: []Origin{o("http://[::ffff:169.254.169.254]")}},
		{name: "metadata, NAT64", url: "http://[64:ff9b::a9fe:a9fe]/", allowed: []Origin{o("http://[64:ff9b::a9fe:a9fe]")}},
		{name: "metadata, link-local range allowed", url: "http://169.254.169.254/", allowed: []Origin{o("http://169.254.169.254")}, allow: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16")}},
		{name: "metadata, named", url: "http://169.254.169.254/", allowed: []Origin{o("http://169.254.169.254")}, allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}, dialled: "169.254.169.254:80"},
		{name: "link-local, range allowed", url: "http://169.254.7.7:81/", allowed: []Origin{o(home), {}, o("http://169.254.7.7:81")}, allow: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16")}, dialled: "169.254.7.7:81"},
		{name: "link-local v6 with a zone", url: "http://[fe80::1%25eth0]/", allowed: []Origin{o("http://[fe80::1%25eth0]")}, allow: []netip.Prefix{netip.MustParsePrefix("fe80::/10")}},
		{name: "loopback with a zone", url: "http://[::1%25lo]:" + port + "/", allowed: []Origin{o("http://[::1%25lo]:" + port)}},
		{name: "decimal", url: "http://2130706433:" + port + "/", allowed: []Origin{o("http://2130706433:" + port)}},
		{name: "octal", url: "http://0177.0.0.1:" + port + "/", allowed: []Origin{o("http://0177.0.0.1:" + port)}},
		{name: "hex", url: "http://0x7f000001:" + port + "/", allowed: []Origin{o("http://0x7f000001:" + port)}},
		{name: "shortened", url: "http://127.1:" + port + "/", allowed: []Origin{o("http://127.1:" + port)}},
		{name: "unspecified", url: "http://0.0.0.0:" + port + "/", allowed: []Origin{o("http://0.0.0.0:" + port)}, allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Limits{Timeout: 5 * time.Second, MaxRedirects: 3})
			c.AllowPrivate = tt.allow
			c.SetResolver(func(_ context.Context, host string) ([]netip.Addr, error) {
				return nil, fmt.Errorf("unexpected lookup of %q", host)
			})
			var dialled []string
			c.connect = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialled = append(dialled, addr)
				var d net.Dialer
				return d.DialContext(ctx, network, "127.0.0.1:"+port)
			}
			var reasons []string
			c.OnDenied = func(r string) { reasons = append(reasons, r) }
			mu.Lock()
			hits = nil
			mu.Unlock()
			resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: tt.url}, tt.allowed, secrets{})
			if strings.HasPrefix(tt.name, "redirect") {
				// Home answers, then the redirect is refused.
				mu.Lock()
				defer mu.Unlock()
				if !errors.Is(err, ErrDenied) || len(hits) != 1 {
					t.Fatalf("redirect to a mapping-path literal: err %v, backend saw %v", err, hits)
				}
				return
			}
			if tt.dialled == "" {
				if !errors.Is(err, ErrDenied) || len(dialled) != 0 || len(reasons) == 0 {
					t.Fatalf("err %v, dialled %v, reasons %v; want ErrDenied before any dial", err, dialled, reasons)
				}
				return
			}
			if err != nil || string(resp.Body) != "ok" {
				t.Fatalf("Do: %v", err)
			}
			if len(dialled) != 1 || dialled[0] != tt.dialled {
				t.Fatalf("dialled %v, want %s", dialled, tt.dialled)
			}
		})
	}
}

// FuzzClassifyHost: no host panics ClassifyHost; a class other than a
// name comes only from an ASCII IP literal; a host it calls a name does
// not become an IP address (or a form resolvers read as one) through the
// IDNA net/http applies before dialling; and CheckDeclared judges the
// origin of any host the way its class says.
func FuzzClassifyHost(f *testing.F) {
	for _, s := range []string{"api.example.test", "127.0.0.1", "::ffff:169.254.169.254", "fe80::1%eth0", "0x7f.1", "2130706433", "1.2.3.4.", "", ".", "0x",
		"１２７.０.０.１", "127。0。0。1", "bücher.example", "example.１２３", "ｆｅ８０：：１", "10.0.0.5", "64:ff9b:1::a9fe:a9fe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		class, err := ClassifyHost(host)
		if err != nil {
			if !errors.Is(err, ErrUndialable) {
				t.Fatalf("ClassifyHost(%q): %v, not ErrUndialable", host, err)
			}
			return
		}
		if _, perr := netip.ParseAddr(host); (class != HostName) != (perr == nil) {
			t.Fatalf("ClassifyHost(%q) = %v, but ParseAddr says %v", host, class, perr)
		}
		if class == HostName {
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				if _, perr := netip.ParseAddr(a); perr == nil || endsInNumber(a) {
					t.Fatalf("ClassifyHost(%q) = a name, but net/http dials it as %q", host, a)
				}
			}
		}
		raw := "http://" + host + "/"
		if strings.Contains(host, ":") {
			raw = "http://[" + host + "]/"
		}
		if u, err := url.Parse(raw); err != nil || u.Hostname() != host || host == "" {
			return // not an origin a catalog can write with this host
		}
		everything := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
		for _, tc := range []struct {
			home  bool
			allow []netip.Prefix
		}{{false, nil}, {true, nil}, {false, everything}} {
			err := CheckDeclared(raw, tc.home, tc.allow)
			want := class == HostSensitive || (class == HostPrivate && !tc.home && tc.allow == nil)
			if (err != nil) != want || (err != nil && !errors.Is(err, ErrUndialable)) {
				t.Fatalf("CheckDeclared(%q, home %v, allow %v) = %v for a host classed %v", raw, tc.home, tc.allow, err, class)
			}
		}
	})
}
