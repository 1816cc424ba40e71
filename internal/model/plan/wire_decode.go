package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrWire reports a malformed binary plan; every decoding error wraps it.
var ErrWire = errors.New("plan: malformed binary plan")

// WireError says where and why a binary plan is malformed.
type WireError struct {
	Offset int    // byte offset in the input where decoding stopped
	Reason string // what was wrong there
}

func (e *WireError) Error() string {
	return fmt.Sprintf("plan: malformed binary plan at byte %d: %s", e.Offset, e.Reason)
}

func (e *WireError) Unwrap() error { return ErrWire }

// Smallest encodings of one element, in bytes (every field takes at least
// one). A count is checked against the input left divided by these before
// anything is allocated for it, so a hostile count cannot make the decoder
// allocate more than a small multiple of the input's size.
// TestWireMinSizes checks them against the encoder.
const (
	minNode         = 27
	minRoot         = 2
	minArgRef       = 3
	minBind         = 2
	minPred         = 3
	minTransform    = 9
	minAgg          = 3
	minDerived      = 3
	minTemplate     = 3
	minViewStep     = 8
	minViewBind     = 8
	minViewOutput   = 7
	minViewRelation = 6
	minEntry        = 2 // an object member: key and value
)

// DecodeBinary decodes a plan in the binary wire form (AppendBinary). It
// is written for hostile input: every length and count is checked against
// the bytes left before anything is allocated for it, values nest at most
// MaxWireValueDepth deep, and a malformed input is a *WireError, never a
// panic. Strings are made valid UTF-8 the way encoding/json's decoder does
// (each invalid byte becomes U+FFFD). The decoded plan's strings share one
// copy of the input.
func DecodeBinary(b []byte) (*Plan, error) {
	r := wireReader{s: string(b)}
	if len(r.s) == 0 || r.s[0] != WireTag {
		r.fail("does not start with the binary plan tag")
		return nil, r.err
	}
	r.off = 1
	if v := r.uint(); r.err == nil && v != WireVersion {
		r.fail(fmt.Sprintf("wire version %d, want %d", v, WireVersion))
	}
	p := &Plan{}
	if n, isNil := r.listLen(true, minNode); !isNil {
		p.Nodes = make([]Node, n)
		for i := range p.Nodes {
			r.node(&p.Nodes[i])
		}
	}
	if n, isNil := r.listLen(true, minRoot); !isNil {
		p.Roots = make([]Root, n)
		for i := range p.Roots {
			p.Roots[i] = Root{Label: r.str(), Node: r.int()}
		}
	}
	p.Order = r.ints(true)
	p.Verdict = r.str()
	p.Reasons = r.strs(false)
	p.Summary = r.str()
	if r.err == nil && r.off != len(r.s) {
		r.fail(fmt.Sprintf("%d bytes after the plan", len(r.s)-r.off))
	}
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}

// wireReader reads the binary form from s. The first error sticks: from
// then on every read returns a zero value and every count is 0, so loops
// end and the caller reports that error.
type wireReader struct {
	s   string
	off int
	err *WireError
}

func (r *wireReader) fail(reason string) {
	if r.err == nil {
		r.err = &WireError{Offset: r.off, Reason: reason}
	}
	r.off = len(r.s)
}

