package plan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// The binary wire form of a plan is what the engine's plasm_plan export
// answers a host that asks for it (abi.PlanRequest.PlanWire); people and
// clients still see JSON (AppendJSON). It exists because the host decoded
// the JSON answer with encoding/json reflection (~75 µs a plan, 15% of a
// sandboxed plan's CPU) and the guest spent ~11% of its time escaping
// strings: here strings are length-prefixed bytes, so the guest copies them
// and the host slices them out of one string.
//
// Layout: WireTag, WireVersion (uvarint), then the plan's fields in the
// order of the struct definitions. Integers are zigzag varints, lengths and
// counts uvarints, bools and presence marks one byte. A list whose JSON
// form has omitempty is its count (0 decodes to nil, as JSON's absent field
// does); a list JSON writes as null when nil is its count plus one, 0
// meaning nil. Values (Args, predicate and view values) are a kind byte
// and their content; numbers travel as their JSON text and decode to
// json.Number, as the host's JSON decoding (abi.Unmarshal) gives them.
//
// The promise, checked over every golden plan and the language matrix:
// DecodeBinary(AppendBinary(p)) deep-equals abi.Unmarshal(AppendJSON(p)).

// WireTag starts a plan in the binary form. No JSON text can start with
// it (JSON starts with whitespace, a bracket, a quote, a digit, '-' or a
// literal), so a reader tells the two forms apart by the first byte.
const WireTag byte = 0xB2

// WireVersion is the layout version. A host names the version it reads in
// the plan header; an engine whose version differs answers JSON, so
// changing the layout means bumping this, never reinterpreting bytes.
const WireVersion = 1

// MaxWireValueDepth bounds the nesting of a value (a list inside a list…).
// The planner's values nest at most 64 deep (the parser's bracket limit);
// a plan with a deeper value is sent as JSON instead (ErrWireUnencodable).
const MaxWireValueDepth = 100

// ErrWireUnencodable reports a plan the binary form cannot carry (a value
// nested deeper than MaxWireValueDepth); the engine sends such a plan as
// JSON.
var ErrWireUnencodable = errors.New("plan: value nested too deep for the binary wire form")

// Value kinds.
const (
	valNull byte = iota
	valFalse
	valTrue
	valString
	valNumber
	valList
	valObject
	valKinds // first invalid kind
)

// AppendBinary appends p's binary wire form to b. On error (see
// ErrWireUnencodable) the returned slice holds a partial encoding: callers
// go back to len(b) and send JSON.
//
// The encoder threads the buffer through arguments and results, as
// AppendJSON does, rather than keeping it in a struct behind a pointer:
// in the guest every store of a slice through a pointer takes a GC write
// barrier while the collector marks, which it often does there.
func (p *Plan) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, WireTag)
	b = putUint(b, WireVersion)
	b = putLen(b, len(p.Nodes), p.Nodes == nil, true)
	var err error
	for i := range p.Nodes {
		if b, err = putNode(b, &p.Nodes[i]); err != nil {
			return b, err
		}
	}
	b = putLen(b, len(p.Roots), p.Roots == nil, true)
	for _, r := range p.Roots {
		b = putStr(b, r.Label)
		b = putInt(b, r.Node)
	}
	b = putInts(b, p.Order, true)
	b = putStr(b, p.Verdict)
	b = putStrs(b, p.Reasons, false)
	return putStr(b, p.Summary), nil
}

// putUint and putInt take the one-byte case without binary.AppendUvarint's
// loop: nearly every length and integer in a plan is below 128, and in the
// guest every loop header costs an interruption check.
func putUint(b []byte, n uint64) []byte {
	if n < 0x80 {
		return append(b, byte(n))
	}
	return binary.AppendUvarint(b, n)
}

func putInt(b []byte, n int) []byte {
	if n >= -64 && n < 64 {
		return append(b, byte(uint64(n)<<1^uint64(n>>63)))
	}
	return binary.AppendVarint(b, int64(n))
}

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func putStr(b []byte, s string) []byte {
	return append(putUint(b, uint64(len(s))), s...)
}

