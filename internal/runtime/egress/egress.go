// Package egress is the only way plasmd reaches a backend. It sends the
// requests guests compile, but only to origins the catalog declares: the
// origin is checked before sending, on every redirect, and against the
// address the name resolved to. It injects the tenant's secrets (which guests
// never see; CatalogSecrets limits a catalog to the names it declares), bounds time and response size, and retries politely on 429/503.
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Errors callers branch on.
var (
	// ErrDenied: the request (or a redirect, or the resolved address) leaves
	// the catalog's declared origins.
	ErrDenied = errors.New("egress denied")
	// ErrTooLarge: the response body exceeded the size cap.
	ErrTooLarge = errors.New("response body too large")
	// ErrTimeout: the backend did not answer in time.
	ErrTimeout = errors.New("backend timeout")
	// ErrSecret: a secret the catalog names is not configured.
	ErrSecret = errors.New("secret not configured")
	// ErrTransport: the backend could not be reached.
	ErrTransport = errors.New("backend unreachable")
)

// Origin is a scheme, host and port a catalog may reach.
type Origin struct {
	Scheme string
	Host   string // lower-case host as net/http dials it (ASCII), no brackets
	Port   string // always explicit
}

func (o Origin) String() string { return o.Scheme + "://" + net.JoinHostPort(o.Host, o.Port) }

// ParseOrigin returns the origin of an absolute http(s) URL.
func ParseOrigin(raw string) (Origin, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Origin{}, fmt.Errorf("parse origin %q: %w", raw, err)
	}
	return originOf(u)
}

func originOf(u *url.URL) (Origin, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Origin{}, fmt.Errorf("%w: scheme %q is not http or https", ErrDenied, u.Scheme)
	}
	// The host net/http will dial, not the one written: IDNA maps
	// "１２７.０.０.１" to 127.0.0.1 (catalog.DialHost).
	host, err := catalog.DialHost(u.Hostname())
	if err != nil {
		return Origin{}, fmt.Errorf("%w: %v", ErrDenied, err)
	}
	if host == "" {
		return Origin{}, fmt.Errorf("%w: URL has no host", ErrDenied)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return Origin{Scheme: scheme, Host: host, Port: port}, nil
}

// Secrets resolves secret names to values.
type Secrets interface {
	Secret(name string) (string, bool)
}

// Limits bound one backend call.
type Limits struct {
	Timeout      time.Duration // whole call, including body read
	MaxBodyBytes int64
	MaxRedirects int
	MaxRetries   int           // on 429 / 503; 0 takes the default, negative disables
	MaxRetryWait time.Duration // cap on Retry-After
}

// DefaultLimits are used for zero fields.
func DefaultLimits() Limits {
	return Limits{Timeout: 30 * time.Second, MaxBodyBytes: 16 << 20, MaxRedirects: 5, MaxRetries: 2, MaxRetryWait: 2 * time.Second}
}

// Response is a backend answer with its body fully read (within the cap).
type Response struct {
	Status  int
	Headers http.Header
	Body    []byte
	// Credential is the credential value the request carried (the
	// secret, or the access token fetched for oauth2_client_credentials),
	// so the caller can redact a backend's echo of it from the errors it
	// shows; never serialised.
	Credential string `json:"-"`
}

