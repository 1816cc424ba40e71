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

	"github.com/plasmd/plasmd/guest/abi"
)

// wideDigits spells s's ASCII digits in full width (U+FF10..U+FF19),
// which IDNA maps back to ASCII.
func wideDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r - '0' + '０'
		}
		return r
	}, s)
}

// TestNonASCIILiteralSpellings: an IP literal written with full-width
// digits, ideographic dots or their percent-encoded UTF-8 is dialled by
// net/http as the ASCII address (IDNA, in canonicalAddr), so egress
// judges that form: such a host is refused everywhere (ClassifyHost,
// CheckDeclared, Do), even as the catalog's http_backend, and nothing is
// dialled. Before, it passed as a DNS name and dial waived the private
// check for the literal net/http handed it.
func TestNonASCIILiteralSpellings(t *testing.T) {
	srv, _ := backend(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, host := range []string{
		"１２７.０.０.１",
		"127。0。0。1",
		"127．0．0．1", // full-width full stop
		"１０.０.０.５",
		"１６９.２５４.１６９.２５４",
		"8.8.8.８",
		"１２７.１", // shortened, after IDNA
		strings.ReplaceAll("127.0.0.1", ".", url.PathEscape("。")), // url.Parse decodes it
	} {
		t.Run(host, func(t *testing.T) {
			u, err := url.Parse("http://" + host + ":" + port + "/x")
			if err != nil {
				t.Fatalf("url.Parse: %v", err)
			}
			if cls, err := ClassifyHost(u.Hostname()); !errors.Is(err, ErrUndialable) {
				t.Errorf("ClassifyHost(%q) = %v, %v; want ErrUndialable", u.Hostname(), cls, err)
			}
			for _, home := range []bool{false, true} {
				if err := CheckDeclared(u.String(), home, nil); !errors.Is(err, ErrUndialable) {
					t.Errorf("CheckDeclared(%q, home %v) = %v; want ErrUndialable", u, home, err)
				}
			}
			c := newClient(t, Limits{Timeout: 5 * time.Second})
			c.SetResolver(func(_ context.Context, h string) ([]netip.Addr, error) {
				return nil, fmt.Errorf("unexpected lookup of %q", h)
			})
			var dialled []string
			c.connect = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialled = append(dialled, addr)
				var d net.Dialer
				return d.DialContext(ctx, network, "127.0.0.1:"+port)
			}
			origin := mustOrigin(t, "http://"+u.Host)
			for _, allowed := range [][]Origin{
				{mustOrigin(t, "https://api.example.test"), {}, origin}, // mapping path
				{origin}, // http_backend
			} {
				_, err := c.Do(context.Background(), &abi.CompiledRequest{URL: u.String()}, allowed, secrets{})
				if !errors.Is(err, ErrDenied) || len(dialled) > 0 {
					t.Errorf("Do(%s) with %v: err %v, dialled %v; want ErrDenied before any dial", u, allowed, err, dialled)
				}
			}
		})
	}
}

// TestIDNNames: a non-ASCII DNS name is judged, resolved and compared as
// its ASCII (punycode) form, the one net/http dials; one IDNA refuses is
// refused.
func TestIDNNames(t *testing.T) {
	o, err := ParseOrigin("https://BÜCHER.example/x")
	if err != nil || o.Host != "xn--bcher-kva.example" {
		t.Fatalf("ParseOrigin = %v, %v; want host xn--bcher-kva.example", o, err)
	}
	if cls, err := ClassifyHost("bücher.example"); cls != HostName || err != nil {
		t.Errorf("ClassifyHost(bücher.example) = %v, %v; want a name", cls, err)
	}
	for _, bad := range []string{"a\u200db.example", "xn--a.example\u00e9", "ex ample.ü"} {
		if _, err := ClassifyHost(bad); !errors.Is(err, ErrUndialable) {
			t.Errorf("ClassifyHost(%q) = %v; want ErrUndialable", bad, err)
		}
	}
	if err := CheckDeclared("https://a\u200db.example/", true, nil); !errors.Is(err, ErrUndialable) {
		t.Errorf("CheckDeclared of a host IDNA refuses = %v; want ErrUndialable", err)
	}
}

