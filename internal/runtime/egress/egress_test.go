package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// TestMain fails the package when goroutines outlive the tests: every test
// closes its client and servers, so the count must settle back to where it
// started (with slack for runtime helpers).
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		const slack = 4
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before+slack && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before+slack {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "goroutine leak: %d before, %d after\n%s\n", before, n, buf)
			code = 1
		}
	}
	os.Exit(code)
}

type secrets map[string]string

func (s secrets) Secret(name string) (string, bool) { v, ok := s[name]; return v, ok }

// backend starts a loopback server closed at the end of the test.
func backend(t *testing.T, h http.HandlerFunc) (*httptest.Server, Origin) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, mustOrigin(t, srv.URL)
}

func mustOrigin(t *testing.T, raw string) Origin {
	t.Helper()
	o, err := ParseOrigin(raw)
	if err != nil {
		t.Fatalf("ParseOrigin(%q): %v", raw, err)
	}
	return o
}

func newClient(t *testing.T, l Limits) *Client {
	t.Helper()
	c := New(l)
	t.Cleanup(c.Close)
	return c
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

func TestParseOrigin(t *testing.T) {
	tests := []struct {
		raw     string
		want    Origin
		wantErr bool
	}{
		{raw: "http://example.com", want: Origin{"http", "example.com", "80"}},
		{raw: "https://Example.COM/path?q=1", want: Origin{"https", "example.com", "443"}},
		{raw: "HTTPS://api.example.com:8443", want: Origin{"https", "api.example.com", "8443"}},
		{raw: "http://[::1]:9000/", want: Origin{"http", "::1", "9000"}},
		{raw: "http://127.0.0.1", want: Origin{"http", "127.0.0.1", "80"}},
		{raw: "ftp://example.com", wantErr: true},
		{raw: "file:///etc/passwd", wantErr: true},
		{raw: "/relative/path", wantErr: true},
		{raw: "http://", wantErr: true},
		{raw: "http://%zz", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseOrigin(tt.raw)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseOrigin(%q) = %v, want error", tt.raw, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseOrigin(%q): %v", tt.raw, err)
			}
			if got != tt.want {
				t.Fatalf("ParseOrigin(%q) = %+v, want %+v", tt.raw, got, tt.want)
			}
		})
	}
	if s := (Origin{"http", "::1", "80"}).String(); s != "http://[::1]:80" {
		t.Errorf("String() = %q", s)
	}
}

func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{
		"http://example.com", "https://a.b:1/x?y#z", "http://[::1]:80", "ftp://x",
		"", "http://", "http://user:pw@host:0", "HTTP://HOST.", "https://[fe80::1%25eth0]:443",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o, err := ParseOrigin(raw)
		if err != nil {
			return
		}
		if o.Scheme != "http" && o.Scheme != "https" {
			t.Fatalf("scheme %q accepted", o.Scheme)
		}
		if o.Host == "" || o.Port == "" {
			t.Fatalf("incomplete origin %+v from %q", o, raw)
		}
		if o.Host != strings.ToLower(o.Host) {
			t.Fatalf("host %q not lower-cased", o.Host)
		}
	})
}

