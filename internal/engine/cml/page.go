package cml

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Pagination locations.
const (
	LocQuery           = "query"
	LocBody            = "body"
	LocLinkHeader      = "link_header"
	LocResponseNextURL = "response_next_url"
)

// NextURLKey is the page-state key carrying an absolute next-page URL for
// link_header and response_next_url pagination.
const NextURLKey = "next_url"

// PastMaxKey marks a page state past a counter's max (extract.PastMaxKey):
// the executor refuses to read on from it, and the compiler does too, since
// that state holds no counter and would otherwise fetch the first page again.
const PastMaxKey = "#past_max"

// Location returns where a mapping's paging parameters go, applying the
// defaults: the GraphQL variables for graphql transport, else the query.
func Location(m *catalog.Mapping) string {
	if m.Pagination != nil && m.Pagination.Location != "" {
		return m.Pagination.Location
	}
	if m.Transport == "graphql" {
		return LocBody
	}
	return LocQuery
}

// ParamNames returns the paging parameters of p in declaration order
// (ParamOrder), followed by any not listed there in sorted order, so that
// every caller walks them identically.
func ParamNames(p *catalog.Pagination) []string {
	if p == nil {
		return nil
	}
	out := make([]string, 0, len(p.Params))
	seen := make(map[string]bool, len(p.Params))
	for _, n := range p.ParamOrder {
		if _, ok := p.Params[n]; ok && !seen[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	rest := make([]string, 0, len(p.Params)-len(out))
	for n := range p.Params {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// PageState returns the paging state a request uses. For the first page
// (page == nil) counters start at their start value and fixed parameters
// take their value; from_response parameters are absent until a response
// supplies them. A continuation keeps the given state, re-applies fixed
// parameters (the state crossed the host and must not be able to change
// them) and restores a counter it lost to its start value. The result is a
// fresh map; page is not modified.
func PageState(p *catalog.Pagination, page map[string]any) map[string]any {
	state := make(map[string]any, len(p.Params)+len(page))
	for k, v := range page {
		state[k] = v
	}
	for _, name := range ParamNames(p) {
		pp := p.Params[name]
		switch {
		case pp.Fixed != nil:
			state[name] = pp.Fixed
		case pp.Counter != nil:
			if v, ok := state[name]; !ok || v == nil {
				state[name] = *pp.Counter
			}
		}
	}
	return state
}

// sameOrigin checks that next (a next-page URL handed back by the backend,
// possibly via the host) stays on the catalog's origin: following it
// elsewhere would send the catalog's credentials to a third party.
func sameOrigin(base *url.URL, next string) (*url.URL, error) {
	u, err := url.Parse(next)
	if err != nil {
		return nil, fmt.Errorf("next page URL is not a valid URL: %w", err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("next page URL %q is not absolute", next)
	}
	if u.User != nil {
		return nil, fmt.Errorf("next page URL leaves the catalog origin: it carries user info")
	}
	if !strings.EqualFold(u.Scheme, base.Scheme) ||
		!strings.EqualFold(u.Hostname(), base.Hostname()) ||
		effectivePort(u) != effectivePort(base) {
		return nil, fmt.Errorf("next page URL leaves the catalog origin (%s://%s)", base.Scheme, base.Host)
	}
	return u, nil
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