// Client sends compiled requests. The zero value is not usable; use New.
type Client struct {
	limits Limits
	// resolver is replaceable in tests to simulate hostile DNS answers.
	resolver func(ctx context.Context, host string) ([]netip.Addr, error)
	base     *http.Transport
	// OnDenied, if set, is called for every denial (metrics).
	OnDenied func(reason string)
	// tokens caches OAuth client-credentials access tokens.
	tokens tokenCache
	// AllowPrivate are ranges of the host's own networks (loopback,
	// private, CGNAT, unique-local) a resolved name or a declared IP
	// literal other than a catalog's http_backend (or its token endpoint,
	// in the token fetch) may reach; an entry no wider than a link-local range, or naming a
	// metadata address, opens that too (addrs.go, literal.go). Set before
	// the first Do.
	AllowPrivate []netip.Prefix
	// connect dials an address dial has checked; tests replace it to
	// prove what would be dialled without dialling it.
	connect func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New returns a client with limits (zero fields take defaults).
func New(l Limits) *Client {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxRedirects <= 0 {
		l.MaxRedirects = d.MaxRedirects
	}
	// Zero means "unset" like every other field, so a zero Limits still
	// retries politely; a negative value is the way to turn retries off.
	switch {
	case l.MaxRetries == 0:
		l.MaxRetries = d.MaxRetries
	case l.MaxRetries < 0:
		l.MaxRetries = 0
	}
	if l.MaxRetryWait <= 0 {
		l.MaxRetryWait = d.MaxRetryWait
	}
	c := &Client{limits: l, connect: (&net.Dialer{}).DialContext}
	c.resolver = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	c.base = &http.Transport{
		Proxy:                 nil, // never route tenant traffic through an ambient proxy
		DialContext:           c.dial,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: l.Timeout,
		ForceAttemptHTTP2:     true,
	}
	return c
}

// SetResolver replaces name resolution (tests simulate hostile DNS with it).
func (c *Client) SetResolver(r func(ctx context.Context, host string) ([]netip.Addr, error)) {
	c.resolver = r
}

// Close releases idle connections.
func (c *Client) Close() { c.base.CloseIdleConnections() }

// dial resolves the host itself and refuses addresses a tenant may never
// reach (addrs.go), so a DNS answer cannot smuggle a request to the
// metadata service or the host's internal services. An IP literal was
// judged by check, which knows whose origin it is (literal.go); dial does
// not take that on trust: a literal on the host's own networks outside
// the allowed ranges is dialled only if it is the origin the request's
// context trusts (withTrust), so a host that check read differently from
// net/http could not get one through.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	literal, err := hostAddr(host)
	if err != nil {
		c.denied("forbidden_address")
		return nil, fmt.Errorf("%w: %v", ErrDenied, err)
	}
	var addrs []netip.Addr
	if literal.IsValid() {
		addrs = []netip.Addr{literal}
	} else {
		if host, err = catalog.DialHost(host); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDenied, err) // hostAddr refused it already
		}
		addrs, err = c.resolver(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("%w: resolve %s: %v", ErrTransport, host, err)
		}
	}
	var lastErr error
	for _, a := range addrs {
		a = a.Unmap()
		reason := addrRefusal(a, c.AllowPrivate)
		if literal.IsValid() && reason == "private_address" && trusted(ctx, a, port) {
			reason = "" // the home literal check let through
		}
		if reason != "" {
			c.denied(reason)
			if literal.IsValid() {
				lastErr = fmt.Errorf("%w: %s", ErrDenied, refusalHint(reason, literal, false))
				continue
			}
			hint := refusalHint(reason, a, false)
			if reason == "private_address" {
				hint = "an address on the host's own networks, which a name reaches only in a range the operator allows with --egress-allow-private"
			}
			lastErr = fmt.Errorf("%w: %s resolves to %s: %s", ErrDenied, host, a, hint)
			continue
		}
		conn, err := c.connect(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("%w: %s has no address", ErrTransport, host)
	}
	return nil, lastErr
}

func (c *Client) denied(reason string) {
	if c.OnDenied != nil {
		c.OnDenied(reason)
	}
}