// TestOriginPolicy covers the checks made before anything is sent.
func TestOriginPolicy(t *testing.T) {
	var hits atomic.Int32
	srv, origin := backend(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1); ok(w, r) })
	u, _ := url.Parse(srv.URL)
	other := Origin{Scheme: "http", Host: "127.0.0.1", Port: closedPort(t)}

	tests := []struct {
		name    string
		url     string
		allowed []Origin
		wantErr error
	}{
		{name: "declared origin", url: srv.URL + "/x", allowed: []Origin{origin}},
		// origin is a mapping-path literal here, dialled with a DNS
		// answer's checks, so the test allows loopback (below).
		{name: "one of several", url: srv.URL + "/x", allowed: []Origin{other, {}, origin}},
		{name: "undeclared origin", url: srv.URL + "/x", allowed: []Origin{other}, wantErr: ErrDenied},
		{name: "no origins", url: srv.URL + "/x", wantErr: ErrDenied},
		{name: "scheme mismatch", url: "https://" + u.Host + "/x", allowed: []Origin{origin}, wantErr: ErrDenied},
		{name: "port mismatch", url: "http://127.0.0.1:" + other.Port + "/x", allowed: []Origin{origin}, wantErr: ErrDenied},
		{name: "host mismatch", url: "http://localhost:" + origin.Port + "/x", allowed: []Origin{origin}, wantErr: ErrDenied},
		{name: "not http", url: "file:///etc/passwd", allowed: []Origin{origin}, wantErr: ErrDenied},
		{name: "relative", url: "/x", allowed: []Origin{origin}, wantErr: ErrDenied},
		{name: "malformed", url: "http://%zz/", allowed: []Origin{origin}, wantErr: ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Limits{Timeout: 5 * time.Second})
			c.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			var denials []string
			c.OnDenied = func(reason string) { denials = append(denials, reason) }
			before := hits.Load()
			resp, err := c.Do(context.Background(), &abi.CompiledRequest{Method: "GET", URL: tt.url}, tt.allowed, secrets{})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if hits.Load() != before {
					t.Fatalf("a denied request reached the backend")
				}
				if tt.wantErr == ErrDenied && len(denials) == 0 && tt.name != "malformed" {
					t.Errorf("OnDenied not called")
				}
				return
			}
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if resp.Status != 200 || string(resp.Body) != "ok" {
				t.Fatalf("resp = %d %q", resp.Status, resp.Body)
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	var outsideHits atomic.Int32
	outside, _ := backend(t, func(w http.ResponseWriter, r *http.Request) { outsideHits.Add(1); ok(w, r) })
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/inside":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			io.WriteString(w, "final")
		case "/outside":
			http.Redirect(w, r, outside.URL+"/steal", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/scheme":
			http.Redirect(w, r, "https://"+r.Host+"/final", http.StatusFound)
		}
	})
	base := origin.String()
	tests := []struct {
		path    string
		want    string
		wantErr error
	}{
		{path: "/inside", want: "final"},
		{path: "/outside", wantErr: ErrDenied},
		{path: "/loop", wantErr: ErrDenied},
		{path: "/scheme", wantErr: ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			c := newClient(t, Limits{Timeout: 5 * time.Second, MaxRedirects: 3})
			resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: base + tt.path}, []Origin{origin}, secrets{})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if string(resp.Body) != tt.want {
				t.Fatalf("body = %q, want %q", resp.Body, tt.want)
			}
		})
	}
	if n := outsideHits.Load(); n != 0 {
		t.Fatalf("undeclared origin was reached %d times through a redirect", n)
	}
}

