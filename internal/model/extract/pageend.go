package extract

import (
	"slices"
	"strings"
)

// statusNotFound is HTTP 404; net/http is not imported for it, since this
// package is compiled into the engine and net/http would bloat it.
const statusNotFound = 404

// endsOn404 reports whether a 404 answer to this page ends the list rather
// than failing it: the list pages by a counter with nothing else to say
// where it ends (no page-size parameter for the short-page rule, no
// stop_when, no cursor), so only an empty page would end it, and some
// backends answer the page past the end 404 instead (Django REST's
// "Invalid page", the Rick and Morty API). Only on a page after the
// first: such a list asks for page n+1 only after page n carried rows
// (an empty page ends it), so a 404 there is the end of a list already
// begun; a 404 on the first page stays an error (a wrong path, a missing
// parent), never read as an empty list.
func endsOn404(s *Spec, status int, page map[string]any) bool {
	p := s.Paging
	if status != statusNotFound || !s.Read || p == nil || s.Response != nil && s.Response.Single {
		return false
	}
	if p.Location == LocLinkHeader || p.Location == LocResponseNextURL || hasEndSignal(p) || hasSizeParam(p) {
		return false
	}
	begun := false
	for _, pp := range p.Params {
		if pp.Counter == nil {
			continue
		}
		at, ok := toInt64(page[pp.Name])
		if ok && at != *pp.Counter {
			begun = true
		}
	}
	return begun
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
