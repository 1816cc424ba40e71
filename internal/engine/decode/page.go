package decode

import (
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
)

// next computes the state of the page after this one, or nil when the list
// is exhausted. items is the number of items this page carried; get reads
// a path of object keys from the response document, as walk does.
//
// A counter without step advances by items, the number of items the page
// actually carried. That is right for offset/skip counters (the next page
// starts where this one ended, whatever page size the backend chose) and
// wrong for page-number counters, which must declare step: 1 — left at the
// default, page=1 followed by 30 items would ask for page=31. A declared
// step also stops the list on a short page (fewer than step items), which is
// why offset counters with a known page size may set step too.
func (d *decoder) next(get func(path []string) (any, bool), items int) (map[string]any, *abi.Error) {
	p := d.m.Pagination
	cur := cml.PageState(p, d.req.Page)
	names := cml.ParamNames(p)

	if sw := p.StopWhen; sw != nil && sw.Field != "" {
		v, ok := get(d.prefixed(sw.Field))
		if sw.Absent && (!ok || v == nil) {
			return nil, nil
		}
		// A missing field compares as null, so eq: null also stops on it.
		if (sw.HasEq || sw.Eq != nil) && cml.Equal(v, sw.Eq) {
			return nil, nil
		}
	}

	next := make(map[string]any, len(names)+1)
	for _, name := range names {
		if pp := p.Params[name]; pp.Fixed != nil {
			next[name] = pp.Fixed
		}
	}

	switch loc := cml.Location(d.m); loc {
	case cml.LocLinkHeader:
		u := nextLink(header(d.req.Headers, "Link"))
		if u == "" {
			return nil, nil
		}
		u = d.resolve(u)
		if d.loops(u) {
			return nil, nil
		}
		next[cml.NextURLKey] = u
		return next, nil
	case cml.LocResponseNextURL:
		for _, name := range names {
			pp := p.Params[name]
			if pp.FromResponse == "" {
				continue
			}
			v, _ := get(d.prefixed(pp.FromResponse))
			s, _ := v.(string)
			if s == "" {
				return nil, nil
			}
			s = d.resolve(s)
			if d.loops(s) {
				return nil, nil
			}
			next[cml.NextURLKey] = s
			return next, nil
		}
		return nil, d.fail("declare the next URL field as a from_response parameter", "pagination location response_next_url has no from_response parameter")
	}

	advances := false
	for _, name := range names {
		pp := p.Params[name]
		switch {
		case pp.Fixed != nil:
		case pp.Counter != nil:
			at, ok := toInt64(cur[name])
			if !ok {
				return nil, d.fail("", "page state %q is not an integer", name)
			}
			if items == 0 || (pp.Step > 0 && int64(items) < pp.Step) {
				return nil, nil
			}
			step := pp.Step
			if step == 0 {
				step = int64(items)
			}
			n := at + step
			if pp.Max > 0 && n > pp.Max {
				return nil, nil
			}
			next[name] = n
			advances = true
		case pp.FromResponse != "":
			v, _ := get(d.prefixed(pp.FromResponse))
			if v == nil || v == "" {
				return nil, nil
			}
			v = plain(v)
			// A cursor that does not move would fetch this page forever.
			if cml.Equal(v, cur[name]) {
				return nil, nil
			}
			next[name] = v
			advances = true
		}
	}
	if !advances {
		return nil, nil
	}
	return next, nil
}

func (d *decoder) prefixed(field string) []string {
	path := make([]string, 0, len(d.m.Pagination.ResponsePrefix)+1)
	path = append(path, d.m.Pagination.ResponsePrefix...)
	return append(path, field)
}

// resolve makes a next-page reference absolute. RFC 8288 §3.2 and
// RFC 3986 §5 resolve a relative reference against the URI of the request
// the response answers, so "?page=2" keeps the request's path and "items2"
// replaces its last segment; http_backend is only the fallback for hosts
// that do not say which URL they requested. The fragment is dropped: it is
// never sent, and keeping it would make an otherwise equal URL look like a
// new page. The compiler later refuses any URL off the catalog's origin,
// so resolution here only has to be faithful, not defensive.
func (d *decoder) resolve(ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	if !r.IsAbs() {
		base := d.base()
		if base == nil {
			return ref
		}
		r = base.ResolveReference(r)
	}
	r.Fragment, r.RawFragment = "", ""
	return r.String()
}

// base is the URL relative next-page references resolve against: the
// request's URL when the host supplied a usable one, else http_backend.
func (d *decoder) base() *url.URL {
	for _, raw := range []string{d.req.RequestURL, d.cat.HTTPBackend} {
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err == nil && u.IsAbs() && u.Host != "" {
			return u
		}
	}
	return nil
}

// loops reports whether next names the page just fetched; following it
// would fetch that page forever.
func (d *decoder) loops(next string) bool {
	if d.req.RequestURL == "" {
		return false
	}
	cur, err := url.Parse(d.req.RequestURL)
	if err != nil {
		return false
	}
	cur.Fragment, cur.RawFragment = "", ""
	return cur.String() == next
}

func header(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// nextLink returns the target of the first rel="next" link in an RFC 8288
// Link header value, or "". Commas and semicolons inside quoted parameter
// values and inside <…> targets do not split.
func nextLink(h string) string {
	for {
		h = strings.TrimLeft(h, " \t,")
		if h == "" {
			return ""
		}
		if h[0] != '<' {
			// Malformed entry: skip to the next one.
			_, h = scanParams(h)
			continue
		}
		end := strings.IndexByte(h, '>')
		if end < 0 {
			return ""
		}
		target := h[1:end]
		params, rest := scanParams(h[end+1:])
		for _, prm := range params {
			name, val, _ := strings.Cut(prm, "=")
			if !strings.EqualFold(strings.TrimSpace(name), "rel") {
				continue
			}
			val = strings.Trim(strings.TrimSpace(val), `"`)
			for _, rel := range strings.Fields(val) {
				if strings.EqualFold(rel, "next") {
					return strings.TrimSpace(target)
				}
			}
		}
		h = rest
	}
}

// scanParams reads ";"-separated parameters up to the comma that ends a
// link entry, honouring quotes. rest starts after that comma.
func scanParams(s string) (params []string, rest string) {
	inQuote := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case c == '\\' && inQuote:
			i++
		case c == ';' && !inQuote:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				params = append(params, p)
			}
			start = i + 1
		case c == ',' && !inQuote:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				params = append(params, p)
			}
			return params, s[i+1:]
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		params = append(params, p)
	}
	return params, ""
}

// toInt64 reads a counter back from page state, which has crossed JSON and
// so may be a float64, an int64 or a json.Number.
func toInt64(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case int:
		return int64(t), true
	case int32:
		return int64(t), true
	case float64:
		if t == math.Trunc(t) && t >= math.MinInt64 && t < math.MaxInt64 {
			return int64(t), true
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i, true
		}
		if f, err := strconv.ParseFloat(string(t), 64); err == nil {
			return toInt64(f)
		}
	case string:
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}