// TestForbiddenResolution: a declared name whose DNS answer points at
// link-local, metadata, unspecified, loopback, private, CGNAT or
// unique-local addresses is refused at dial time; the operator's
// AllowPrivate ranges (never metadata) open the host's own networks. The
// resolver is fake: no real DNS is consulted.
func TestForbiddenResolution(t *testing.T) {
	srv, _ := backend(t, ok)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	loopback := netip.MustParseAddr("127.0.0.1")
	declared := Origin{Scheme: "http", Host: "api.example.test", Port: port}
	tests := []struct {
		name    string
		addrs   []netip.Addr
		allow   []netip.Prefix
		wantErr error
		reason  string
	}{
		{name: "loopback", addrs: []netip.Addr{loopback}, wantErr: ErrDenied, reason: "private_address"},
		{name: "loopback v6", addrs: []netip.Addr{netip.MustParseAddr("::1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "loopback v4-mapped", addrs: []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "loopback through NAT64", addrs: []netip.Addr{netip.MustParseAddr("64:ff9b::7f00:1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "RFC 1918 10/8", addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "RFC 1918 172.16/12", addrs: []netip.Addr{netip.MustParseAddr("172.31.255.1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "RFC 1918 192.168/16", addrs: []netip.Addr{netip.MustParseAddr("192.168.1.1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "CGNAT", addrs: []netip.Addr{netip.MustParseAddr("100.64.0.1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "unique-local", addrs: []netip.Addr{netip.MustParseAddr("fd12:3456::1")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "this network", addrs: []netip.Addr{netip.MustParseAddr("0.1.2.3")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "allowed range does not open metadata", addrs: []netip.Addr{netip.MustParseAddr("169.254.169.254")}, allow: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16")}, wantErr: ErrDenied},
		{name: "other range allowed", addrs: []netip.Addr{loopback}, allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, wantErr: ErrDenied, reason: "private_address"},
		{name: "metadata v4", addrs: []netip.Addr{netip.MustParseAddr("169.254.169.254")}, wantErr: ErrDenied},
		{name: "metadata v4-mapped", addrs: []netip.Addr{netip.MustParseAddr("::ffff:169.254.169.254")}, wantErr: ErrDenied},
		{name: "link-local v6", addrs: []netip.Addr{netip.MustParseAddr("fe80::1")}, wantErr: ErrDenied},
		{name: "unspecified v4", addrs: []netip.Addr{netip.MustParseAddr("0.0.0.0")}, wantErr: ErrDenied},
		{name: "unspecified v6", addrs: []netip.Addr{netip.MustParseAddr("::")}, wantErr: ErrDenied},
		{name: "metadata v6", addrs: []netip.Addr{netip.MustParseAddr("fd00:ec2::254")}, wantErr: ErrDenied},
		{name: "multicast", addrs: []netip.Addr{netip.MustParseAddr("224.0.0.1")}, wantErr: ErrDenied},
		{name: "no answer", addrs: nil, wantErr: ErrTransport},
		{name: "allowed range", addrs: []netip.Addr{loopback}, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		// A forbidden answer is skipped, never dialled; a good one still works.
		{name: "forbidden then allowed", addrs: []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("10.0.0.1"), loopback}, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Limits{Timeout: 5 * time.Second})
			c.AllowPrivate = tt.allow
			var resolved atomic.Int32
			c.SetResolver(func(_ context.Context, host string) ([]netip.Addr, error) {
				if host != declared.Host {
					return nil, fmt.Errorf("unexpected lookup %q", host)
				}
				resolved.Add(1)
				return tt.addrs, nil
			})
			var reasons []string
			var mu sync.Mutex
			c.OnDenied = func(r string) { mu.Lock(); reasons = append(reasons, r); mu.Unlock() }
			start := time.Now()
			resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: declared.String() + "/"}, []Origin{declared}, secrets{})
			if resolved.Load() == 0 {
				t.Fatal("resolver not consulted")
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				// Refused before dialling: the OnDenied reason below says the
				// address was judged, not dialled (time is logged, never asserted).
				t.Logf("denied after %v", time.Since(start))
				mu.Lock()
				defer mu.Unlock()
				want := tt.reason
				if want == "" {
					want = "forbidden_address"
				}
				if tt.wantErr == ErrDenied && !contains(reasons, want) {
					t.Errorf("OnDenied reasons = %v", reasons)
				}
				return
			}
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if string(resp.Body) != "ok" {
				t.Fatalf("body %q", resp.Body)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestDeclaredIPLiteral: a catalog that declares an IP literal reaches it
// without consulting DNS.
func TestDeclaredIPLiteral(t *testing.T) {
	srv, origin := backend(t, ok)
	c := newClient(t, Limits{Timeout: 5 * time.Second})
	c.SetResolver(func(context.Context, string) ([]netip.Addr, error) {
		return nil, errors.New("resolver must not be used for an IP literal")
	})
	if _, err := c.Do(context.Background(), &abi.CompiledRequest{URL: srv.URL}, []Origin{origin}, nil); err != nil {
		t.Fatalf("Do: %v", err)
	}
}

func TestAuthInjection(t *testing.T) {
	type seen struct {
		auth, key, query string
	}
	var mu sync.Mutex
	var last seen
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = seen{auth: r.Header.Get("Authorization"), key: r.Header.Get("X-Api-Key"), query: r.URL.Query().Get("api_key")}
		mu.Unlock()
		io.WriteString(w, r.URL.Query().Get("q"))
	})
	sec := secrets{"TOKEN": "tok-123", "EMPTY": ""}
	tests := []struct {
		name    string
		auth    *abi.AuthDirective
		secrets Secrets
		want    seen
		wantErr error
	}{
		{name: "none", want: seen{}},
		{name: "bearer", auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "TOKEN"}, want: seen{auth: "Bearer tok-123"}},
		{name: "header", auth: &abi.AuthDirective{Scheme: "api_key_header", Header: "X-Api-Key", Secret: "TOKEN"}, want: seen{key: "tok-123"}},
		{name: "query", auth: &abi.AuthDirective{Scheme: "api_key_query", Param: "api_key", Secret: "TOKEN"}, want: seen{query: "tok-123"}},
		{name: "missing secret", auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "NOPE"}, wantErr: ErrSecret},
		{name: "empty secret", auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "EMPTY"}, wantErr: ErrSecret},
		{name: "nil secrets", auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "TOKEN"}, secrets: Secrets(nil), wantErr: ErrSecret},
		{name: "unknown scheme", auth: &abi.AuthDirective{Scheme: "basic", Secret: "TOKEN"}, wantErr: ErrDenied},
		{name: "header without name", auth: &abi.AuthDirective{Scheme: "api_key_header", Secret: "TOKEN"}, wantErr: ErrDenied},
		{name: "query without param", auth: &abi.AuthDirective{Scheme: "api_key_query", Secret: "TOKEN"}, wantErr: ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Limits{Timeout: 5 * time.Second})
			s := tt.secrets
			if s == nil && tt.name != "nil secrets" {
				s = sec
			}
			mu.Lock()
			last = seen{}
			mu.Unlock()
			resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: origin.String() + "/x?q=kept", Auth: tt.auth}, []Origin{origin}, s)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "tok-123") {
					t.Fatalf("secret in error: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if string(resp.Body) != "kept" {
				t.Errorf("compiled query lost: body %q", resp.Body)
			}
			mu.Lock()
			defer mu.Unlock()
			if last != tt.want {
				t.Fatalf("backend saw %+v, want %+v", last, tt.want)
			}
		})
	}
}

