package extract

import (
	"slices"
	"strings"
)

// statusNotFound is HTTP 404; net/http is not imported for it, since this
// package is compiled into the engine and net/http would bloat it.
const statusNotFound = 404

// endsOn404 reports whether a 404 answer to this page ends the list rather
// than failing it: the list pages by a counter with no stop_when or cursor
// to say where it ends, so only an empty page (or, with a page-size
// parameter, a short one) would end it, and some backends answer the page
// past the end 404 instead (Django REST's "Invalid page", the Rick and
// Morty API). Only on a page after the first: such a list asks for page
// n+1 only after page n carried rows (a full page, when it sends a page
// size: a short one ends the list), so a 404 there is the end of a list
// already begun, one whose rows are a multiple of the page size among
// them; a 404 on the first page stays an error (a wrong path, a missing
// parent), never read as an empty list.
func endsOn404(s *Spec, status int, page map[string]any) bool {
	p := s.Paging
	if status != statusNotFound || !s.Read || p == nil || s.Response != nil && s.Response.Single {
		return false
	}
	if p.Location == LocLinkHeader || p.Location == LocResponseNextURL || hasEndSignal(p) {
		return false
	}
	return counterMoved(p, page)
}

// counterMoved reports whether a page counter in page has left its start:
// the page is not the first of its list.
func counterMoved(p *Paging, page map[string]any) bool {
	for _, pp := range p.Params {
		if pp.Fixed != nil || pp.Counter == nil {
			continue
		}
		if at, ok := toInt64(page[pp.Name]); ok && at != *pp.Counter {
			return true
		}
	}
	return false
}

// laterPage reports whether page, the paging state a request was compiled
// from, is a page after the first of its list: a counter moved from its
// start, a from_response cursor or a next-page URL (NextURLKey). A first
// page's state holds only fixed parameters and counters at their start
// (the request compiler's PageState); the decoder's next puts the rest.
func laterPage(p *Paging, page map[string]any) bool {
	if p == nil || len(page) == 0 {
		return false
	}
	if u, _ := page[NextURLKey].(string); u != "" {
		return true
	}
	if counterMoved(p, page) {
		return true
	}
	for _, pp := range p.Params {
		if pp.Fixed != nil || pp.Counter != nil || pp.FromResponse == "" {
			continue
		}
		if v := page[pp.Name]; v != nil && v != "" {
			return true
		}
	}
	return false
}

// hasSizeParam reports whether the request sends a fixed page size (see
// sizeParamNames), so a short page ends the list.
func hasSizeParam(p *Paging) bool {
	for _, pp := range p.Params {
		if pp.Fixed != nil && isSizeParam(pp.Name) {
			return true
		}
	}
	return false
}

// isSizeParam reports a paging parameter name Plasm reads as a page size.
func isSizeParam(name string) bool {
	low := strings.ToLower(name)
	return slices.Contains(sizeParamNames, low) || strings.HasSuffix(low, "_size") || strings.HasSuffix(low, "_limit")
}