// Do sends req if its origin is in allowed, injecting credentials from
// secrets. allowed[0] is the catalog's home origin (its http_backend's),
// the only origin credentials are sent to: a catalog may declare other
// origins (an absolute URL in a mapping's path, such as a third-party
// search API), and the tenant's key must not go to them. allowed[1], when
// present, is its token endpoint's origin, the only other origin client
// credentials go to. A catalog without one of them lists the zero Origin
// in its place, which no URL has.
func (c *Client) Do(ctx context.Context, req *abi.CompiledRequest, allowed []Origin, secrets Secrets) (*Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed URL: %v", ErrDenied, err)
	}
	// Only the home origin's literal may be on the host's own networks
	// here and on redirects; the token endpoint's only for the token fetch
	// (credential).
	home := homeOf(allowed)
	ctx = withTrust(ctx, home)
	if err := c.check(u, allowed, home); err != nil {
		return nil, err
	}
	if req.Auth != nil && !isHome(u, allowed) {
		c.denied("credentials_origin")
		return nil, fmt.Errorf("%w: credentials go only to the catalog's http_backend origin, not %s", ErrDenied, u.Redacted())
	}
	var secretValue string
	if req.Auth != nil {
		if err := checkAuth(req.Auth); err != nil {
			c.denied("auth")
			return nil, err
		}
		v, err := c.credential(ctx, req.Auth, allowed, secrets, false)
		if err != nil {
			var undeclared *UndeclaredSecretError
			if errors.As(err, &undeclared) {
				c.denied("undeclared_secret")
			}
			return nil, err
		}
		secretValue = v
		if req.Auth.Scheme == "api_key_query" {
			q := u.Query()
			q.Set(req.Auth.Param, v)
			u.RawQuery = q.Encode()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.limits.Timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, req, u, allowed, secretValue)
		if err != nil {
			return nil, redact(err, secretValue)
		}
		resp.Credential = secretValue
		if resp.Status == http.StatusUnauthorized && req.Auth != nil && req.Auth.Scheme == schemeClientCredentials && attempt == 0 {
			// The token was revoked or expired early: fetch a new one once.
			if secretValue, err = c.credential(ctx, req.Auth, allowed, secrets, true); err != nil {
				return nil, err
			}
			continue
		}
		if (resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable) && attempt < c.limits.MaxRetries {
			wait := retryAfter(resp.Headers.Get("Retry-After"), c.limits.MaxRetryWait)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return resp, nil
			case <-t.C:
			}
			continue
		}
		return resp, nil
	}
}