// TestSecretRedaction forces errors whose text would carry the request URL,
// with an api_key_query secret in it, and checks the secret never shows.
func TestSecretRedaction(t *testing.T) {
	outside, _ := backend(t, ok)
	refused := Origin{Scheme: "http", Host: "127.0.0.1", Port: closedPort(t)}
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-outside":
			http.Redirect(w, r, outside.URL+"/?"+r.URL.RawQuery, http.StatusFound)
		case "/to-refused":
			http.Redirect(w, r, refused.String()+"/?"+r.URL.RawQuery, http.StatusFound)
		case "/hangup":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	})
	for _, secret := range []string{"sk-plain-0123456789", "sk/with+special&chars= ok"} {
		for _, path := range []string{"/to-outside", "/to-refused", "/hangup", "/slow"} {
			t.Run(path+"/"+url.QueryEscape(secret), func(t *testing.T) {
				c := newClient(t, Limits{Timeout: 300 * time.Millisecond, MaxRetries: -1})
				req := &abi.CompiledRequest{
					URL:  origin.String() + path,
					Auth: &abi.AuthDirective{Scheme: "api_key_query", Param: "key", Secret: "K"},
				}
				_, err := c.Do(context.Background(), req, []Origin{origin, refused}, secrets{"K": secret})
				if err == nil {
					t.Fatal("expected an error")
				}
				msg := err.Error()
				for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
					if strings.Contains(msg, form) {
						t.Fatalf("secret leaked as %q in %q", form, msg)
					}
				}
				if !errors.Is(err, ErrDenied) && !errors.Is(err, ErrTransport) && !errors.Is(err, ErrTimeout) {
					t.Fatalf("redaction lost the error kind: %v", err)
				}
			})
		}
	}
}

