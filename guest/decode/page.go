package decode

import (
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/cml"
)

// next computes the state of the page after this one, or nil when the list
// is exhausted. items is the number of items this page carried.
func (d *decoder) next(doc any, items int) (map[string]any, *abi.Error) {
	p := d.m.Pagination
	cur := cml.PageState(p, d.req.Page)
	names := cml.ParamNames(p)

	if sw := p.StopWhen; sw != nil && sw.Field != "" {
		v, ok := walk(doc, d.prefixed(sw.Field))
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
		next[cml.NextURLKey] = d.resolve(u)
		return next, nil
	case cml.LocResponseNextURL:
		for _, name := range names {
			pp := p.Params[name]
			if pp.FromResponse == "" {
				continue
			}
			v, _ := walk(doc, d.prefixed(pp.FromResponse))
			s, _ := v.(string)
			if s == "" {
				return nil, nil
			}
			next[cml.NextURLKey] = d.resolve(s)
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
			v, _ := walk(doc, d.prefixed(pp.FromResponse))
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

// resolve makes a next-page reference absolute against http_backend. The
// compiler later refuses any URL off the catalog's origin, so resolution
// here only has to be faithful, not defensive.
func (d *decoder) resolve(ref string) string {
	r, err := url.Parse(ref)
	if err != nil || r.IsAbs() {
		return ref
	}
	base, err := url.Parse(d.cat.HTTPBackend)
	if err != nil {
		return ref
	}
	return base.ResolveReference(r).String()
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