// putLen writes a list's length: for a list JSON writes as null when nil
// (nullable), 0 is nil and n+1 is n elements; otherwise 0 is empty, which
// JSON's omitempty also turns into nil.
func putLen(b []byte, n int, isNil, nullable bool) []byte {
	switch {
	case !nullable:
		return putUint(b, uint64(n))
	case isNil:
		return append(b, 0)
	default:
		return putUint(b, uint64(n)+1)
	}
}

func putInts(b []byte, xs []int, nullable bool) []byte {
	b = putLen(b, len(xs), xs == nil, nullable)
	for _, x := range xs {
		b = putInt(b, x)
	}
	return b
}

func putStrs(b []byte, ss []string, nullable bool) []byte {
	b = putLen(b, len(ss), ss == nil, nullable)
	for _, s := range ss {
		b = putStr(b, s)
	}
	return b
}

func putNode(b []byte, n *Node) ([]byte, error) {
	b = putInt(b, n.ID)
	b = putStr(b, n.Op)
	b = putStr(b, n.Kind)
	b = putStr(b, n.Effect)
	b = putStr(b, n.Label)
	b = putStr(b, n.EntryID)
	b = putStr(b, n.Entity)
	b = putStr(b, n.Capability)
	b = putStrs(b, n.Columns, false)
	b = putUint(b, uint64(len(n.Args)))
	var err error
	for k, v := range n.Args {
		if b, err = putValue(putStr(b, k), v, 0, false); err != nil {
			return b, err
		}
	}
	b = putUint(b, uint64(len(n.ArgRefs)))
	for _, r := range n.ArgRefs {
		b = putArgRef(b, r)
	}
	b = putInt(b, n.Input)
	// Optional parts: a presence byte, then the part when present.
	if b = putBool(b, n.ForEach != nil); n.ForEach != nil {
		b = putBind(b, *n.ForEach)
	}
	if b = putBool(b, n.EachRow != nil); n.EachRow != nil {
		b = putBinds(b, n.EachRow.Binds, true)
	}
	if b = putBool(b, n.Semi != nil); n.Semi != nil {
		b = putInt(b, n.Semi.Node)
		b = putStr(b, n.Semi.Field)
		b = putStr(b, n.Semi.Key)
	}
	b = putInt(b, n.PageSize)
	b = putUint(b, uint64(len(n.Templates)))
	for _, t := range n.Templates {
		b = putStr(b, t.Var)
		b = putStrs(b, t.Parts, true)
		b = putLen(b, len(t.Refs), t.Refs == nil, true)
		for _, r := range t.Refs {
			b = putArgRef(b, r)
		}
	}
	if h := n.Hop; h != nil {
		b = append(b, 1)
		b = putStr(b, h.Relation)
		b = putStr(b, h.Materialize)
		b = putStr(b, h.Target)
		b = putStr(b, h.Capability)
		b = putBinds(b, h.Binds, true)
		b = putStr(b, h.DistinctBy)
	} else {
		b = append(b, 0)
	}
	if h := n.Hydrate; h != nil {
		b = append(b, 1)
		b = putBinds(b, h.Binds, true)
		b = putStrs(b, h.Fields, true)
	} else {
		b = append(b, 0)
	}
	if b, err = putView(b, n.View); err != nil {
		return b, err
	}
	if b, err = putPreds(b, n.Filters); err != nil {
		return b, err
	}
	b = putUint(b, uint64(len(n.Transforms)))
	for i := range n.Transforms {
		if b, err = putTransform(b, &n.Transforms[i]); err != nil {
			return b, err
		}
	}
	if pg := n.Page; pg != nil {
		b = append(b, 1)
		b = putStr(b, pg.Handle)
		b = putInt(b, pg.Limit)
	} else {
		b = append(b, 0)
	}
	b = putBool(b, n.Many)
	b = putInts(b, n.Deps, false)
	b = putInt(b, n.Line)
	return putInt(b, n.Column), nil
}