func TestBodyCap(t *testing.T) {
	var written atomic.Int64
	handlerDone := make(chan struct{}, 1)
	srv, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		defer func() { handlerDone <- struct{}{} }()
		if r.URL.Path == "/small" {
			w.Write(make([]byte, 1000))
			return
		}
		chunk := make([]byte, 32<<10)
		for i := 0; i < 1<<15; i++ { // up to 1 GiB
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	c := newClient(t, Limits{Timeout: 10 * time.Second, MaxBodyBytes: 64 << 10})
	resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: srv.URL + "/small"}, []Origin{origin}, nil)
	if err != nil || len(resp.Body) != 1000 {
		t.Fatalf("small body: %v", err)
	}
	<-handlerDone
	start := time.Now()
	_, err = c.Do(context.Background(), &abi.CompiledRequest{URL: srv.URL + "/big"}, []Origin{origin}, nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	select {
	case <-handlerDone:
	case <-time.After(10 * time.Second):
		t.Fatal("backend kept streaming after the cap was hit")
	}
	// Socket buffers hold a few MiB at most; reading everything would be 1 GiB.
	if n := written.Load(); n > 256<<20 {
		t.Fatalf("backend wrote %d bytes; the client did not stop early", n)
	}
	t.Logf("stopped after %v, backend wrote %d bytes", time.Since(start), written.Load())
}

