// Package decode owns response decoding: it turns a backend's response
// (status, headers, body) for one capability into an abi.Table of rows in
// the entity's field order, decodes from_parent_get relation rows embedded
// in a parent, and computes the next page's state.
//
// The package is pure (no I/O, no goroutines, standard library only) so it
// runs inside the wasip1 guest and natively. Bodies are hostile input:
// size and nesting are capped before decoding and every failure is an
// *abi.Error with Code abi.CodeDecode, never a panic.
//
// Pagination rules worth knowing when writing a catalog:
//   - Relative next-page references (a Link header target, a next-URL
//     field) resolve against DecodeRequest.RequestURL, the URL that was
//     requested, as RFC 8288 and RFC 3986 require; http_backend is only the
//     fallback when the host leaves RequestURL empty. The resolved URL must
//     still be on the catalog's origin, which guest/cml checks when it
//     compiles the continuation.
//   - A counter without step advances by the number of items the page
//     carried. That suits offset counters and is wrong for page-number
//     counters, which must set step: 1.
package decode

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// snippetBytes is how much of an error body is quoted back.
const snippetBytes = 200

// Decode decodes one response body.
func Decode(cat *catalog.Catalog, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, *abi.Error) {
	if cat == nil || req == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "decode: missing catalog or request"}
	}
	cp := cat.Capabilities[req.Capability]
	if cp == nil {
		return nil, &abi.Error{Code: abi.CodeDecode,
			Message: fmt.Sprintf("catalog %q has no capability %q", cat.EntryID, req.Capability)}
	}
	d := &decoder{cat: cat, cp: cp, m: cat.Mappings[req.Capability], req: req}
	if d.m == nil {
		d.m = &catalog.Mapping{}
	}
	out, err := d.decode(body)
	if err != nil {
		return nil, err
	}
	return out, nil
}

type decoder struct {
	cat *catalog.Catalog
	cp  *catalog.Capability
	m   *catalog.Mapping
	req *abi.DecodeRequest
}

func (d *decoder) fail(hint, format string, args ...any) *abi.Error {
	return &abi.Error{Code: abi.CodeDecode,
		Message: fmt.Sprintf("decode %s: ", d.cp.Name) + fmt.Sprintf(format, args...), Hint: hint}
}

func (d *decoder) decode(body []byte) (*abi.DecodeResponse, *abi.Error) {
	if d.m.Transport == cml.TransportWasm {
		return nil, d.fail("the host routes transport wasm to the catalog's module", "transport wasm is decoded by the catalog's vendor module, not the standard decoder")
	}
	if st := d.req.Status; st < 200 || st > 299 {
		return nil, d.statusError(body)
	}

	// Pick the entity whose fields become columns: the capability's, or the
	// relation's target when decoding embedded relation rows.
	ent := d.cat.Entities[d.cp.Entity]
	if ent == nil {
		return nil, d.fail("", "capability entity %q is not in the catalog", d.cp.Entity)
	}
	var rel *catalog.Relation
	if d.req.Relation != "" {
		rel = ent.Relations[d.req.Relation]
		if rel == nil {
			return nil, d.fail("", "entity %s has no relation %q", ent.Name, d.req.Relation)
		}
		if rel.Materialize.Kind != catalog.FromParentGet {
			return nil, d.fail("", "relation %s.%s is %s, not embedded in the parent (%s)", ent.Name, rel.Name, rel.Materialize.Kind, catalog.FromParentGet)
		}
		if ent = d.cat.Entities[rel.Target]; ent == nil {
			return nil, d.fail("", "relation %q targets unknown entity %q", d.req.Relation, rel.Target)
		}
	}
	cols := columns(ent)
	out := &abi.DecodeResponse{Table: abi.Table{Columns: cols, Rows: [][]any{}}}

	// Mutations and side effects often answer with nothing at all.
	if d.req.Status == 204 || len(bytes.TrimSpace(body)) == 0 {
		if d.req.Status == 204 || !d.cp.IsRead() {
			return out, nil
		}
		return nil, d.fail("", "backend answered %d with an empty body", d.req.Status)
	}
	if d.cp.Kind == catalog.KindAction && d.cp.Output != nil && len(d.cp.Provides) == 0 {
		return out, nil
	}

	if d.req.Tape && !needsTree(ent, d.m) {
		// The host tokenised a valid JSON body (guest/tape); reading it
		// through a view builds only the values the rows need.
		return d.decodeTape(out, ent, cols, rel, body)
	}
	doc, err := d.tree(body)
	if err != nil {
		return nil, d.fail("", "%v", err)
	}
	if d.m.Transport == cml.TransportGraphQL {
		if msg, ok := graphQLError(doc); ok {
			return nil, d.fail("", "graphql error: %s", msg)
		}
	}
	doc = preprocess(doc, d.m.Response, d.req.Vars)
	items, err := selectItems(doc, d.m.Response)
	if wrapsScalar(doc, d.m.Response) {
		items, err = []any{doc}, nil // Plasm's wrap_root_scalar
	}
	if err != nil {
		return nil, d.fail("check the mapping's response shape", "%v", err)
	}
	pageItems := len(items)
	if rel != nil {
		if items, err = materialize(items, rel.Materialize.Path); err != nil {
			return nil, d.fail("check the relation's materialize path", "relation %s: %v", rel.Name, err)
		}
	}
	for i, it := range items {
		if it == nil {
			continue
		}
		obj, ok := it.(map[string]any)
		if !ok {
			obj, ok = scalarRow(ent, it)
		}
		if !ok {
			return nil, d.fail("check the mapping's response shape", "row %d is %s, not an object", i, kindOf(it))
		}
		out.Table.Rows = append(out.Table.Rows, d.row(ent, cols, obj))
	}
	if rel == nil && d.m.Pagination != nil {
		next, err := d.next(func(path []string) (any, bool) { return walk(doc, path) }, pageItems)
		if err != nil {
			return nil, err
		}
		out.Next = next
	}
	return out, nil
}