func (r *wireReader) uint() uint64 {
	var x uint64
	for i, shift := 0, uint(0); i < 10; i, shift = i+1, shift+7 {
		if r.off+i >= len(r.s) {
			r.fail("input ends inside a number")
			return 0
		}
		c := r.s[r.off+i]
		if c < 0x80 {
			if i == 9 && c > 1 {
				break
			}
			r.off += i + 1
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
	}
	r.fail("number overflows 64 bits")
	return 0
}

func (r *wireReader) int() int {
	u := r.uint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	if int64(int(x)) != x {
		r.fail("integer out of range")
		return 0
	}
	return int(x)
}

func (r *wireReader) bool() bool {
	if r.off >= len(r.s) {
		r.fail("input ends before a flag")
		return false
	}
	c := r.s[r.off]
	if c > 1 {
		r.fail(fmt.Sprintf("flag byte %d, want 0 or 1", c))
		return false
	}
	r.off++
	return c == 1
}

// bytes returns the next length-prefixed run of input, unchecked for UTF-8.
func (r *wireReader) bytes() string {
	n := r.uint()
	if n > uint64(len(r.s)-r.off) {
		r.fail(fmt.Sprintf("length %d exceeds the %d bytes left", n, len(r.s)-r.off))
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *wireReader) str() string {
	s := r.bytes()
	if utf8.ValidString(s) {
		return s
	}
	return validUTF8(s)
}

// validUTF8 replaces each byte of s that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does when it encodes (and decodes) a string.
func validUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// listLen reads a list's length (see wireWriter.listLen) and checks that
// n elements of at least minSize bytes each fit in what is left.
func (r *wireReader) listLen(nullable bool, minSize int) (n int, isNil bool) {
	c := r.uint()
	if r.err != nil {
		return 0, true
	}
	if nullable {
		if c == 0 {
			return 0, true
		}
		c--
	}
	if c > uint64((len(r.s)-r.off)/minSize) {
		r.fail(fmt.Sprintf("count %d exceeds what the %d bytes left can hold", c, len(r.s)-r.off))
		return 0, true
	}
	return int(c), !nullable && c == 0
}

func (r *wireReader) ints(nullable bool) []int {
	n, isNil := r.listLen(nullable, 1)
	if isNil {
		return nil
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = r.int()
	}
	return xs
}

func (r *wireReader) strs(nullable bool) []string {
	n, isNil := r.listLen(nullable, 1)
	if isNil {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

func (r *wireReader) node(n *Node) {
	n.ID = r.int()
	n.Op, n.Kind, n.Effect, n.Label = r.str(), r.str(), r.str(), r.str()
	n.EntryID, n.Entity, n.Capability = r.str(), r.str(), r.str()
	n.Columns = r.strs(false)
	if c, isNil := r.listLen(false, minEntry); !isNil {
		n.Args = make(map[string]any, c)
		for range c {
			k := r.str()
			n.Args[k] = r.value(0)
		}
	}
	if c, isNil := r.listLen(false, minArgRef); !isNil {
		n.ArgRefs = make([]ArgRef, c)
		for i := range n.ArgRefs {
			n.ArgRefs[i] = r.argRef()
		}
	}
	n.Input = r.int()
	if r.bool() {
		n.ForEach = &Bind{Var: r.str(), Field: r.str()}
	}
	if r.bool() {
		n.EachRow = &EachRow{Binds: r.binds(true)}
	}
	if r.bool() {
		n.Semi = &SemiJoin{Node: r.int(), Field: r.str(), Key: r.str()}
	}
	n.PageSize = r.int()
	if c, isNil := r.listLen(false, minTemplate); !isNil {
		n.Templates = make([]ArgTemplate, c)
		for i := range n.Templates {
			r.template(&n.Templates[i])
		}
	}
	if r.bool() {
		n.Hop = &Hop{Relation: r.str(), Materialize: r.str(), Target: r.str(), Capability: r.str(), Binds: r.binds(true), DistinctBy: r.str()}
	}
	if r.bool() {
		n.Hydrate = &Hydrate{Binds: r.binds(true), Fields: r.strs(true)}
	}
	if r.bool() {
		n.View = r.view()
	}
	n.Filters = r.preds()
	if c, isNil := r.listLen(false, minTransform); !isNil {
		n.Transforms = make([]Transform, c)
		for i := range n.Transforms {
			r.transform(&n.Transforms[i])
		}
	}
	if r.bool() {
		n.Page = &PageRef{Handle: r.str(), Limit: r.int()}
	}
	n.Many = r.bool()
	n.Deps = r.ints(false)
	n.Line = r.int()
	n.Column = r.int()
}

func (r *wireReader) argRef() ArgRef {
	return ArgRef{Var: r.str(), Node: r.int(), Field: r.str()}
}

func (r *wireReader) template(t *ArgTemplate) {
	t.Var = r.str()
	t.Parts = r.strs(true)
	if c, isNil := r.listLen(true, minArgRef); !isNil {
		t.Refs = make([]ArgRef, c)
		for i := range t.Refs {
			t.Refs[i] = r.argRef()
		}
	}
}

func (r *wireReader) binds(nullable bool) []Bind {
	c, isNil := r.listLen(nullable, minBind)
	if isNil {
		return nil
	}
	xs := make([]Bind, c)
	for i := range xs {
		xs[i] = Bind{Var: r.str(), Field: r.str()}
	}
	return xs
}

func (r *wireReader) preds() []Pred {
	c, isNil := r.listLen(false, minPred)
	if isNil {
		return nil
	}
	ps := make([]Pred, c)
	for i := range ps {
		ps[i] = Pred{Field: r.str(), Op: r.str(), Value: r.value(0)}
	}
	return ps
}

func (r *wireReader) transform(t *Transform) {
	t.Kind = r.str()
	t.N = r.int()
	t.Field = r.str()
	t.Desc = r.bool()
	t.Fields = r.strs(false)
	t.Preds = r.preds()
	if c, isNil := r.listLen(false, minAgg); !isNil {
		t.Aggs = make([]Agg, c)
		for i := range t.Aggs {
			t.Aggs[i] = Agg{Name: r.str(), Fn: r.str(), Field: r.str()}
		}
	}
	if c, isNil := r.listLen(false, minDerived); !isNil {
		t.Derive = make([]Derived, c)
		for i := range t.Derive {
			t.Derive[i] = Derived{Name: r.str(), Field: r.str(), Value: r.value(0)}
		}
	}
	t.Template = r.str()
}

func (r *wireReader) view() *View {
	v := &View{Name: r.str(), Required: r.strs(false)}
	if c, isNil := r.listLen(true, minViewStep); !isNil {
		v.Steps = make([]ViewStep, c)
		for i := range v.Steps {
			r.viewStep(&v.Steps[i])
		}
	}
	if c, isNil := r.listLen(false, minViewOutput); !isNil {
		v.Outputs = make([]ViewOutput, c)
		for i := range v.Outputs {
			v.Outputs[i] = ViewOutput{Field: r.str(), Kind: r.str(), Param: r.str(), Node: r.str(), Of: r.str(), Equals: r.value(0), Template: r.str()}
		}
	}
	if c, isNil := r.listLen(false, minViewRelation); !isNil {
		v.Relations = make([]ViewRelation, c)
		for i := range v.Relations {
			v.Relations[i] = ViewRelation{Relation: r.str(), Kind: r.str(), Node: r.str(), Where: r.str(), Equals: r.value(0), Columns: r.strs(false)}
		}
	}
	return v
}

func (r *wireReader) viewStep(s *ViewStep) {
	s.ID, s.Capability, s.Kind, s.Entity = r.str(), r.str(), r.str(), r.str()
	s.Columns = r.strs(false)
	if c, isNil := r.listLen(false, minViewBind); !isNil {
		s.Binds = make([]ViewBind, c)
		for i := range s.Binds {
			s.Binds[i] = ViewBind{Var: r.str(), Kind: r.str(), From: r.str(), Node: r.str(), Field: r.str(), Value: r.value(0), Template: r.str(), Filter: r.bool()}
		}
	}
	s.IDFrom = r.str()
	s.IDVars = r.strs(false)
}

// value reads one value as JSON decoding with numbers kept as
// json.Number gives it: nil, bool, string, json.Number, []any or
// map[string]any (lists and objects never nil).
func (r *wireReader) value(depth int) any {
	if r.off >= len(r.s) {
		r.fail("input ends before a value")
		return nil
	}
	if depth >= MaxWireValueDepth {
		r.fail(fmt.Sprintf("value nested more than %d deep", MaxWireValueDepth))
		return nil
	}
	kind := r.s[r.off]
	r.off++
	switch kind {
	case valNull:
		return nil
	case valFalse:
		return false
	case valTrue:
		return true
	case valString:
		return r.str()
	case valNumber:
		s := r.bytes()
		if !isJSONNumber(s) {
			r.fail(fmt.Sprintf("%q is not a JSON number", s))
			return nil
		}
		return json.Number(s)
	case valList:
		c, _ := r.listLen(false, 1)
		xs := make([]any, c)
		for i := range xs {
			xs[i] = r.value(depth + 1)
		}
		return xs
	case valObject:
		c, _ := r.listLen(false, minEntry)
		m := make(map[string]any, c)
		for range c {
			k := r.str()
			m[k] = r.value(depth + 1)
		}
		return m
	}
	r.off--
	r.fail(fmt.Sprintf("unknown value kind %d", kind))
	return nil
}

// isJSONNumber reports whether s is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
