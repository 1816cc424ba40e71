// Package cml owns request compilation: it evaluates a capability's mapping
// (CML expressions for path, query, body and headers, pagination state and
// the auth scheme) against a call's variables and produces the
// abi.CompiledRequest the host sends.
//
// The package is pure: no I/O, no goroutines, standard library only, so it
// runs inside the wasip1 guest and natively. Secrets are named, never seen:
// the request carries an AuthDirective and the host injects the value.
// Every failure is an *abi.Error with Code abi.CodeCompile (or
// abi.CodeBadRequest for a nil request); evaluation is bounded in depth and
// output size so hostile input fails cleanly.
package cml

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/internal/model/request"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Transports.
const (
	TransportHTTP    = "http"
	TransportGraphQL = "graphql"
	TransportWasm    = "wasm"
)

// Body formats.
const (
	FormatJSON           = "json"
	FormatFormURLEncoded = "form_urlencoded"
	FormatMultipart      = "multipart"
)

// Compile builds the wire request of one capability call.
func Compile(cat *catalog.Catalog, req *abi.CompileRequest) (*abi.CompiledRequest, *abi.Error) {
	if cat == nil || req == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "compile: missing catalog or request"}
	}
	cp := cat.Capabilities[req.Capability]
	if cp == nil {
		return nil, &abi.Error{Code: abi.CodeCompile,
			Message: fmt.Sprintf("catalog %q has no capability %q", cat.EntryID, req.Capability)}
	}
	m := cat.Mappings[req.Capability]
	if m == nil {
		return nil, &abi.Error{Code: abi.CodeCompile,
			Message: fmt.Sprintf("capability %q has no mapping in catalog %q", req.Capability, cat.EntryID)}
	}
	if cp.Unavailable != "" {
		return nil, &abi.Error{Code: abi.CodeCompile,
			Message: fmt.Sprintf("compile %s: not executable here: %s", cp.Name, cp.Unavailable)}
	}
	if aerr := checkIntegerParams(cat, cp, req.Vars); aerr != nil {
		return nil, aerr
	}
	req = withIDVar(m, req)
	req = withInput(cp, m, req)
	req, aerr := splatScope(cat, cp, req)
	if aerr != nil {
		return nil, aerr
	}
	c := &compiler{cat: cat, cp: cp, m: m, req: req}
	out, err := c.compile()
	if err != nil {
		var ae *abi.Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, &abi.Error{Code: abi.CodeCompile, Message: fmt.Sprintf("compile %s: %v", cp.Name, err)}
	}
	return out, nil
}

type compiler struct {
	cat *catalog.Catalog
	cp  *catalog.Capability
	m   *catalog.Mapping
	req *abi.CompileRequest
	ev  *evaluator
}

func (c *compiler) fail(hint, format string, args ...any) *abi.Error {
	return &abi.Error{Code: abi.CodeCompile,
		Message: fmt.Sprintf("compile %s: ", c.cp.Name) + fmt.Sprintf(format, args...), Hint: hint}
}

