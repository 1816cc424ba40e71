// Package request holds request templates: the part of a capability's
// wire request that does not depend on the call, compiled once per
// capability by the engine in the guest, with holes the host fills from a
// call's variables natively.
//
// A template is data, not catalog logic: the engine decides (inside the
// sandbox) which capabilities a template can express exactly and renders
// every constant part; the host only substitutes scalar values into path
// segments and query parameters with fixed escaping rules. Anything the
// filler cannot reproduce byte for byte (a non-scalar or unusual value, an
// absent path variable, an oversized value) makes Fill decline, and the
// caller then compiles the call in the guest as before, which also owns
// every error message. Fill never produces a request the guest's compiler
// would not: the differential test in internal/engine/cml compares the two
// over every capability of the demo and plasmforms catalogs.
package request

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/decimal"
)

// MaxFill bounds the bytes of variable values one Fill substitutes; a
// larger call goes to the guest, whose compiler enforces its own output
// budget and reports it.
const MaxFill = 64 << 10

// Template is one capability's request with holes.
type Template struct {
	Method string `json:"method"`
	// Base is the backend URL the path is appended to, without query,
	// fragment or trailing slashes.
	Base string    `json:"base"`
	Path []Segment `json:"path,omitempty"`
	// BaseQuery is the query string the backend URL carried, kept in
	// front of the mapping's parameters.
	BaseQuery string  `json:"base_query,omitempty"`
	Query     []Param `json:"query,omitempty"`
	// Headers are rendered and sorted already (they may not depend on the
	// call).
	Headers [][2]string        `json:"headers,omitempty"`
	Auth    *abi.AuthDirective `json:"auth,omitempty"`
	// IDVar is the mapping's id variable: it takes the call's id when the
	// call gives it no value of its own.
	IDVar string `json:"id_var,omitempty"`
	// Paginated says the mapping pages with query parameters; Paging lists
	// them in the compiler's order.
	Paginated bool        `json:"paginated,omitempty"`
	Paging    []PageParam `json:"paging,omitempty"`
}

// Paging parameter kinds.
const (
	PageFixed   = "fixed"   // always Value
	PageCounter = "counter" // Value (the start) unless the page state has one
	PageState   = "state"   // only what the page state carries
)

