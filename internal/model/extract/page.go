package extract

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
)

// Pagination locations (see catalog.Pagination.Location).
const (
	LocLinkHeader      = "link_header"
	LocResponseNextURL = "response_next_url"
)

// NextURLKey is the page-state key carrying an absolute next-page URL for
// link_header and response_next_url pagination (the request compiler
// reads it under the same name).
const NextURLKey = "next_url"

// PastMaxKey is the page-state key of a list whose page counter reached
// its max on a page that may not be the last (it was not short or empty,
// and no end signal said so). Ending the list there would answer a prefix
// as the whole list, so the state says what stopped it (the parameter
// and its max, "page 2") and the executor refuses to read on from it
// (executor.MaxPagesError) rather than answer as if the list ended.
const PastMaxKey = "#past_max"

// pastMaxFullKey marks, beside PastMaxKey, that the page at max was full
// (as long as the page size the request asked for). Without it the page
// was only not empty: an unsized counter, or one whose backend says itself
// where the list ends, has no page size to compare with.
const pastMaxFullKey = "#past_max_full"

// PastMax reports the counter and max that stop a list at state, if any,
// and whether the page at max was full (else it only may not be the last).
func PastMax(state map[string]any) (at string, full, ok bool) {
	at, ok = state[PastMaxKey].(string)
	full, _ = state[pastMaxFullKey].(bool)
	return at, full, ok
}

// sizeParamNames are the paging parameters Plasm reads as a page size when
// they are fixed; the suffixes _size and _limit count too.
var sizeParamNames = []string{"size", "limit", "per_page", "page_size", "pagesize", "maxresults", "max_results", "first", "$top", "top"}

// next computes the state of the page after this one, or nil when the
// backend indicated there are no more rows. items is the number of items
// this page carried; get reads a path of object keys from the response
// document, as walk does.
//
// The rules are Plasm's: a counter starts at `counter` and grows by `step`,
// default 1 (page=1, 2, 3 …; an offset counter declares step: <page size>);
// a from_response cursor that is absent, empty or unchanged ends the list;
// link_header and response_next_url end when no next URL is given;
// stop_when ends it when its field says so. Beyond Plasm, a page also ends
// the list when the backend showed there is nothing after it, so no handle
// is offered that would only fetch an empty page: an empty page; a Link
// header that names other pages but no rel="next"; and, for counters with
// no stop_when (nothing else tells), a page shorter than the page size the
// request asked for (a fixed size-like parameter such as limit or
// per_page), as in Plasm. Without such a parameter a short page says
// nothing: a backend that filters rows per page (permissions, deleted
// items) returns short pages in the middle of a list, so only an empty
// page (or the backend's own signal) ends it. It stays whole: one case
// per pagination style, each of which must say where its list ends, and
// side by side they show that every style answers that question.
func (a *applier) next(get func(path []string) (any, bool), items int) (map[string]any, *abi.Error) {
	p := a.s.Paging
	cur := pageState(p, a.req.Page)

	if sw := p.StopWhen; sw != nil && sw.Field != "" {
		v, ok := a.lookup(get, sw.Field)
		if sw.Absent && (!ok || v == nil) {
			return nil, nil
		}
		// A missing field compares as null, so eq: null also stops on it.
		if (sw.HasEq || sw.Eq != nil) && equal(v, sw.Eq, 0) {
			return nil, nil
		}
	}
	if items == 0 {
		return nil, nil
	}

	next := make(map[string]any, len(p.Params)+2)
	for _, pp := range p.Params {
		if pp.Fixed != nil {
			next[pp.Name] = pp.Fixed
		}
	}

	switch p.Location {
	case LocLinkHeader:
		u := nextLink(header(a.req.Headers, "Link"))
		if u == "" {
			return nil, nil
		}
		u = a.resolve(u)
		if a.loops(u) {
			return nil, nil
		}
		next[NextURLKey] = u
		return next, nil
	case LocResponseNextURL:
		for _, field := range nextURLFields(p) {
			v, _ := a.lookup(get, field)
			s, _ := v.(string)
			if s == "" {
				return nil, nil
			}
			s = a.resolve(s)
			if a.loops(s) {
				return nil, nil
			}
			next[NextURLKey] = s
			return next, nil
		}
		return nil, a.fail("declare the next URL field as a from_response parameter", "pagination location response_next_url has no from_response parameter")
	}

	if linkSaysLast(header(a.req.Headers, "Link")) || (!hasEndSignal(p) && shortPage(p, items)) {
		return nil, nil
	}
	advances := false
	for _, pp := range p.Params {
		switch {
		case pp.Fixed != nil:
		case pp.Counter != nil:
			at, ok := toInt64(cur[pp.Name])
			if !ok {
				return nil, a.fail("", "page state %q is not an integer", pp.Name)
			}
			step := pp.Step
			if step == 0 {
				step = 1
			}
			n := at + step
			if pp.Max > 0 && n > pp.Max {
				// Short and empty pages ended the list above; this one
				// may have more after it, which max forbids reading.
				past := map[string]any{PastMaxKey: fmt.Sprintf("%s %d", pp.Name, pp.Max)}
				if !hasEndSignal(p) && hasSizeParam(p) {
					past[pastMaxFullKey] = true
				}
				return past, nil
			}
			next[pp.Name] = n
			advances = true
		case pp.FromResponse != "":
			v, _ := a.lookup(get, pp.FromResponse)
			if v == nil || v == "" {
				return nil, nil
			}
			v = plain(v)
			// A cursor that does not move would fetch this page forever.
			if equal(v, cur[pp.Name], 0) {
				return nil, nil
			}
			next[pp.Name] = v
			advances = true
		}
	}
	if !advances {
		return nil, nil
	}
	return next, nil
}

