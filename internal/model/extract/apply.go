package extract

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
)

// snippetBytes is how much of an error body is quoted back.
const snippetBytes = 200

// checkEvery is how many columns Apply evaluates between calls to
// Options.Interrupt: often enough to stop within a small fraction of a
// deadline, rarely enough to cost nothing measurable.
const checkEvery = 1024

// Options adjust Apply.
type Options struct {
	// Parse builds the body's document; nil parses JSON (ParseJSON). The
	// guest passes a reader of the host's tape here.
	Parse func(body []byte) (any, error)
	// Interrupt, when set, is called between units of work; a non-nil
	// error stops the decode and is returned as a decode error.
	Interrupt func() error
}

// Apply decodes one response body with s. s must have passed Validate.
func Apply(s *Spec, req *abi.DecodeRequest, body []byte, opt Options) (*abi.DecodeResponse, *abi.Error) {
	if s == nil || req == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "decode: missing spec or request"}
	}
	a := &applier{s: s, req: req, opt: opt}
	return a.decode(body)
}

type applier struct {
	s     *Spec
	req   *abi.DecodeRequest
	opt   Options
	work  int
	abort *abi.Error
}

func (a *applier) fail(hint, format string, args ...any) *abi.Error {
	return &abi.Error{Code: abi.CodeDecode,
		Message: fmt.Sprintf("decode %s: ", a.s.Capability) + fmt.Sprintf(format, args...), Hint: hint}
}

// tick counts one unit of work and reports whether the decode must stop.
func (a *applier) tick() bool {
	if a.abort != nil {
		return true
	}
	if a.work++; a.work%checkEvery != 0 || a.opt.Interrupt == nil {
		return false
	}
	if err := a.opt.Interrupt(); err != nil {
		a.abort = a.fail("the response is too large to decode within the call's deadline", "stopped: %v", err)
		return true
	}
	return false
}

func (a *applier) decode(body []byte) (*abi.DecodeResponse, *abi.Error) {
	if a.s.Invalid != "" && a.req.Status >= 200 && a.req.Status <= 299 {
		return nil, a.fail("", "%s", a.s.Invalid)
	}
	cols := make([]string, len(a.s.Columns))
	for i, c := range a.s.Columns {
		cols[i] = c.Name
	}
	out := &abi.DecodeResponse{Table: abi.Table{Columns: cols, Rows: [][]any{}}}
	if st := a.req.Status; st < 200 || st > 299 {
		if a.s.Invalid == "" && endsOn404(a.s, st, a.req.Page) {
			return out, nil // the page past the end of a begun list
		}
		return nil, a.statusError(body)
	}

	// Mutations and side effects often answer with nothing at all.
	if a.req.Status == 204 || len(bytes.TrimSpace(body)) == 0 {
		if a.req.Status == 204 || !a.s.Read {
			return out, nil
		}
		return nil, a.fail("", "backend answered %d with an empty body", a.req.Status)
	}
	if a.s.NoRows {
		return out, nil
	}
	parse := a.opt.Parse
	if parse == nil {
		parse = ParseJSON
	}
	doc, err := parse(body)
	if err != nil {
		return nil, a.fail("", "%v", err)
	}
	if a.s.GraphQL {
		if msg, ok := graphQLError(doc); ok {
			return nil, a.fail("", "graphql error: %s", msg)
		}
	}
	r := a.s.Response
	doc = preprocess(doc, r, a.req.Vars)
	items, err := selectItems(doc, r, a.s.Read, laterPage(a.s.Paging, a.req.Page))
	if wrapsScalar(doc, r) {
		items, err = []any{doc}, nil // Plasm's wrap_root_scalar
	}
	if err != nil {
		hint := "check the mapping's response shape"
		if _, ok := err.(noListError); ok {
			hint = "the backend may have answered an error with status 200 (its keys show what it said); if its rows are under another key, fix the mapping's response shape"
		}
		return nil, a.fail(hint, "%v", err)
	}
	pageItems := len(items)
	if rel := a.s.Relation; rel != nil {
		if items, err = materialize(items, rel); err != nil {
			hint := "check the relation's materialize path"
			if errors.Is(err, errNotOne) {
				hint = hintNotOne
			}
			return nil, a.fail(hint, "relation %s: %v", rel.Name, err)
		}
	}
	out.Table.Rows = make([][]any, 0, len(items))
	for i, it := range items {
		if it == nil {
			continue
		}
		obj, ok := it.(map[string]any)
		if !ok {
			obj, ok = scalarRow(a.s.ScalarID, it)
		}
		if !ok {
			return nil, a.fail("check the mapping's response shape", "row %d is %s, not an object", i, kindOf(it))
		}
		row := a.row(obj)
		if a.abort != nil {
			return nil, a.abort
		}
		if f := a.s.IDFallback; f != nil {
			f.fillID(a.s.Columns, row, obj)
		}
		out.Table.Rows = append(out.Table.Rows, row)
	}
	if a.s.Relation == nil && a.s.Paging != nil {
		next, err := a.next(func(path []string) (any, bool) { return walkIndexed(doc, path) }, pageItems)
		if err != nil {
			return nil, err
		}
		out.Next = next
	}
	return out, nil
}

// row builds one row from an item object.
func (a *applier) row(obj map[string]any) []any {
	row := make([]any, len(a.s.Columns))
	for i := range a.s.Columns {
		if a.tick() {
			return nil
		}
		c := &a.s.Columns[i]
		v, ok := walk(obj, c.Path)
		if c.Derive != nil {
			if c.WholeRow {
				v, ok = obj, true
			}
			v = derive(c.Derive, v)
		}
		if !ok || v == nil {
			continue
		}
		row[i] = coerce(v, c.Type)
	}
	return row
}

// statusError describes a non-2xx answer with a sanitised excerpt of the
// body, which usually carries the backend's own explanation.
func (a *applier) statusError(body []byte) *abi.Error {
	st := a.req.Status
	msg := "backend answered " + strconv.Itoa(st)
	if t := statusText(st); t != "" {
		msg += " " + t
	}
	if s := Snippet(body); s != "" {
		msg += ": " + s
	}
	hint := ""
	switch st {
	case 401, 403:
		if env := a.s.AuthEnv; env != "" {
			hint = fmt.Sprintf("the backend refused the credentials; check that secret %s is set and valid", env)
		} else {
			hint = "the backend refused the request; it may need credentials"
		}
	case 404:
		hint = "the id or path may not exist"
	case 429:
		hint = "the backend is rate limiting; retry later"
	}
	return &abi.Error{Code: abi.CodeDecode, Message: fmt.Sprintf("decode %s: %s", a.s.Capability, msg), Hint: hint}
}

// Snippet returns up to 200 bytes of body as printable single-line text.
func Snippet(body []byte) string {
	cut := len(body) > snippetBytes
	if cut {
		body = body[:snippetBytes]
	}
	var b []byte
	space := false
	for len(body) > 0 {
		r, n := utf8.DecodeRune(body)
		body = body[n:]
		switch {
		case r == utf8.RuneError && n == 1:
			// A rune split by the cut, or binary: drop it.
			continue
		case unicode.IsSpace(r):
			space = len(b) > 0
			continue
		case !unicode.IsPrint(r):
			r = '?'
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = utf8.AppendRune(b, r)
	}
	s := string(b)
	if cut && s != "" {
		s += "…"
	}
	return s
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
			msg = Snippet([]byte(s))
		}
	}
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return msg, true
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