func putArgRef(b []byte, r ArgRef) []byte {
	b = putStr(b, r.Var)
	b = putInt(b, r.Node)
	return putStr(b, r.Field)
}

func putBind(b []byte, x Bind) []byte {
	return putStr(putStr(b, x.Var), x.Field)
}

func putBinds(b []byte, xs []Bind, nullable bool) []byte {
	b = putLen(b, len(xs), xs == nil, nullable)
	for _, x := range xs {
		b = putBind(b, x)
	}
	return b
}

func putPreds(b []byte, ps []Pred) ([]byte, error) {
	b = putUint(b, uint64(len(ps)))
	var err error
	for _, p := range ps {
		b = putStr(b, p.Field)
		b = putStr(b, p.Op)
		if b, err = putValue(b, p.Value, 0, false); err != nil {
			return b, err
		}
	}
	return b, nil
}

func putTransform(b []byte, t *Transform) ([]byte, error) {
	b = putStr(b, t.Kind)
	b = putInt(b, t.N)
	b = putStr(b, t.Field)
	b = putBool(b, t.Desc)
	b = putStrs(b, t.Fields, false)
	var err error
	if b, err = putPreds(b, t.Preds); err != nil {
		return b, err
	}
	b = putUint(b, uint64(len(t.Aggs)))
	for _, a := range t.Aggs {
		b = putStr(b, a.Name)
		b = putStr(b, a.Fn)
		b = putStr(b, a.Field)
	}
	b = putUint(b, uint64(len(t.Derive)))
	for _, d := range t.Derive {
		b = putStr(b, d.Name)
		b = putStr(b, d.Field)
		if b, err = putValue(b, d.Value, 0, false); err != nil {
			return b, err
		}
	}
	return putStr(b, t.Template), nil
}

// putView writes a view node's composition. AppendJSON encodes a view with
// encoding/json and leaves it out when that fails (a NaN value), so the
// view is encoded strictly and, on that failure, written as absent.
func putView(b []byte, v *View) ([]byte, error) {
	if v == nil {
		return append(b, 0), nil
	}
	mark := len(b)
	b, err := putViewBody(append(b, 1), v)
	if errors.Is(err, errUnmarshalable) {
		return append(b[:mark], 0), nil
	}
	return b, err
}

// errUnmarshalable marks a view value encoding/json refuses.
var errUnmarshalable = errors.New("plan: value encoding/json cannot encode")

func putViewBody(b []byte, v *View) ([]byte, error) {
	b = putStr(b, v.Name)
	b = putStrs(b, v.Required, false)
	b = putLen(b, len(v.Steps), v.Steps == nil, true)
	var err error
	for i := range v.Steps {
		if b, err = putViewStep(b, &v.Steps[i]); err != nil {
			return b, err
		}
	}
	b = putUint(b, uint64(len(v.Outputs)))
	for _, o := range v.Outputs {
		b = putStr(b, o.Field)
		b = putStr(b, o.Kind)
		b = putStr(b, o.Param)
		b = putStr(b, o.Node)
		b = putStr(b, o.Of)
		if b, err = putValue(b, o.Equals, 0, true); err != nil {
			return b, err
		}
		b = putStr(b, o.Template)
	}
	b = putUint(b, uint64(len(v.Relations)))
	for _, r := range v.Relations {
		b = putStr(b, r.Relation)
		b = putStr(b, r.Kind)
		b = putStr(b, r.Node)
		b = putStr(b, r.Where)
		if b, err = putValue(b, r.Equals, 0, true); err != nil {
			return b, err
		}
		b = putStrs(b, r.Columns, false)
	}
	return b, nil
}