// pageState is the paging state the request used: the given state with
// fixed parameters re-applied and counters started (the compiler's rule).
func pageState(p *Paging, page map[string]any) map[string]any {
	state := make(map[string]any, len(p.Params)+len(page))
	for k, v := range page {
		state[k] = v
	}
	for _, pp := range p.Params {
		switch {
		case pp.Fixed != nil:
			state[pp.Name] = pp.Fixed
		case pp.Counter != nil:
			if v, ok := state[pp.Name]; !ok || v == nil {
				state[pp.Name] = *pp.Counter
			}
		}
	}
	return state
}

// hasEndSignal reports whether the backend says itself when a list ends:
// a stop_when field or a cursor that runs out. The short-page rule is then
// not applied, since a backend that caps the page size below what was
// asked for would otherwise end every list after its first page.
func hasEndSignal(p *Paging) bool {
	if p.StopWhen != nil && p.StopWhen.Field != "" {
		return true
	}
	for _, pp := range p.Params {
		if pp.FromResponse != "" {
			return true
		}
	}
	return false
}

// shortPage reports whether a page of items rows is shorter than the
// fixed page-size parameter the request sent. A page shorter than an
// earlier one is not enough: a backend that drops rows the caller may not
// see after choosing a page returns short pages mid-list.
func shortPage(p *Paging, items int) bool {
	for _, pp := range p.Params {
		if pp.Fixed == nil {
			continue
		}
		if !isSizeParam(pp.Name) {
			continue
		}
		if size, ok := toInt64(pp.Fixed); ok && size > 0 && int64(items) < size {
			return true
		}
	}
	return false
}

// linkSaysLast reports whether an RFC 8288 Link header describes the list
// (links with rel first, prev, previous or last) without a next one: the
// backend's own word that this is the last page, even when the catalog
// pages by counter. Only rel values count: the text "last" in a target
// URL (?sort=last_modified) or in another parameter says nothing.
func linkSaysLast(h string) bool {
	links := parseLinks(h)
	for _, l := range links {
		if slices.Contains(l.rels, "next") {
			return false
		}
	}
	for _, l := range links {
		for _, rel := range l.rels {
			switch rel {
			case "first", "prev", "previous", "last":
				return true
			}
		}
	}
	return false
}

// lookup reads a paging field (a from_response cursor, a next-URL field,
// stop_when's field) under the response prefix: the key as written, else,
// when the name has dots and no such key exists, the dotted path (Slack's
// response_metadata.next_cursor). Read as one key only, as Plasm reads it,
// such a cursor is always absent and every list ends after its first page;
// a key that has dots itself (@odata.nextLink) is still read as written.
func (a *applier) lookup(get func(path []string) (any, bool), field string) (any, bool) {
	if v, ok := get(a.prefixed(field)); ok || !strings.Contains(field, ".") {
		return v, ok
	}
	parts := strings.Split(field, ".")
	if slices.Contains(parts, "") {
		return nil, false
	}
	return get(append(slices.Clone(a.s.Paging.ResponsePrefix), parts...))
}

func (a *applier) prefixed(field string) []string {
	prefix := a.s.Paging.ResponsePrefix
	path := make([]string, 0, len(prefix)+1)
	path = append(path, prefix...)
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
func (a *applier) resolve(ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	if !r.IsAbs() {
		base := a.base()
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
func (a *applier) base() *url.URL {
	for _, raw := range []string{a.req.RequestURL, a.s.Backend} {
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
func (a *applier) loops(next string) bool {
	if a.req.RequestURL == "" {
		return false
	}
	cur, err := url.Parse(a.req.RequestURL)
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
// Link header value, or "".
func nextLink(h string) string {
	for _, l := range parseLinks(h) {
		if slices.Contains(l.rels, "next") {
			return l.target
		}
	}
	return ""
}

// link is one entry of an RFC 8288 Link header: its target and its
// relation types, lower-cased.
type link struct {
	target string
	rels   []string
}

// parseLinks reads an RFC 8288 Link header value. Commas and semicolons
// inside quoted parameter values and inside <…> targets do not split; a
// rel value holds space-separated relation types, quoted or not, compared
// case-insensitively, and only a link's first rel parameter counts
// (§3.3). An entry that does not start with <…> is skipped; an
// unterminated target ends the parse.
func parseLinks(h string) []link {
	var out []link
	for {
		h = strings.TrimLeft(h, " \t,")
		if h == "" {
			return out
		}
		if h[0] != '<' {
			// Malformed entry: skip to the next one.
			_, h = scanParams(h)
			continue
		}
		end := strings.IndexByte(h, '>')
		if end < 0 {
			return out
		}
		l := link{target: strings.TrimSpace(h[1:end])}
		params, rest := scanParams(h[end+1:])
		for _, prm := range params {
			name, val, _ := strings.Cut(prm, "=")
			if !strings.EqualFold(strings.TrimSpace(name), "rel") {
				continue
			}
			val = strings.TrimSpace(val)
			if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
				val = unquote(val[1 : len(val)-1])
			}
			l.rels = strings.Fields(strings.ToLower(val))
			break
		}
		out = append(out, l)
		h = rest
	}
}

// unquote undoes a quoted-string's backslash escapes (RFC 9110 §5.6.4).
func unquote(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
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

// nextURLFields lists where a next-page URL may be: the declared
// response_next_url_field, then from_response parameters.
func nextURLFields(p *Paging) []string {
	fields := make([]string, 0, 1)
	if p.NextURLField != "" {
		fields = append(fields, p.NextURLField)
	}
	for _, pp := range p.Params {
		if pp.FromResponse != "" {
			fields = append(fields, pp.FromResponse)
		}
	}
	return fields
}