func TestTrickleTimeout(t *testing.T) {
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	const timeout = 300 * time.Millisecond
	c := newClient(t, Limits{Timeout: timeout})
	start := time.Now()
	_, err := c.Do(context.Background(), &abi.CompiledRequest{URL: origin.String() + "/"}, []Origin{origin}, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	t.Logf("ErrTimeout after %v with a %v timeout", time.Since(start), timeout)
}

func TestHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newClient(t, Limits{Timeout: 200 * time.Millisecond})
	_, err := c.Do(context.Background(), &abi.CompiledRequest{URL: origin.String() + "/"}, []Origin{origin}, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestCallerCancelIsNotTimeout(t *testing.T) {
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := newClient(t, Limits{Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Do(ctx, &abi.CompiledRequest{URL: origin.String() + "/"}, []Origin{origin}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if errors.Is(err, ErrTimeout) {
		t.Fatalf("a caller's cancellation was reported as a backend timeout: %v", err)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		limits     Limits
		failures   int32
		status     int
		retryAfter string
		wantStatus int
		wantCalls  int32
	}{
		{name: "429 then ok", failures: 1, status: 429, retryAfter: "0", wantStatus: 200, wantCalls: 2},
		{name: "503 twice then ok", failures: 2, status: 503, retryAfter: "0", wantStatus: 200, wantCalls: 3},
		{name: "default limits retry", limits: Limits{}, failures: 1, status: 429, retryAfter: "0", wantStatus: 200, wantCalls: 2},
		{name: "gives up", limits: Limits{MaxRetries: 1}, failures: 5, status: 429, retryAfter: "0", wantStatus: 429, wantCalls: 2},
		{name: "retries disabled", limits: Limits{MaxRetries: -1}, failures: 1, status: 429, retryAfter: "0", wantStatus: 429, wantCalls: 1},
		{name: "retry-after capped", limits: Limits{MaxRetryWait: 10 * time.Millisecond}, failures: 1, status: 429, retryAfter: "3600", wantStatus: 200, wantCalls: 2},
		{name: "500 not retried", failures: 1, status: 500, wantStatus: 500, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= tt.failures {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					w.WriteHeader(tt.status)
					return
				}
				ok(w, r)
			})
			l := tt.limits
			l.Timeout = 5 * time.Second
			c := newClient(t, l)
			start := time.Now()
			resp, err := c.Do(context.Background(), &abi.CompiledRequest{Method: "POST", URL: origin.String() + "/", Body: "{}"}, []Origin{origin}, nil)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if resp.Status != tt.wantStatus || calls.Load() != tt.wantCalls {
				t.Fatalf("status %d after %d calls, want %d after %d", resp.Status, calls.Load(), tt.wantStatus, tt.wantCalls)
			}
			t.Logf("retries took %v", time.Since(start))
		})
	}
}

func TestRetryAfter(t *testing.T) {
	max := 2 * time.Second
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"1", time.Second},
		{" 1 ", time.Second},
		{"100", max},
		{"-5", 200 * time.Millisecond},
		{"", 200 * time.Millisecond},
		{"soon", 200 * time.Millisecond},
		{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0},
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), max},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, max); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestRequestShape(t *testing.T) {
	type seen struct {
		method, host, ua, body, custom string
	}
	got := make(chan seen, 1)
	srv, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{method: r.Method, host: r.Host, ua: r.UserAgent(), body: string(b), custom: r.Header.Get("X-Custom")}
		ok(w, r)
	})
	c := newClient(t, Limits{Timeout: 5 * time.Second})
	req := &abi.CompiledRequest{
		Method:  "PATCH",
		URL:     srv.URL + "/items/1",
		Body:    `{"a":1}`,
		Headers: [][2]string{{"Host", "evil.example"}, {"host", "evil2.example"}, {"X-Custom", "yes"}},
	}
	if _, err := c.Do(context.Background(), req, []Origin{origin}, nil); err != nil {
		t.Fatalf("Do: %v", err)
	}
	s := <-got
	want := seen{method: "PATCH", host: net.JoinHostPort(origin.Host, origin.Port), ua: "plasmd", body: `{"a":1}`, custom: "yes"}
	if s != want {
		t.Fatalf("backend saw %+v, want %+v", s, want)
	}

	// Default method is GET; a method with spaces never reaches the wire.
	if _, err := c.Do(context.Background(), &abi.CompiledRequest{URL: srv.URL}, []Origin{origin}, nil); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if s := <-got; s.method != "GET" {
		t.Fatalf("default method %q", s.method)
	}
	if _, err := c.Do(context.Background(), &abi.CompiledRequest{Method: "GET / HTTP/1.1\r\nX:", URL: srv.URL}, []Origin{origin}, nil); err == nil {
		t.Fatal("malformed method accepted")
	}
}

func TestDefaults(t *testing.T) {
	c := New(Limits{})
	defer c.Close()
	if c.limits != DefaultLimits() {
		t.Fatalf("New(Limits{}) limits = %+v, want %+v", c.limits, DefaultLimits())
	}
	c2 := New(Limits{MaxRetries: -1})
	defer c2.Close()
	if c2.limits.MaxRetries != 0 {
		t.Fatalf("MaxRetries -1 became %d", c2.limits.MaxRetries)
	}
}

func TestForbidden(t *testing.T) {
	for _, s := range []string{"169.254.169.254", "169.254.0.1", "fe80::1", "0.0.0.0", "::", "224.0.0.251", "ff02::1", "fd00:ec2::254", "100.100.100.200"} {
		if !forbidden(netip.MustParseAddr(s)) {
			t.Errorf("%s not forbidden", s)
		}
	}
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "192.168.1.1", "8.8.8.8", "::1", "2001:db8::1"} {
		if forbidden(netip.MustParseAddr(s)) {
			t.Errorf("%s forbidden", s)
		}
	}
}