// TestDialJudgesLiterals: dial does not take "a literal, so check passed
// it" on trust. A private literal outside the allowed ranges is dialled
// only when it is the origin the request's context trusts (withTrust:
// Do's home origin, or the token endpoint's inside the token fetch).
func TestDialJudgesLiterals(t *testing.T) {
	c := newClient(t, Limits{})
	var dialled []string
	c.connect = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, errors.New("not dialled in tests")
	}
	home := mustOrigin(t, "http://10.0.0.7:8080")
	tests := []struct {
		name  string
		ctx   context.Context
		addr  string
		allow []netip.Prefix
		dial  bool
	}{
		{"no trust", context.Background(), "10.0.0.7:8080", nil, false},
		{"trusted origin", withTrust(context.Background(), home), "10.0.0.7:8080", nil, true},
		{"trusted origin, v4-mapped spelling", withTrust(context.Background(), home), "[::ffff:10.0.0.7]:8080", nil, true},
		{"another port", withTrust(context.Background(), home), "10.0.0.7:8081", nil, false},
		{"another address", withTrust(context.Background(), home), "127.0.0.1:8080", nil, false},
		{"allowed range", context.Background(), "10.0.0.7:8080", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, true},
		{"metadata, trusted", withTrust(context.Background(), mustOrigin(t, "http://169.254.169.254")), "169.254.169.254:80", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dialled = nil
			c.AllowPrivate = tt.allow
			_, err := c.dial(tt.ctx, "tcp", tt.addr)
			if got := len(dialled) > 0; got != tt.dial {
				t.Fatalf("dial(%s): err %v, dialled %v; want dialled %v", tt.addr, err, dialled, tt.dial)
			}
			if !tt.dial && !errors.Is(err, ErrDenied) {
				t.Fatalf("dial(%s) = %v; want ErrDenied", tt.addr, err)
			}
		})
	}
	// A literal's refusal says what it is, not that it "resolves to" itself.
	_, err := c.dial(context.Background(), "tcp", "169.254.169.254:80")
	if err == nil || strings.Contains(err.Error(), "resolves to") || !strings.Contains(err.Error(), "169.254.169.254 is a cloud metadata address") {
		t.Errorf("metadata literal refusal = %v", err)
	}
}

// TestTokenLiteralOnlyForTheFetch: a catalog's auth.token_url literal on
// the host's own networks is trusted for the token fetch, not for every
// request a mapping, redirect or URL value sends to its origin.
func TestTokenLiteralOnlyForTheFetch(t *testing.T) {
	f := &oauthFixture{}
	var mu sync.Mutex
	var tokenPaths []string
	tokSrv, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokenPaths = append(tokenPaths, r.URL.Path)
		mu.Unlock()
		f.token(w, r)
	})
	_, tokPort, _ := net.SplitHostPort(strings.TrimPrefix(tokSrv.URL, "http://"))
	// The token endpoint as written in the catalog: a private literal
	// (never dialled: connect sends it to the loopback server).
	tokenURL := "http://10.0.0.7:" + tokPort
	apiSrv, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, tokenURL+"/admin", http.StatusFound)
			return
		}
		f.api(w, r)
	})
	_, apiPort, _ := net.SplitHostPort(strings.TrimPrefix(apiSrv.URL, "http://"))
	c := newClient(t, Limits{Timeout: 5 * time.Second, MaxRedirects: 3})
	c.connect = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		switch addr {
		case "10.0.0.7:" + tokPort:
			return d.DialContext(ctx, network, "127.0.0.1:"+tokPort)
		case "127.0.0.1:" + apiPort:
			return d.DialContext(ctx, network, addr)
		}
		return nil, fmt.Errorf("unexpected dial of %s", addr)
	}
	allowed := []Origin{mustOrigin(t, apiSrv.URL), mustOrigin(t, tokenURL)}
	sec := secrets{"CID": "client-1", "CSECRET": "s3cret-value"}
	auth := &abi.AuthDirective{Scheme: "oauth2_client_credentials", TokenURL: tokenURL + "/token", ClientID: "CID", Secret: "CSECRET", Scopes: []string{"read", "write"}}
	resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: apiSrv.URL + "/things", Auth: auth}, allowed, sec)
	if err != nil || resp.Status != 200 {
		t.Fatalf("a call whose token comes from a private token_url literal: %v %v", resp, err)
	}
	for _, u := range []string{tokenURL + "/admin", apiSrv.URL + "/redirect"} {
		if _, err := c.Do(context.Background(), &abi.CompiledRequest{URL: u}, allowed, sec); !errors.Is(err, ErrDenied) {
			t.Errorf("Do(%s) = %v; want ErrDenied: the token endpoint's origin is trusted for the token fetch only", u, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokenPaths) != 1 || tokenPaths[0] != "/token" {
		t.Errorf("token server saw %v, want only the token fetch", tokenPaths)
	}
}
