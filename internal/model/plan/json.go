package plan

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends p's JSON encoding, byte for byte what encoding/json
// produces for it. The engine uses it instead of encoding/json because guest
// code pays per function call under wazero's deadline checks, and the
// reflection-driven encoder spent most of a plan's time in the guest.
func (p *Plan) AppendJSON(b []byte) []byte {
	b = append(b, `{"nodes":`...)
	b = appendList(b, p.Nodes, true, (*Node).appendJSON)
	b = append(b, `,"roots":`...)
	b = appendList(b, p.Roots, true, func(r *Root, b []byte) []byte {
		b = append(b, `{"label":`...)
		b = appendString(b, r.Label)
		b = append(b, `,"node":`...)
		b = strconv.AppendInt(b, int64(r.Node), 10)
		return append(b, '}')
	})
	b = append(b, `,"order":`...)
	b = appendInts(b, p.Order, true)
	b = append(b, `,"verdict":`...)
	b = appendString(b, p.Verdict)
	if len(p.Reasons) > 0 {
		b = append(b, `,"reasons":`...)
		b = appendStrings(b, p.Reasons)
	}
	b = append(b, `,"summary":`...)
	b = appendString(b, p.Summary)
	return append(b, '}')
}

func (n *Node) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(n.ID), 10)
	b = append(b, `,"op":`...)
	b = appendString(b, n.Op)
	b = optString(b, "kind", n.Kind)
	b = append(b, `,"effect":`...)
	b = appendString(b, n.Effect)
	b = optString(b, "label", n.Label)
	b = optString(b, "entry_id", n.EntryID)
	b = optString(b, "entity", n.Entity)
	b = optString(b, "capability", n.Capability)
	if len(n.Columns) > 0 {
		b = append(b, `,"columns":`...)
		b = appendStrings(b, n.Columns)
	}
	if len(n.Args) > 0 {
		b = append(b, `,"args":`...)
		b = appendValue(b, n.Args)
	}
	if len(n.ArgRefs) > 0 {
		b = append(b, `,"arg_refs":`...)
		b = appendList(b, n.ArgRefs, false, (*ArgRef).appendJSON)
	}
	b = append(b, `,"input":`...)
	b = strconv.AppendInt(b, int64(n.Input), 10)
	if n.ForEach != nil {
		b = append(b, `,"for_each":`...)
		b = n.ForEach.appendJSON(b)
	}
	b = n.appendComputeJSON(b)
	if n.Hop != nil {
		b = append(b, `,"hop":`...)
		b = n.Hop.appendJSON(b)
	}
	if n.Hydrate != nil {
		b = append(b, `,"hydrate":`...)
		b = n.Hydrate.appendJSON(b)
	}
	b = n.View.appendJSON(b)
	if len(n.Filters) > 0 {
		b = append(b, `,"filters":`...)
		b = appendPreds(b, n.Filters)
	}
	if len(n.Transforms) > 0 {
		b = append(b, `,"transforms":`...)
		b = appendList(b, n.Transforms, false, (*Transform).appendJSON)
	}
	if n.Page != nil {
		b = append(b, `,"page":{"handle":`...)
		b = appendString(b, n.Page.Handle)
		if n.Page.Limit != 0 {
			b = append(b, `,"limit":`...)
			b = strconv.AppendInt(b, int64(n.Page.Limit), 10)
		}
		b = append(b, '}')
	}
	b = append(b, `,"many":`...)
	b = strconv.AppendBool(b, n.Many)
	if len(n.Deps) > 0 {
		b = append(b, `,"deps":`...)
		b = appendInts(b, n.Deps, false)
	}
	if n.Line != 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(n.Line), 10)
	}
	if n.Column != 0 {
		b = append(b, `,"column":`...)
		b = strconv.AppendInt(b, int64(n.Column), 10)
	}
	return append(b, '}')
}