func (c *compiler) compile() (*abi.CompiledRequest, error) {
	transport := c.m.Transport
	switch transport {
	case "", TransportHTTP:
		transport = TransportHTTP
	case TransportGraphQL:
	case TransportWasm:
		return nil, c.fail("the host routes transport wasm to the catalog's module (invoke hook)",
			"transport wasm is served by the catalog's vendor module, not the standard compiler")
	default:
		return nil, c.fail("", "unknown transport %q", c.m.Transport)
	}

	origin, base, baseQuery, err := c.backend()
	if err != nil {
		return nil, err
	}

	var state map[string]any
	loc := Location(c.m)
	if p := c.m.Pagination; p != nil {
		if at, ok := c.req.Page[PastMaxKey]; ok {
			return nil, c.fail("the list may continue past the page counter's max; no page after it is read", "page state is past the max of page counter %v", at)
		}
		state = PageState(p, c.req.Page)
		switch loc {
		case LocQuery, LocBody, LocLinkHeader, LocResponseNextURL:
		default:
			return nil, c.fail("", "unknown pagination location %q", loc)
		}
	}

	env := make(map[string]any, len(c.req.Vars)+len(state))
	for k, v := range c.req.Vars {
		env[k] = v
	}
	for k, v := range state {
		if k != NextURLKey {
			env[k] = v
		}
	}
	c.ev = newEvaluator(env)

	out := &abi.CompiledRequest{Method: c.method(transport), Page: state}

	u, err := c.buildURL(base, baseQuery, state, loc)
	if err != nil {
		return nil, err
	}
	out.URL = u
	// A next-page URL from a Link header or a response field replaces the
	// whole URL: the backend encoded everything the next page needs in it.
	// It must stay on the origin the first page went to (http_backend's,
	// or that of an absolute URL in the path).
	nextURL, _ := state[NextURLKey].(string)
	if nextURL != "" && (loc == LocLinkHeader || loc == LocResponseNextURL) {
		hint := "pagination may only follow URLs on the catalog's http_backend origin"
		if c.absoluteLiteral() != "" {
			hint = "pagination may only follow URLs on the origin of the list's first page"
		}
		if first, perr := url.Parse(u); perr == nil && first.Host != "" {
			origin = first
		}
		nu, err := sameOrigin(origin, nextURL)
		if err != nil {
			return nil, c.fail(hint, "%v", err)
		}
		out.URL = nu.String()
	}

	body, contentType, err := c.body(transport, state, loc)
	if err != nil {
		return nil, err
	}
	out.Body = body

	headers, err := c.headers(contentType)
	if err != nil {
		return nil, err
	}
	out.Headers = headers

	if len(out.URL)+len(out.Body) > maxOutput {
		return nil, c.fail("", "%v", errTooLarge)
	}
	if c.atHome(out.URL) {
		if out.Auth, err = c.auth(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// backend validates http_backend and splits it into the base the path
// segments are appended to (trailing slashes trimmed) and any query string
// it carries, which is kept in front of the mapping's query.
func (c *compiler) backend() (origin *url.URL, base, query string, err error) {
	raw := c.cat.HTTPBackend
	if raw == "" {
		if abs := c.absoluteLiteral(); abs != "" {
			// Every request of this mapping names its URL in full: the
			// catalog needs no http_backend for it.
			u, err := url.Parse(abs)
			if err != nil {
				return nil, "", "", c.fail("", "path URL %q: %v", abs, err)
			}
			return u, "", "", nil
		}
		return nil, "", "", c.fail("set http_backend in the catalog's domain.yaml", "catalog %q has no http_backend", c.cat.EntryID)
	}
	u, perr := url.Parse(raw)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", "", c.fail("", "catalog http_backend %q is not an absolute http(s) URL", raw)
	}
	base = raw
	if i := strings.IndexByte(base, '#'); i >= 0 {
		base = base[:i]
	}
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, query = base[:i], base[i+1:]
	}
	return u, strings.TrimRight(base, "/"), query, nil
}

func (c *compiler) method(transport string) string {
	if transport == TransportGraphQL {
		return "POST"
	}
	if c.m.Method == "" {
		return "GET"
	}
	return strings.ToUpper(c.m.Method)
}

func (c *compiler) buildURL(base, baseQuery string, state map[string]any, loc string) (string, error) {
	var b strings.Builder
	b.WriteString(base)
	for _, seg := range c.m.Path {
		if abs := c.absoluteSegment(seg, state); abs != "" {
			q, err := c.restart(&b, abs, seg)
			if err != nil {
				return "", err
			}
			baseQuery = q
			continue
		}
		b.WriteByte('/')
		switch seg.Type {
		case "literal", "":
			b.WriteString(seg.Value)
		case "var":
			v := c.req.Vars[seg.Name]
			if v == nil {
				if pv, ok := state[seg.Name]; ok {
					v = pv
				}
			}
			if v == nil {
				return "", c.fail(c.pathHint(seg.Name), "path variable %q has no value", seg.Name)
			}
			s, scalar, err := scalarText(v)
			if err != nil {
				return "", c.fail("", "path variable %q: %v", seg.Name, err)
			}
			if !scalar {
				return "", c.fail(c.pathHint(seg.Name), "path variable %q is %s, not a scalar", seg.Name, kindOf(v))
			}
			if s == "" {
				return "", c.fail(c.pathHint(seg.Name), "path variable %q is empty", seg.Name)
			}
			b.WriteString(request.PathSegment(s))
			b.WriteString(url.PathEscape(seg.Suffix))
		default:
			return "", c.fail("", "unknown path segment type %q", seg.Type)
		}
	}

	qv, err := c.ev.eval(c.m.Query, 0)
	if err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	pairs, err := flatten(qv, "query")
	if err != nil {
		return "", err
	}
	if c.m.Pagination != nil && loc != LocBody {
		if pairs, err = c.overlay(pairs, state); err != nil {
			return "", err
		}
	}
	q := encodeForm(pairs)
	switch {
	case baseQuery != "" && q != "":
		q = baseQuery + "&" + q
	case baseQuery != "":
		q = baseQuery
	}
	if q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

// overlay replaces (or adds) the paging parameters of state in pairs: the
// paging state wins over a mapping that also sets the same key.
func (c *compiler) overlay(pairs []pair, state map[string]any) ([]pair, error) {
	for _, name := range ParamNames(c.m.Pagination) {
		v, ok := state[name]
		if !ok || v == nil {
			continue
		}
		ps, err := flattenValue(name, v, "pagination")
		if err != nil {
			return nil, err
		}
		kept := pairs[:0:0]
		for _, p := range pairs {
			if p.key != name {
				kept = append(kept, p)
			}
		}
		pairs = append(kept, ps...)
	}
	return pairs, nil
}

func (c *compiler) pathHint(name string) string {
	switch c.cp.Kind {
	case catalog.KindQuery, catalog.KindSearch:
		return fmt.Sprintf("%s is a scope parameter: write it as a predicate, e.g. %s{%s=…}", name, c.cp.Entity, name)
	case catalog.KindCreate:
		return fmt.Sprintf("pass it as an argument: %s.%s(%s=…)", c.cp.Entity, catalog.MethodLabel(c.cp), name)
	}
	if name == "id" {
		return fmt.Sprintf("the row id comes from the receiver: %s(<id>)", c.cp.Entity)
	}
	if c.cp.Kind == catalog.KindGet {
		return fmt.Sprintf("pass it in the key: %s(%s=…, …)", c.cp.Entity, name)
	}
	return fmt.Sprintf("pass it as an argument: %s(<id>).%s(%s=…)", c.cp.Entity, catalog.MethodLabel(c.cp), name)
}

// body evaluates the body and encodes it in the mapping's format, placing
// body-located paging parameters first. It returns the Content-Type the
// encoding needs ("" for no body).
func (c *compiler) body(transport string, state map[string]any, loc string) (string, string, error) {
	v, err := c.ev.eval(c.m.Body, 0)
	if err != nil {
		return "", "", fmt.Errorf("body: %w", err)
	}
	if c.m.Pagination != nil && loc == LocBody {
		if v, err = c.placeInBody(v, transport, state); err != nil {
			return "", "", err
		}
	}
	if transport == TransportGraphQL {
		o, ok := asObject(v)
		if !ok {
			return "", "", c.fail("a graphql mapping's body is an object {query, variables}", "graphql body must be an object, got %s", kindOf(v))
		}
		if _, ok := o.get("query"); !ok {
			return "", "", c.fail("a graphql mapping's body is an object {query, variables}", "graphql body has no query")
		}
		b, err := appendJSON(nil, o, 0)
		if err != nil {
			return "", "", fmt.Errorf("body: %w", err)
		}
		return string(b), "application/json", nil
	}
	if v == nil {
		return "", "", nil
	}
	switch c.m.BodyFormat {
	case "", FormatJSON:
		b, err := appendJSON(nil, v, 0)
		if err != nil {
			return "", "", fmt.Errorf("body: %w", err)
		}
		return string(b), "application/json", nil
	case FormatFormURLEncoded:
		ps, err := flatten(v, "form body")
		if err != nil {
			return "", "", err
		}
		return encodeForm(ps), "application/x-www-form-urlencoded", nil
	case FormatMultipart:
		ps, err := flatten(v, "multipart body")
		if err != nil {
			return "", "", err
		}
		return encodeMultipart(ps)
	}
	return "", "", c.fail("", "unknown body_format %q", c.m.BodyFormat)
}

// placeInBody sets paging parameters as top-level body keys, or for GraphQL
// inside body.variables, where the query's $variables are bound.
func (c *compiler) placeInBody(v any, transport string, state map[string]any) (any, error) {
	empty := v == nil
	if empty {
		v = object{}
	}
	body, ok := asObject(v)
	if !ok {
		return nil, c.fail("", "pagination location body needs an object body, got %s", kindOf(v))
	}
	if mp := c.m.Pagination.BodyMergePath; len(mp) > 0 {
		// Plasm's body_merge_path names the nested object the page
		// parameters go into (GraphQL variables.o.paginate).
		return placeAt(body, mp, func(t object) object {
			for _, name := range ParamNames(c.m.Pagination) {
				if pv, ok := state[name]; ok && pv != nil {
					t = t.with(name, pv)
				}
			}
			return t
		}, c)
	}
	target := body
	if transport == TransportGraphQL {
		vars, present := body.get("variables")
		if !present || vars == nil {
			vars = object{}
		}
		if target, ok = asObject(vars); !ok {
			return nil, c.fail("", "graphql variables must be an object, got %s", kindOf(vars))
		}
	}
	placed := false
	for _, name := range ParamNames(c.m.Pagination) {
		if pv, ok := state[name]; ok && pv != nil {
			target = target.with(name, pv)
			placed = true
		}
	}
	// No body and nothing to page with yet (a cursor before the first
	// response): send no body rather than an empty object.
	if empty && !placed && transport != TransportGraphQL {
		return nil, nil
	}
	if transport == TransportGraphQL {
		return body.with("variables", target), nil
	}
	return target, nil
}

// headers renders the content type and the mapping's headers, sorted by
// name. A mapping header named Content-Type replaces the default.
func (c *compiler) headers(contentType string) ([][2]string, error) {
	v, err := c.ev.eval(c.m.Headers, 0)
	if err != nil {
		return nil, fmt.Errorf("headers: %w", err)
	}
	ps, err := flatten(v, "headers")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
	var out [][2]string
	hasCT := false
	for _, p := range ps {
		if !validHeaderName(p.key) {
			return nil, c.fail("", "header name %q is not a valid token", p.key)
		}
		if strings.ContainsAny(p.val, "\r\n\x00") {
			return nil, c.fail("", "header %q value contains a line break", p.key)
		}
		if strings.EqualFold(p.key, "Content-Type") {
			hasCT = true
		}
	}
	if contentType != "" && !hasCT {
		out = append(out, [2]string{"Content-Type", contentType})
	}
	for _, p := range ps {
		out = append(out, [2]string{p.key, p.val})
	}
	return out, nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func (c *compiler) auth() (*abi.AuthDirective, error) {
	a := c.cat.Auth
	need := func(field, val string) error {
		if val == "" {
			return c.fail("", "auth scheme %s needs %s", a.Scheme, field)
		}
		return nil
	}
	switch a.Scheme {
	case "", "none":
		return nil, nil
	case "bearer_token", "oauth_bearer":
		if a.Env == "" && a.OptionalEnv {
			return nil, nil // a public call; the token is optional
		}
		if err := need("env", a.Env); err != nil {
			return nil, err
		}
		// An OAuth bearer is sent like any bearer token; the tenant's
		// secret holds the access token.
		return &abi.AuthDirective{Scheme: "bearer_token", Secret: a.Env}, nil
	case "api_key_header":
		if err := need("header", a.Header); err != nil {
			return nil, err
		}
		if err := need("env", a.Env); err != nil {
			return nil, err
		}
		return &abi.AuthDirective{Scheme: a.Scheme, Header: a.Header, Secret: a.Env}, nil
	case "api_key_query":
		if err := need("param", a.Param); err != nil {
			return nil, err
		}
		if err := need("env", a.Env); err != nil {
			return nil, err
		}
		return &abi.AuthDirective{Scheme: a.Scheme, Param: a.Param, Secret: a.Env}, nil
	case "oauth2_client_credentials":
		for _, f := range [][2]string{{"token_url", a.TokenURL}, {"client_id_env", a.ClientIDEnv}, {"client_secret_env", a.ClientSecretEnv}} {
			if err := need(f[0], f[1]); err != nil {
				return nil, err
			}
		}
		return &abi.AuthDirective{Scheme: a.Scheme, TokenURL: a.TokenURL, ClientID: a.ClientIDEnv, Secret: a.ClientSecretEnv, Scopes: a.Scopes}, nil
	}
	return nil, c.fail("", "unknown auth scheme %q", a.Scheme)
}

// withIDVar gives a mapping's id variable (a single path variable not named
// id) the call's id when it has no value of its own, on a copy of req.
func withIDVar(m *catalog.Mapping, req *abi.CompileRequest) *abi.CompileRequest {
	if m.IDVar == "" || req.Vars == nil {
		return req
	}
	id, ok := req.Vars["id"]
	if _, has := req.Vars[m.IDVar]; has || !ok {
		return req
	}
	cp := *req
	cp.Vars = make(map[string]any, len(req.Vars)+1)
	for k, v := range req.Vars {
		cp.Vars[k] = v
	}
	cp.Vars[m.IDVar] = id
	return &cp
}

// placeAt applies put to the object at path inside o, creating missing
// objects on the way, and returns o with the result in place.
func placeAt(o object, path []string, put func(object) object, c *compiler) (object, error) {
	if len(path) == 0 {
		return put(o), nil
	}
	child, present := o.get(path[0])
	if !present || child == nil {
		child = object{}
	}
	co, ok := asObject(child)
	if !ok {
		return nil, c.fail("", "pagination body_merge_path: %q holds %s, not an object", path[0], kindOf(child))
	}
	nc, err := placeAt(co, path[1:], put, c)
	if err != nil {
		return nil, err
	}
	return o.with(path[0], nc), nil
}
