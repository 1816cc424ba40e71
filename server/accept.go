package server

import (
	"mime"
	"strings"
)

// Accept negotiation (RFC 9110 §12.5.1). Each offered type takes the
// quality of the most specific media range matching it (type/subtype with
// parameters, then type/subtype, then type/*, then */*; the first listed
// among equally specific ones), so "text/markdown;q=0, */*" is anything
// but Markdown and "application/*, text/markdown;q=0.1" is JSON. The
// highest quality wins; among equals, the type whose range is listed
// first, then the server's order. q=0 means "not this one". A range that
// does not parse (or has a bad q) is skipped, as if absent. Parameters
// besides q count for specificity but are not compared: the formats
// offered have none, and clients send "application/json; charset=utf-8".
//
// Hand-written over mime.ParseMediaType: the Go libraries for this
// (goautoneg, already an indirect dependency) rank by the order of
// ranges, not by specificity per offered type, and goautoneg is
// unmaintained.

// mediaRange is one parsed element of an Accept header.
type mediaRange struct {
	typ, sub string
	params   int // media-type parameters besides q (specificity)
	q        int // quality in thousandths
	pos      int
}

// specificity ranks a range: */* < type/* < type/sub < type/sub;params.
func (r mediaRange) specificity() int {
	switch {
	case r.typ == "*":
		return 0
	case r.sub == "*":
		return 1
	case r.params == 0:
		return 2
	}
	return 3
}

func (r mediaRange) matches(typ, sub string) bool {
	return r.typ == "*" || r.typ == typ && (r.sub == "*" || r.sub == sub)
}

// parseAccept parses an Accept header, skipping elements it cannot read.
func parseAccept(accept string) []mediaRange {
	var out []mediaRange
	for i, part := range splitOutsideQuotes(accept, ',') {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok || typ == "*" && sub != "*" {
			continue // "*/json" is no media range
		}
		r := mediaRange{typ: typ, sub: sub, q: 1000, pos: i, params: len(params)}
		if qs, ok := params["q"]; ok {
			r.params--
			if r.q, ok = parseQValue(qs); !ok {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// parseQValue reads a qvalue: "0" ["." 0*3DIGIT] / "1" ["." 0*3("0")],
// in thousandths. strconv.ParseFloat would also take "1e-1", "NaN" or
// "+.5", which are not qvalues.
func parseQValue(s string) (int, bool) {
	if s == "" || len(s) > 5 || s[0] != '0' && s[0] != '1' {
		return 0, false
	}
	q := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return q, true
	}
	if s[1] != '.' {
		return 0, false
	}
	scale := 100
	for _, c := range s[2:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	return q, q <= 1000
}

// splitOutsideQuotes splits s at sep where it is not inside a quoted
// string (a parameter value may hold a comma).
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// pickMediaType returns the offered type (lower-case type/subtype) the
// Accept header prefers, or "" when it accepts none.
func pickMediaType(accept string, offers []string) string {
	ranges := parseAccept(accept)
	best, bestQ, bestPos := "", 0, 0
	for _, offer := range offers {
		typ, sub, _ := strings.Cut(offer, "/")
		var hit *mediaRange
		for i := range ranges {
			r := &ranges[i]
			if r.matches(typ, sub) && (hit == nil || r.specificity() > hit.specificity()) {
				hit = r
			}
		}
		if hit == nil || hit.q == 0 {
			continue
		}
		if best == "" || hit.q > bestQ || hit.q == bestQ && hit.pos < bestPos {
			best, bestQ, bestPos = offer, hit.q, hit.pos
		}
	}
	return best
}