func (r *ArgRef) appendJSON(b []byte) []byte {
	b = append(b, `{"var":`...)
	b = appendString(b, r.Var)
	b = append(b, `,"node":`...)
	b = strconv.AppendInt(b, int64(r.Node), 10)
	b = append(b, `,"field":`...)
	b = appendString(b, r.Field)
	return append(b, '}')
}

func (h *Hop) appendJSON(b []byte) []byte {
	b = append(b, `{"relation":`...)
	b = appendString(b, h.Relation)
	b = append(b, `,"materialize":`...)
	b = appendString(b, h.Materialize)
	b = append(b, `,"target":`...)
	b = appendString(b, h.Target)
	b = append(b, `,"capability":`...)
	b = appendString(b, h.Capability)
	b = append(b, `,"binds":`...)
	b = appendList(b, h.Binds, true, (*Bind).appendJSON)
	b = optString(b, "distinct_by", h.DistinctBy)
	return append(b, '}')
}

func (h *Hydrate) appendJSON(b []byte) []byte {
	b = append(b, `{"binds":`...)
	b = appendList(b, h.Binds, true, (*Bind).appendJSON)
	b = append(b, `,"fields":`...)
	if h.Fields == nil {
		b = append(b, "null"...)
	} else {
		b = appendStrings(b, h.Fields)
	}
	return append(b, '}')
}

func (t *Transform) appendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, t.Kind)
	if t.N != 0 {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(t.N), 10)
	}
	b = optString(b, "field", t.Field)
	if t.Desc {
		b = append(b, `,"desc":true`...)
	}
	if len(t.Fields) > 0 {
		b = append(b, `,"fields":`...)
		b = appendStrings(b, t.Fields)
	}
	if len(t.Preds) > 0 {
		b = append(b, `,"preds":`...)
		b = appendPreds(b, t.Preds)
	}
	b = t.appendComputeJSON(b)
	return append(b, '}')
}

func (x *Bind) appendJSON(b []byte) []byte {
	b = append(b, `{"var":`...)
	b = appendString(b, x.Var)
	b = append(b, `,"field":`...)
	b = appendString(b, x.Field)
	return append(b, '}')
}

func appendPreds(b []byte, ps []Pred) []byte {
	return appendList(b, ps, false, func(p *Pred, b []byte) []byte {
		b = append(b, `{"field":`...)
		b = appendString(b, p.Field)
		b = append(b, `,"op":`...)
		b = appendString(b, p.Op)
		b = append(b, `,"value":`...)
		b = appendValue(b, p.Value)
		return append(b, '}')
	})
}

// appendList encodes a slice as a JSON array, or null for a nil slice when
// nullable (encoding/json's rule for fields without omitempty).
func appendList[T any](b []byte, xs []T, nullable bool, each func(*T, []byte) []byte) []byte {
	if xs == nil && nullable {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(&xs[i], b)
	}
	return append(b, ']')
}

func optString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, v)
}

func appendInts(b []byte, xs []int, nullable bool) []byte {
	return appendList(b, xs, nullable, func(x *int, b []byte) []byte { return strconv.AppendInt(b, int64(*x), 10) })
}

func appendStrings(b []byte, ss []string) []byte {
	return appendList(b, ss, false, func(s *string, b []byte) []byte { return appendString(b, *s) })
}

// appendValue encodes the literal values a planner produces; anything else
// falls back to encoding/json.
func appendValue(b []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, t)
	case bool:
		return strconv.AppendBool(b, t)
	case int64:
		return strconv.AppendInt(b, t, 10)
	case int:
		return strconv.AppendInt(b, int64(t), 10)
	case float64:
		if !math.IsInf(t, 0) && !math.IsNaN(t) && t == math.Trunc(t) && math.Abs(t) < 1e21 {
			return strconv.AppendFloat(b, t, 'f', -1, 64)
		}
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendValue(b, t[k])
		}
		return append(b, '}')
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s exactly as encoding/json does (HTML-safe escaping,
// invalid UTF-8 as U+FFFD, U+2028/U+2029 escaped).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