// TestCredentialsOnlyHome: a catalog may declare origins besides its
// http_backend's (an absolute URL in a mapping's path), but its
// credentials go only to the home origin, allowed[0]: a request carrying
// them elsewhere is refused before anything is sent, and a redirect from
// home to another declared origin arrives without them.
func TestCredentialsOnlyHome(t *testing.T) {
	var mu sync.Mutex
	var thirdSaw []string
	third, thirdOrigin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		thirdSaw = append(thirdSaw, r.Header.Get("X-Api-Key")+"|"+r.Header.Get("Authorization"))
		mu.Unlock()
		io.WriteString(w, "third")
	})
	home, homeOrigin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "tok-123" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, third.URL+"/after", http.StatusFound)
	})
	// thirdOrigin is a mapping-path literal on loopback: allowed below.
	allowed := []Origin{homeOrigin, {}, thirdOrigin}
	auth := &abi.AuthDirective{Scheme: "api_key_header", Header: "X-Api-Key", Secret: "TOKEN"}
	c := newClient(t, Limits{Timeout: 5 * time.Second, MaxRedirects: 3})
	c.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	sec := secrets{"TOKEN": "tok-123"}

	_, err := c.Do(context.Background(), &abi.CompiledRequest{URL: third.URL + "/direct", Auth: auth}, allowed, sec)
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("credentials to a third-party origin: err = %v, want ErrDenied", err)
	}
	resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: home.URL + "/start", Auth: auth}, allowed, sec)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if string(resp.Body) != "third" {
		t.Fatalf("body = %q, want the redirect's target", resp.Body)
	}
	if _, err := c.Do(context.Background(), &abi.CompiledRequest{URL: third.URL + "/plain"}, allowed, sec); err != nil {
		t.Fatalf("a request without credentials to a declared origin: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"|", "|"}; !slices.Equal(thirdSaw, want) {
		t.Fatalf("third-party origin saw credentials %q, want none twice", thirdSaw)
	}
}

// TestQueryKeyStaysHome: an api_key_query key reaches no other origin on
// a redirect, neither in Referer nor in a URL that keeps the query.
func TestQueryKeyStaysHome(t *testing.T) {
	var mu sync.Mutex
	var thirdSaw []string
	third, thirdOrigin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		thirdSaw = append(thirdSaw, r.Header.Get("Referer")+"|"+r.URL.RawQuery)
		mu.Unlock()
		io.WriteString(w, "third")
	})
	home, homeOrigin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		target := third.URL + "/after"
		if r.URL.Path == "/keep-query" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
	// thirdOrigin is a mapping-path literal on loopback: allowed below.
	allowed := []Origin{homeOrigin, {}, thirdOrigin}
	auth := &abi.AuthDirective{Scheme: "api_key_query", Param: "api_key", Secret: "TOKEN"}
	c := newClient(t, Limits{Timeout: 5 * time.Second, MaxRedirects: 3})
	c.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	sec := secrets{"TOKEN": "tok-123"}
	if _, err := c.Do(context.Background(), &abi.CompiledRequest{URL: home.URL + "/start", Auth: auth}, allowed, sec); err != nil {
		t.Fatalf("Do: %v", err)
	}
	_, err := c.Do(context.Background(), &abi.CompiledRequest{URL: home.URL + "/keep-query", Auth: auth}, allowed, sec)
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("a redirect keeping the key in its query: err = %v, want ErrDenied", err)
	}
	if strings.Contains(err.Error(), "tok-123") {
		t.Fatalf("the refusal names the key: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, saw := range thirdSaw {
		if strings.Contains(saw, "tok-123") {
			t.Fatalf("third-party origin saw the key: %q", thirdSaw)
		}
	}
	if len(thirdSaw) != 1 {
		t.Fatalf("third-party origin got %d requests, want 1 (the redirect without the key)", len(thirdSaw))
	}
}