// checkAuth refuses directives the host would otherwise resolve a secret
// for and then silently not send (or send under an empty name).
func checkAuth(a *abi.AuthDirective) error {
	switch a.Scheme {
	case "bearer_token":
		return nil
	case schemeClientCredentials:
		if a.TokenURL == "" || a.ClientID == "" || a.Secret == "" {
			return fmt.Errorf("%w: auth oauth2_client_credentials needs token_url, client id and client secret names", ErrDenied)
		}
		return nil
	case "api_key_header":
		if a.Header == "" {
			return fmt.Errorf("%w: auth api_key_header names no header", ErrDenied)
		}
		if strings.EqualFold(a.Header, "Host") {
			return fmt.Errorf("%w: auth api_key_header may not use the Host header", ErrDenied)
		}
		return nil
	case "api_key_query":
		if a.Param == "" {
			return fmt.Errorf("%w: auth api_key_query names no parameter", ErrDenied)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown auth scheme %q", ErrDenied, a.Scheme)
}

// homeOf is allowed[0], the home origin (see Do), or the zero Origin.
func homeOf(allowed []Origin) Origin {
	if len(allowed) == 0 {
		return Origin{}
	}
	return allowed[0]
}

// isHome reports whether u is on allowed[0], the home origin (see Do).
func isHome(u *url.URL, allowed []Origin) bool {
	o, err := originOf(u)
	return err == nil && len(allowed) > 0 && allowed[0] == o
}

// check refuses u unless its origin is among allowed and, for an IP
// literal, the policy of literal.go opens it; trust is the origin whose
// literal may be on the host's own networks (checkLiteral).
func (c *Client) check(u *url.URL, allowed []Origin, trust Origin) error {
	o, err := originOf(u)
	if err != nil {
		c.denied("scheme")
		return err
	}
	for _, a := range allowed {
		if a == o {
			return c.checkLiteral(u.Hostname(), o, trust)
		}
	}
	c.denied("origin")
	return fmt.Errorf("%w: %s is not an origin this catalog declares", ErrDenied, o)
}

func (c *Client) once(ctx context.Context, creq *abi.CompiledRequest, u *url.URL, allowed []Origin, secret string) (*Response, error) {
	var body io.Reader
	if creq.Body != "" {
		body = strings.NewReader(creq.Body)
	}
	method := creq.Method
	if method == "" {
		method = http.MethodGet
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%w: build request: %v", ErrDenied, err)
	}
	hreq.Header.Set("User-Agent", "plasmd")
	if secret != "" {
		switch creq.Auth.Scheme {
		case "bearer_token", schemeClientCredentials:
			hreq.Header.Set("Authorization", "Bearer "+secret)
		case "api_key_header":
			hreq.Header.Set(creq.Auth.Header, secret)
		}
	}
	for _, h := range creq.Headers {
		if strings.EqualFold(h[0], "Host") {
			continue // the Host is the declared origin's, never a guest's choice
		}
		hreq.Header.Add(h[0], h[1])
	}
	hc := &http.Client{
		Transport: c.base,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= c.limits.MaxRedirects {
				return fmt.Errorf("%w: more than %d redirects", ErrDenied, c.limits.MaxRedirects)
			}
			if err := c.check(r.URL, allowed, homeOf(allowed)); err != nil {
				return fmt.Errorf("redirect: %w", err)
			}
			// net/http re-sends the first request's headers on a redirect,
			// and names the URL it came from, query included, in Referer;
			// credentials may only reach the home origin (see Do), so a
			// redirect elsewhere among the declared origins goes without
			// them, and one whose URL carries the api_key_query parameter
			// (a backend that keeps the query when it redirects) is refused.
			if secret != "" && !isHome(r.URL, allowed) {
				r.Header.Del("Authorization")
				r.Header.Del("Referer")
				switch creq.Auth.Scheme {
				case "api_key_header":
					r.Header.Del(creq.Auth.Header)
				case "api_key_query":
					if r.URL.Query().Has(creq.Auth.Param) {
						c.denied("credentials_origin")
						return fmt.Errorf("%w: redirect would carry the api key to %s", ErrDenied, r.URL.Host)
					}
				}
			}
			return nil
		},
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.limits.MaxBodyBytes+1))
	if err != nil {
		return nil, classify(ctx, err)
	}
	if int64(len(data)) > c.limits.MaxBodyBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.limits.MaxBodyBytes)
	}
	return &Response{Status: resp.StatusCode, Headers: resp.Header, Body: data}, nil
}

func classify(ctx context.Context, err error) error {
	if errors.Is(err, ErrDenied) {
		return err
	}
	// The caller giving up (a sibling step failed, the client went away) is
	// not the backend's fault; only our own deadline is a backend timeout.
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("request abandoned: %w", context.Canceled)
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w: connection refused", ErrTransport)
	}
	return fmt.Errorf("%w: %v", ErrTransport, err)
}

func retryAfter(v string, max time.Duration) time.Duration {
	d := 200 * time.Millisecond
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d < 0 {
		d = 0
	}
	if d > max {
		d = max
	}
	return d
}

// redact removes a secret value from an error's text, in every form it can
// take there: raw, and escaped as a query value or path segment (URLs in
// net/http errors carry the encoded form).
func redact(err error, secret string) error {
	if secret == "" {
		return err
	}
	msg := err.Error()
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
		msg = strings.ReplaceAll(msg, form, "[redacted]")
	}
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }

// Unwrap keeps errors.Is working for the sentinel kinds.
func (r *redacted) Unwrap() error { return r.err }