// PageParam is one query paging parameter. Value is the catalog's value
// as it crossed the ABI (a json.Number, string or bool); Text is how the
// compiler writes it in a query.
type PageParam struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Value any    `json:"value,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Answer is the engine's answer to abi.ExportTemplate: the template, or
// why there is none (exactly one is set).
type Answer struct {
	Template *Template `json:"template,omitempty"`
	Reason   string    `json:"reason,omitempty"`
}

// Segment is one path segment: Lit written as is, or the value of Var
// escaped as a single segment and followed by Suffix (already escaped).
type Segment struct {
	Lit    string `json:"lit,omitempty"`
	Var    string `json:"var,omitempty"`
	Suffix string `json:"suffix,omitempty"`
}

// Param is one query parameter: the constant Value, or the value of Var,
// omitted when the variable is absent or null.
type Param struct {
	Key   string `json:"key"`
	Var   string `json:"var,omitempty"`
	Value string `json:"value,omitempty"`
}

// Fill renders the request of a call with vars (the call's variables as
// the host holds them) and page (the paging state of a continuation, nil
// for a first page). ok is false when the template cannot render this
// call exactly; the caller then compiles it in the guest.
func (t *Template) Fill(vars, page map[string]any) (req *abi.CompiledRequest, ok bool) {
	if t == nil {
		return nil, false
	}
	// Every variable crosses the ABI on the guest path, used or not: a
	// call the host could not encode, or one too large to send, fails
	// there, so it must not succeed here.
	budget := MaxFill
	for _, m := range []map[string]any{vars, page} {
		for _, v := range m {
			if budget = encodable(v, budget, 0); budget < 0 {
				return nil, false
			}
		}
	}
	state, ok := t.pageState(page)
	if !ok {
		return nil, false
	}
	budget = MaxFill
	var b strings.Builder
	b.WriteString(t.Base)
	if !t.writePath(&b, vars, state, &budget) {
		return nil, false
	}
	pairs, ok := t.queryPairs(vars, state, &budget)
	if !ok {
		return nil, false
	}
	q := EncodeForm(pairs)
	switch {
	case t.BaseQuery != "" && q != "":
		q = t.BaseQuery + "&" + q
	case t.BaseQuery != "":
		q = t.BaseQuery
	}
	if q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	out := &abi.CompiledRequest{Method: t.Method, URL: b.String()}
	if len(state) > 0 {
		out.Page = state
	}
	if len(t.Headers) > 0 {
		out.Headers = append([][2]string(nil), t.Headers...)
	}
	if t.Auth != nil {
		a := *t.Auth // a copy: callers may not reach the cached template
		a.Scopes = append([]string(nil), t.Auth.Scopes...)
		if len(a.Scopes) == 0 {
			a.Scopes = nil
		}
		out.Auth = &a
	}
	return out, true
}

// writePath appends the path segments, charging variable text to budget.
func (t *Template) writePath(b *strings.Builder, vars, state map[string]any, budget *int) bool {
	for _, s := range t.Path {
		b.WriteByte('/')
		if s.Var == "" {
			b.WriteString(s.Lit)
			continue
		}
		v := t.lookup(vars, s.Var)
		if v == nil {
			v = state[s.Var] // a path variable the page state carries
		}
		text, ok := scalar(v)
		if !ok || text == "" || catalog.IsAbsoluteURL(text) {
			// Absent, empty or not a plain scalar: the guest says why. An
			// absolute URL replaces the base, once its origin is checked
			// against the catalog's: the guest's compiler does both.
			return false
		}
		if *budget -= len(text); *budget < 0 {
			return false
		}
		b.WriteString(PathSegment(text))
		b.WriteString(s.Suffix)
	}
	return true
}

// queryPairs is the mapping's query parameters, then the paging
// parameters, which replace (or join) the mapping's keys of that name.
func (t *Template) queryPairs(vars, state map[string]any, budget *int) ([][2]string, bool) {
	pairs := make([][2]string, 0, len(t.Query)+len(t.Paging))
	for _, p := range t.Query {
		if p.Var == "" {
			pairs = append(pairs, [2]string{p.Key, p.Value})
			continue
		}
		v := t.lookup(vars, p.Var)
		if sv, ok := state[p.Var]; ok && p.Var != NextURLKey {
			v = sv // the compiler's environment: page state over variables
		}
		if v == nil {
			continue
		}
		text, ok := scalar(v)
		if !ok {
			return nil, false
		}
		if *budget -= len(text); *budget < 0 {
			return nil, false
		}
		pairs = append(pairs, [2]string{p.Key, text})
	}
	for _, p := range t.Paging {
		v := state[p.Name]
		if v == nil {
			continue
		}
		text, ok := p.Text, p.Kind == PageFixed // forced: the compiler's own text
		if !ok {
			if text, ok = scalar(v); !ok {
				return nil, false
			}
		}
		pairs = slices.DeleteFunc(pairs, func(kv [2]string) bool { return kv[0] == p.Name })
		pairs = append(pairs, [2]string{p.Name, text})
	}
	return pairs, true
}

// NextURLKey is the page-state key of a next-page URL; the compiler never
// reads it as a variable.
const NextURLKey = "next_url"

// pageState is the paging state the compiler would use: a copy of page
// with fixed parameters forced and missing counters started. Page values
// must be ones that cross the ABI unchanged (null, valid strings,
// booleans, json.Number); anything else declines. Nil for a mapping
// without pagination, which ignores page.
func (t *Template) pageState(page map[string]any) (map[string]any, bool) {
	if !t.Paginated {
		return nil, true
	}
	state := make(map[string]any, len(page)+len(t.Paging))
	for k, v := range page {
		switch x := v.(type) {
		case nil, bool:
		case string:
			if !utf8.ValidString(x) {
				return nil, false
			}
		case json.Number:
			if !jsonNumber(string(x)) {
				return nil, false
			}
		default:
			return nil, false
		}
		state[k] = v
	}
	for _, p := range t.Paging {
		switch p.Kind {
		case PageFixed:
			state[p.Name] = p.Value
		case PageCounter:
			if v, ok := state[p.Name]; !ok || v == nil {
				state[p.Name] = p.Value
			}
		case PageState:
		default:
			return nil, false
		}
	}
	return state, true
}

// lookup is the value of name in a call, with the id-variable rule of the
// compiler: the id variable takes the call's id when the call has no entry
// of that name at all.
func (t *Template) lookup(vars map[string]any, name string) any {
	v, has := vars[name]
	if !has && name == t.IDVar && t.IDVar != "" {
		return vars["id"]
	}
	return v
}

// scalar is the text the guest's compiler would write for v after v
// crossed the ABI as JSON (numbers arrive as json.Number). Only values
// whose text is certain are accepted: valid UTF-8 strings (JSON would
// replace invalid bytes), booleans, integers exactly representable in an
// int64 and in a float64, and json.Number integers of any size and form
// (written as their canonical digits). Everything else declines.
func scalar(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		if !utf8.ValidString(t) {
			return "", false
		}
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case int:
		return strconv.FormatInt(int64(t), 10), true
	case int32:
		return strconv.FormatInt(int64(t), 10), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return "", false
		}
		return strconv.FormatInt(int64(t), 10), true
	case json.Number:
		// An integer however written (1e3, 10.0, -0, 1.5e19) is its
		// canonical digits, exactly as the guest's compiler writes it
		// (cml.scalarText reads it with the same decimal package), so a
		// call need not go to the guest for it. Anything else declines: a
		// fraction, an integer too long to write (the guest refuses it),
		// or text outside JSON's number grammar.
		digits, integral, err := decimal.Integer(string(t))
		if !integral || err != nil {
			return "", false
		}
		return digits, true
	}
	return "", false
}

// encodable charges v's approximate encoded size to budget and returns
// what is left, or -1 when v is not plain JSON data (a value encoding/json
// refuses, such as an invalid json.Number or a NaN, or a type this check
// does not know) or is nested too deeply.
func encodable(v any, budget, depth int) int {
	const maxDepth = 32
	if depth > maxDepth || budget < 0 {
		return -1
	}
	budget -= 8
	switch t := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
	case string:
		budget -= len(t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return -1
		}
	case float32:
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return -1
		}
	case json.Number:
		if !jsonNumber(string(t)) {
			return -1
		}
		budget -= len(t)
	case []any:
		for _, e := range t {
			if budget = encodable(e, budget, depth+1); budget < 0 {
				return -1
			}
		}
	case map[string]any:
		for k, e := range t {
			budget -= len(k)
			if budget = encodable(e, budget, depth+1); budget < 0 {
				return -1
			}
		}
	default:
		return -1
	}
	return budget
}

// jsonNumber reports whether s is a number in JSON's grammar, which is
// what encoding/json requires of a json.Number it encodes.
func jsonNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	digits := func() int {
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		d := n
		s = s[n:]
		return d
	}
	switch {
	case s == "":
		return false
	case s[0] == '0':
		s = s[1:]
	case s[0] >= '1' && s[0] <= '9':
		digits()
	default:
		return false
	}
	if strings.HasPrefix(s, ".") {
		s = s[1:]
		if digits() == 0 {
			return false
		}
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return s == ""
}

// PathSegment escapes one path variable. url.PathEscape leaves "." and
// ".." alone, and a server or proxy normalising the path would then climb
// out of the segment ("items/../admin"); dot segments are percent-encoded
// so a value can only ever name itself.
func PathSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// EncodeForm encodes key/value pairs with url.Values semantics: keys
// sorted, repeated keys keeping their relative order.
func EncodeForm(ps [][2]string) string {
	sorted := make([][2]string, len(ps))
	copy(sorted, ps)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i][0] < sorted[j][0] })
	var b strings.Builder
	for i, p := range sorted {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p[0]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p[1]))
	}
	return b.String()
}