// columns are the entity's fields in declaration order; an entity built
// without FieldOrder falls back to its fields sorted by name.
func columns(ent *catalog.Entity) []string {
	if len(ent.FieldOrder) > 0 {
		return append([]string(nil), ent.FieldOrder...)
	}
	cols := make([]string, 0, len(ent.Fields))
	for n := range ent.Fields {
		cols = append(cols, n)
	}
	sort.Strings(cols)
	return cols
}

func (d *decoder) row(ent *catalog.Entity, cols []string, obj map[string]any) []any {
	row := make([]any, len(cols))
	for i, name := range cols {
		f := ent.Fields[name]
		path := []string{name}
		if f != nil {
			path = f.WirePath()
		}
		v, ok := walk(obj, path)
		if f != nil && f.Derive != nil {
			if f.WholeRow {
				v, ok = obj, true
			}
			v = derive(f.Derive, v)
		}
		if !ok || v == nil {
			continue
		}
		typ := ""
		if f != nil {
			if val := d.cat.Values[f.ValueRef]; val != nil {
				typ = val.Type
			}
		}
		switch typ {
		case "integer":
			row[i] = asInteger(v)
		case "number":
			row[i] = asFloat(v)
		default:
			row[i] = plain(v)
		}
	}
	return row
}

// statusError describes a non-2xx answer with a sanitised excerpt of the
// body, which usually carries the backend's own explanation.
func (d *decoder) statusError(body []byte) *abi.Error {
	st := d.req.Status
	msg := "backend answered " + strconv.Itoa(st)
	if t := statusText(st); t != "" {
		msg += " " + t
	}
	if s := snippet(body); s != "" {
		msg += ": " + s
	}
	hint := ""
	switch st {
	case 401, 403:
		if env := d.cat.Auth.Env; env != "" {
			hint = fmt.Sprintf("the backend refused the credentials; check that secret %s is set and valid", env)
		} else {
			hint = "the backend refused the request; it may need credentials"
		}
	case 404:
		hint = "the id or path may not exist"
	case 429:
		hint = "the backend is rate limiting; retry later"
	}
	return &abi.Error{Code: abi.CodeDecode, Message: fmt.Sprintf("decode %s: %s", d.cp.Name, msg), Hint: hint}
}

// snippet returns up to snippetBytes of body as printable single-line text.
func snippet(body []byte) string {
	cut := len(body) > snippetBytes
	if cut {
		body = body[:snippetBytes]
	}
	var b strings.Builder
	space := false
	for len(body) > 0 {
		r, n := utf8.DecodeRune(body)
		body = body[n:]
		switch {
		case r == utf8.RuneError && n == 1:
			// A rune split by the cut, or binary: drop it.
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r):
			r = '?'
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	s := b.String()
	if cut && s != "" {
		s += "…"
	}
	return s
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	case 204:
		return "No Content"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 304:
		return "Not Modified"
	case 307:
		return "Temporary Redirect"
	case 308:
		return "Permanent Redirect"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 402:
		return "Payment Required"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 406:
		return "Not Acceptable"
	case 408:
		return "Request Timeout"
	case 409:
		return "Conflict"
	case 410:
		return "Gone"
	case 412:
		return "Precondition Failed"
	case 413:
		return "Content Too Large"
	case 415:
		return "Unsupported Media Type"
	case 422:
		return "Unprocessable Entity"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	}
	return ""
}

// graphQLError returns the first message of a non-empty top-level errors
// array. GraphQL reports failures with status 200, so this is the only
// signal.
func graphQLError(doc any) (string, bool) {
	top, ok := doc.(map[string]any)
	if !ok {
		return "", false
	}
	errs, ok := top["errors"].([]any)
	if !ok || len(errs) == 0 {
		return "", false
	}
	msg := "unspecified error"
	if first, ok := errs[0].(map[string]any); ok {
		if s, ok := first["message"].(string); ok && s != "" {
			msg = snippet([]byte(s))
		}
	}
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return msg, true
}
