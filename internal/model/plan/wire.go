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
func (p *Plan) AppendBinary(b []byte) ([]byte, error) {
	w := wireWriter{b: append(b, WireTag)}
	w.uint(WireVersion)
	w.listLen(len(p.Nodes), p.Nodes == nil, true)
	for i := range p.Nodes {
		w.node(&p.Nodes[i])
	}
	w.listLen(len(p.Roots), p.Roots == nil, true)
	for _, r := range p.Roots {
		w.str(r.Label)
		w.int(r.Node)
	}
	w.ints(p.Order, true)
	w.str(p.Verdict)
	w.strs(p.Reasons, false)
	w.str(p.Summary)
	return w.b, w.err
}

// wireWriter appends the binary form. err is sticky: once set, the rest
// still appends but the result is discarded.
type wireWriter struct {
	b   []byte
	err error
}

func (w *wireWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *wireWriter) int(n int)     { w.b = binary.AppendVarint(w.b, int64(n)) }

func (w *wireWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *wireWriter) str(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

// present writes whether an optional part follows.
func (w *wireWriter) present(ok bool) bool {
	w.bool(ok)
	return ok
}

func (w *wireWriter) ints(xs []int, nullable bool) {
	w.listLen(len(xs), xs == nil, nullable)
	for _, x := range xs {
		w.int(x)
	}
}

func (w *wireWriter) strs(ss []string, nullable bool) {
	w.listLen(len(ss), ss == nil, nullable)
	for _, s := range ss {
		w.str(s)
	}
}

// listLen writes a list's length: for a list JSON writes as null when nil
// (nullable), 0 is nil and n+1 is n elements; otherwise 0 is empty, which
// JSON's omitempty also turns into nil.
func (w *wireWriter) listLen(n int, isNil, nullable bool) {
	switch {
	case !nullable:
		w.uint(uint64(n))
	case isNil:
		w.uint(0)
	default:
		w.uint(uint64(n) + 1)
	}
}

func (w *wireWriter) node(n *Node) {
	w.int(n.ID)
	w.str(n.Op)
	w.str(n.Kind)
	w.str(n.Effect)
	w.str(n.Label)
	w.str(n.EntryID)
	w.str(n.Entity)
	w.str(n.Capability)
	w.strs(n.Columns, false)
	w.uint(uint64(len(n.Args)))
	for k, v := range n.Args {
		w.str(k)
		w.value(v, 0, false)
	}
	w.uint(uint64(len(n.ArgRefs)))
	for _, r := range n.ArgRefs {
		w.argRef(r)
	}
	w.int(n.Input)
	if w.present(n.ForEach != nil) {
		w.bind(*n.ForEach)
	}
	if w.present(n.EachRow != nil) {
		w.binds(n.EachRow.Binds, true)
	}
	if s := n.Semi; w.present(s != nil) {
		w.int(s.Node)
		w.str(s.Field)
		w.str(s.Key)
	}
	w.int(n.PageSize)
	w.uint(uint64(len(n.Templates)))
	for _, t := range n.Templates {
		w.str(t.Var)
		w.strs(t.Parts, true)
		w.listLen(len(t.Refs), t.Refs == nil, true)
		for _, r := range t.Refs {
			w.argRef(r)
		}
	}
	if h := n.Hop; w.present(h != nil) {
		w.str(h.Relation)
		w.str(h.Materialize)
		w.str(h.Target)
		w.str(h.Capability)
		w.binds(h.Binds, true)
		w.str(h.DistinctBy)
	}
	if h := n.Hydrate; w.present(h != nil) {
		w.binds(h.Binds, true)
		w.strs(h.Fields, true)
	}
	w.view(n.View)
	w.preds(n.Filters)
	w.uint(uint64(len(n.Transforms)))
	for i := range n.Transforms {
		w.transform(&n.Transforms[i])
	}
	if pg := n.Page; w.present(pg != nil) {
		w.str(pg.Handle)
		w.int(pg.Limit)
	}
	w.bool(n.Many)
	w.ints(n.Deps, false)
	w.int(n.Line)
	w.int(n.Column)
}

func (w *wireWriter) argRef(r ArgRef) {
	w.str(r.Var)
	w.int(r.Node)
	w.str(r.Field)
}

func (w *wireWriter) bind(x Bind) {
	w.str(x.Var)
	w.str(x.Field)
}

func (w *wireWriter) binds(xs []Bind, nullable bool) {
	w.listLen(len(xs), xs == nil, nullable)
	for _, x := range xs {
		w.bind(x)
	}
}

func (w *wireWriter) preds(ps []Pred) {
	w.uint(uint64(len(ps)))
	for _, p := range ps {
		w.str(p.Field)
		w.str(p.Op)
		w.value(p.Value, 0, false)
	}
}

func (w *wireWriter) transform(t *Transform) {
	w.str(t.Kind)
	w.int(t.N)
	w.str(t.Field)
	w.bool(t.Desc)
	w.strs(t.Fields, false)
	w.preds(t.Preds)
	w.uint(uint64(len(t.Aggs)))
	for _, a := range t.Aggs {
		w.str(a.Name)
		w.str(a.Fn)
		w.str(a.Field)
	}
	w.uint(uint64(len(t.Derive)))
	for _, d := range t.Derive {
		w.str(d.Name)
		w.str(d.Field)
		w.value(d.Value, 0, false)
	}
	w.str(t.Template)
}

// view writes a view node's composition. AppendJSON encodes a view with
// encoding/json and leaves it out when that fails (a NaN value), so the
// view is encoded strictly and, on failure, written as absent.
func (w *wireWriter) view(v *View) {
	if !w.present(v != nil) {
		return
	}
	mark := len(w.b)
	if err := w.viewBody(v); err != nil {
		w.b = append(w.b[:mark-1], 0)
		if errors.Is(err, ErrWireUnencodable) {
			w.err = err
		}
	}
}

// errUnmarshalable marks a view value encoding/json refuses.
var errUnmarshalable = errors.New("plan: value encoding/json cannot encode")

func (w *wireWriter) viewBody(v *View) error {
	w.str(v.Name)
	w.strs(v.Required, false)
	w.uint(viewListLen(len(v.Steps), v.Steps == nil))
	for i := range v.Steps {
		s := &v.Steps[i]
		w.str(s.ID)
		w.str(s.Capability)
		w.str(s.Kind)
		w.str(s.Entity)
		w.strs(s.Columns, false)
		w.uint(uint64(len(s.Binds)))
		for _, x := range s.Binds {
			w.str(x.Var)
			w.str(x.Kind)
			w.str(x.From)
			w.str(x.Node)
			w.str(x.Field)
			if err := w.value(x.Value, 0, true); err != nil {
				return err
			}
			w.str(x.Template)
			w.bool(x.Filter)
		}
		w.str(s.IDFrom)
		w.strs(s.IDVars, false)
	}
	w.uint(uint64(len(v.Outputs)))
	for _, o := range v.Outputs {
		w.str(o.Field)
		w.str(o.Kind)
		w.str(o.Param)
		w.str(o.Node)
		w.str(o.Of)
		if err := w.value(o.Equals, 0, true); err != nil {
			return err
		}
		w.str(o.Template)
	}
	w.uint(uint64(len(v.Relations)))
	for _, r := range v.Relations {
		w.str(r.Relation)
		w.str(r.Kind)
		w.str(r.Node)
		w.str(r.Where)
		if err := w.value(r.Equals, 0, true); err != nil {
			return err
		}
		w.strs(r.Columns, false)
	}
	return nil
}

func viewListLen(n int, isNil bool) uint64 {
	if isNil {
		return 0
	}
	return uint64(n) + 1
}

// value writes v as AppendJSON would write it (marshal false) or as
// encoding/json would (marshal true, for views): the two differ only for
// a nil []any or map, which appendValue writes as empty and encoding/json
// as null, and for a value encoding/json refuses, which appendValue writes
// as null and the view encoder reports (errUnmarshalable).
func (w *wireWriter) value(v any, depth int, marshal bool) error {
	if depth >= MaxWireValueDepth {
		w.err = ErrWireUnencodable
		return ErrWireUnencodable
	}
	switch t := v.(type) {
	case nil:
		w.b = append(w.b, valNull)
	case string:
		w.b = append(w.b, valString)
		w.str(t)
	case bool:
		w.b = append(w.b, valFalse)
		if t {
			w.b[len(w.b)-1] = valTrue
		}
	case int:
		w.int64(int64(t))
	case int64:
		w.int64(t)
	case float64:
		if !math.IsInf(t, 0) && !math.IsNaN(t) && t == math.Trunc(t) && math.Abs(t) < 1e21 {
			// At most 21 digits and a sign: the length is one byte.
			w.b = append(w.b, valNumber, 0)
			start := len(w.b)
			w.b = strconv.AppendFloat(w.b, t, 'f', -1, 64)
			w.b[start-1] = byte(len(w.b) - start)
			return nil
		}
		return w.marshalled(v, depth, marshal)
	case json.Number:
		// encoding/json writes "" as 0 and refuses what is not a number.
		n := string(t)
		if n == "" {
			n = "0"
		}
		if !isJSONNumber(n) {
			return w.marshalled(v, depth, marshal)
		}
		w.b = append(w.b, valNumber)
		w.str(n)
	case []any:
		if t == nil && marshal {
			w.b = append(w.b, valNull)
			return nil
		}
		w.b = append(w.b, valList)
		w.uint(uint64(len(t)))
		for _, e := range t {
			if err := w.value(e, depth+1, marshal); err != nil {
				return err
			}
		}
	case map[string]any:
		if t == nil && marshal {
			w.b = append(w.b, valNull)
			return nil
		}
		w.b = append(w.b, valObject)
		w.uint(uint64(len(t)))
		for k, e := range t {
			w.str(k)
			if err := w.value(e, depth+1, marshal); err != nil {
				return err
			}
		}
	default:
		return w.marshalled(v, depth, marshal)
	}
	return nil
}

// int64 writes an integer value as its decimal text, formatted in place
// (at most 20 bytes, so its length is one uvarint byte).
func (w *wireWriter) int64(n int64) {
	w.b = append(w.b, valNumber, 0)
	start := len(w.b)
	w.b = strconv.AppendInt(w.b, n, 10)
	w.b[start-1] = byte(len(w.b) - start)
}

func (w *wireWriter) number(text []byte) {
	w.b = append(w.b, valNumber)
	w.b = binary.AppendUvarint(w.b, uint64(len(text)))
	w.b = append(w.b, text...)
}

// marshalled writes a value of a type appendValue leaves to encoding/json
// (floats with a fraction, json.Number, other Go types): what JSON would
// carry is exactly encoding/json's text decoded again, so that is what is
// written. These are rare; the planner's own values take the cases above.
func (w *wireWriter) marshalled(v any, depth int, marshal bool) error {
	j, err := json.Marshal(v)
	if err != nil {
		if marshal {
			return errUnmarshalable
		}
		w.b = append(w.b, valNull)
		return nil
	}
	if j[0] != '{' && j[0] != '[' && j[0] != '"' {
		switch string(j) {
		case "null":
			w.b = append(w.b, valNull)
		case "true", "false":
			w.value(j[0] == 't', depth, marshal)
		default:
			w.number(j)
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var back any
	if err := dec.Decode(&back); err != nil {
		if marshal {
			return errUnmarshalable
		}
		w.b = append(w.b, valNull)
		return nil
	}
	return w.value(back, depth, marshal)
}