func putViewStep(b []byte, s *ViewStep) ([]byte, error) {
	b = putStr(b, s.ID)
	b = putStr(b, s.Capability)
	b = putStr(b, s.Kind)
	b = putStr(b, s.Entity)
	b = putStrs(b, s.Columns, false)
	b = putUint(b, uint64(len(s.Binds)))
	var err error
	for _, x := range s.Binds {
		b = putStr(b, x.Var)
		b = putStr(b, x.Kind)
		b = putStr(b, x.From)
		b = putStr(b, x.Node)
		b = putStr(b, x.Field)
		if b, err = putValue(b, x.Value, 0, true); err != nil {
			return b, err
		}
		b = putStr(b, x.Template)
		b = putBool(b, x.Filter)
	}
	b = putStr(b, s.IDFrom)
	return putStrs(b, s.IDVars, false), nil
}

// putValue writes v as AppendJSON would write it (marshal false) or as
// encoding/json would (marshal true, for views): the two differ only for
// a nil []any or map, which appendValue writes as empty and encoding/json
// as null, and for a value encoding/json refuses, which appendValue writes
// as null and the view encoder reports (errUnmarshalable).
func putValue(b []byte, v any, depth int, marshal bool) ([]byte, error) {
	if depth >= MaxWireValueDepth {
		return b, ErrWireUnencodable
	}
	var err error
	switch t := v.(type) {
	case nil:
		return append(b, valNull), nil
	case string:
		return putStr(append(b, valString), t), nil
	case bool:
		if t {
			return append(b, valTrue), nil
		}
		return append(b, valFalse), nil
	case int:
		return putIntValue(b, int64(t)), nil
	case int64:
		return putIntValue(b, t), nil
	case float64:
		if !math.IsInf(t, 0) && !math.IsNaN(t) && t == math.Trunc(t) && math.Abs(t) < 1e21 {
			// At most 21 digits and a sign: the length is one byte.
			b = append(b, valNumber, 0)
			start := len(b)
			b = strconv.AppendFloat(b, t, 'f', -1, 64)
			b[start-1] = byte(len(b) - start)
			return b, nil
		}
	case json.Number:
		// encoding/json writes "" as 0 and refuses what is not a number.
		n := string(t)
		if n == "" {
			n = "0"
		}
		if isJSONNumber(n) {
			return putStr(append(b, valNumber), n), nil
		}
	case []any:
		if t == nil && marshal {
			return append(b, valNull), nil
		}
		b = putUint(append(b, valList), uint64(len(t)))
		for _, e := range t {
			if b, err = putValue(b, e, depth+1, marshal); err != nil {
				return b, err
			}
		}
		return b, nil
	case map[string]any:
		if t == nil && marshal {
			return append(b, valNull), nil
		}
		b = putUint(append(b, valObject), uint64(len(t)))
		for k, e := range t {
			if b, err = putValue(putStr(b, k), e, depth+1, marshal); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return putMarshalled(b, v, depth, marshal)
}

// putIntValue writes an integer value as its decimal text, formatted in
// place (at most 20 bytes, so its length is one uvarint byte).
func putIntValue(b []byte, n int64) []byte {
	b = append(b, valNumber, 0)
	start := len(b)
	b = strconv.AppendInt(b, n, 10)
	b[start-1] = byte(len(b) - start)
	return b
}

// putMarshalled writes a value of a type appendValue leaves to
// encoding/json (floats with a fraction, other Go types, an invalid
// json.Number): what JSON would carry is exactly encoding/json's text
// decoded again, so that is what is written. These are rare; the
// planner's own values take the cases of putValue.
func putMarshalled(b []byte, v any, depth int, marshal bool) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		if marshal {
			return b, errUnmarshalable
		}
		return append(b, valNull), nil
	}
	switch j[0] {
	case 'n':
		return append(b, valNull), nil
	case 't':
		return append(b, valTrue), nil
	case 'f':
		return append(b, valFalse), nil
	case '{', '[', '"':
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var back any
		if err := dec.Decode(&back); err != nil {
			if marshal {
				return b, errUnmarshalable
			}
			return append(b, valNull), nil
		}
		return putValue(b, back, depth, marshal)
	}
	return putStr(append(b, valNumber), string(j)), nil
}
