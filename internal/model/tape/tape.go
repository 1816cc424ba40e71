// Package tape is the compact binary form of JSON-like values that crosses
// the host–guest boundary on hot paths: response bodies the host has already
// tokenised, and decoded rows coming back.
//
// It exists because guest code pays for every function call and loop
// iteration under wazero's deadline checks, and encoding/json spends several
// calls per input byte. Reading a tape costs a few calls per value instead:
// the host (native, fast) does the byte-level JSON scanning once, and the
// guest only builds values. JSON semantics are kept exactly: numbers travel
// as their original text (json.Number on the guest side), objects keep every
// key in order, and duplicate keys resolve as encoding/json does (last wins).
//
// Encoding: one tag byte per value, then
//
//	'z' null · 't' true · 'f' false
//	'n' number: uvarint length, JSON number text
//	'i' int64: zig-zag varint      'd' float64: 8 bytes little-endian
//	's' string: uvarint length, UTF-8 bytes
//	'a' array: uvarint count, values
//	'o' object: uvarint count, then per member a uvarint-length key and a value
package tape

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Tags.
const (
	tagNull   = 'z'
	tagTrue   = 't'
	tagFalse  = 'f'
	tagNumber = 'n'
	tagInt    = 'i'
	tagFloat  = 'd'
	tagString = 's'
	tagArray  = 'a'
	tagObject = 'o'
)

// MaxDepth bounds nesting on both sides.
const MaxDepth = 128

// Errors.
var (
	ErrMalformed = errors.New("tape: malformed")
	ErrTooDeep   = fmt.Errorf("tape: nesting deeper than %d", MaxDepth)
)

// AppendJSON appends the tape of the single JSON document in body. It
// rejects invalid JSON, nesting deeper than MaxDepth and trailing data, so
// a guest reading the result never sees a document encoding/json would not
// have accepted.
func AppendJSON(dst, body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	start := len(dst)
	out, err := appendToken(dst, dec, 0)
	if err != nil {
		return dst[:start], err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return dst[:start], errors.New("tape: trailing data after the JSON document")
	}
	return out, nil
}

func appendToken(dst []byte, dec *json.Decoder, depth int) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return dst, fmt.Errorf("tape: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= MaxDepth {
			return dst, ErrTooDeep
		}
		switch t {
		case '[':
			var items [][]byte
			for dec.More() {
				item, err := appendToken(nil, dec, depth+1)
				if err != nil {
					return dst, err
				}
				items = append(items, item)
			}
			if _, err := dec.Token(); err != nil { // ]
				return dst, fmt.Errorf("tape: %w", err)
			}
			dst = append(dst, tagArray)
			dst = binary.AppendUvarint(dst, uint64(len(items)))
			for _, it := range items {
				dst = append(dst, it...)
			}
			return dst, nil
		case '{':
			var members []byte
			n := 0
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return dst, fmt.Errorf("tape: %w", err)
				}
				key, ok := kt.(string)
				if !ok {
					return dst, ErrMalformed
				}
				members = appendString(members, key)
				if members, err = appendToken(members, dec, depth+1); err != nil {
					return dst, err
				}
				n++
			}
			if _, err := dec.Token(); err != nil { // }
				return dst, fmt.Errorf("tape: %w", err)
			}
			dst = append(dst, tagObject)
			dst = binary.AppendUvarint(dst, uint64(n))
			return append(dst, members...), nil
		}
		return dst, ErrMalformed
	case nil:
		return append(dst, tagNull), nil
	case bool:
		if t {
			return append(dst, tagTrue), nil
		}
		return append(dst, tagFalse), nil
	case json.Number:
		dst = append(dst, tagNumber)
		return appendString(dst, string(t)), nil
	case string:
		dst = append(dst, tagString)
		return appendString(dst, t), nil
	}
	return dst, ErrMalformed
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Append appends the tape of v: nil, bool, string, json.Number, int, int64,
// float64, []any, []string and map[string]any (keys sorted, so output is
// deterministic). Other types are encoded as their JSON encoding's value.
func Append(dst []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, tagNull)
	case bool:
		if t {
			return append(dst, tagTrue)
		}
		return append(dst, tagFalse)
	case string:
		dst = append(dst, tagString)
		return appendString(dst, t)
	case json.Number:
		dst = append(dst, tagNumber)
		return appendString(dst, string(t))
	case int64:
		dst = append(dst, tagInt)
		return binary.AppendVarint(dst, t)
	case int:
		dst = append(dst, tagInt)
		return binary.AppendVarint(dst, int64(t))
	case float64:
		dst = append(dst, tagFloat)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(t))
	case []any:
		dst = append(dst, tagArray)
		dst = binary.AppendUvarint(dst, uint64(len(t)))
		for _, e := range t {
			dst = Append(dst, e)
		}
		return dst
	case []string:
		dst = append(dst, tagArray)
		dst = binary.AppendUvarint(dst, uint64(len(t)))
		for _, e := range t {
			dst = append(dst, tagString)
			dst = appendString(dst, e)
		}
		return dst
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, tagObject)
		dst = binary.AppendUvarint(dst, uint64(len(keys)))
		for _, k := range keys {
			dst = appendString(dst, k)
			dst = Append(dst, t[k])
		}
		return dst
	}
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, tagNull)
	}
	out, err := AppendJSON(dst, b)
	if err != nil {
		return append(dst, tagNull)
	}
	return out
}

// Reader decodes values from a tape.
type Reader struct {
	b   []byte
	off int
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Done reports whether every byte was consumed.
func (r *Reader) Done() bool { return r.off == len(r.b) }

// Value reads one value: objects become map[string]any, arrays []any,
// numbers json.Number (tag n), int64 (tag i) or float64 (tag d).
func (r *Reader) Value() (any, error) { return r.value(0) }

func (r *Reader) value(depth int) (any, error) {
	if r.off >= len(r.b) {
		return nil, ErrMalformed
	}
	tag := r.b[r.off]
	r.off++
	switch tag {
	case tagNull:
		return nil, nil
	case tagTrue:
		return true, nil
	case tagFalse:
		return false, nil
	case tagNumber:
		s, err := r.str()
		return json.Number(s), err
	case tagString:
		return r.str()
	case tagInt:
		v, n := binary.Varint(r.b[r.off:])
		if n <= 0 {
			return nil, ErrMalformed
		}
		r.off += n
		return v, nil
	case tagFloat:
		if len(r.b)-r.off < 8 {
			return nil, ErrMalformed
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.off:]))
		r.off += 8
		return v, nil
	case tagArray:
		if depth >= MaxDepth {
			return nil, ErrTooDeep
		}
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = r.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case tagObject:
		if depth >= MaxDepth {
			return nil, ErrTooDeep
		}
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, n)
		for range n {
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			if out[k], err = r.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, ErrMalformed
}

// count reads a container length; every element takes at least one byte,
// so a count larger than what is left is malformed (and never allocated).
func (r *Reader) count() (int, error) {
	n, k := binary.Uvarint(r.b[r.off:])
	if k <= 0 || n > uint64(len(r.b)-r.off-k) {
		return 0, ErrMalformed
	}
	r.off += k
	return int(n), nil
}

func (r *Reader) str() (string, error) {
	n, k := binary.Uvarint(r.b[r.off:])
	if k <= 0 || n > uint64(len(r.b)-r.off-k) {
		return "", ErrMalformed
	}
	r.off += k
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s, nil
}

// Decode reads exactly one value from b.
func Decode(b []byte) (any, error) {
	r := NewReader(b)
	v, err := r.Value()
	if err != nil {
		return nil, err
	}
	if !r.Done() {
		return nil, ErrMalformed
	}
	return v, nil
}

// AppendTable appends a table: its columns, then its rows, each row exactly
// len(columns) values.
func AppendTable(dst []byte, columns []string, rows [][]any) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(columns)))
	for _, c := range columns {
		dst = appendString(dst, c)
	}
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for _, row := range rows {
		for i := range columns {
			var v any
			if i < len(row) {
				v = row[i]
			}
			dst = Append(dst, v)
		}
	}
	return dst
}

// DecodeTable reads a table written by AppendTable. Numbers written as
// JSON text come back as int64 when they are integers in range, else as
// the json.Number they were written as.
func DecodeTable(b []byte) (columns []string, rows [][]any, err error) {
	r := NewReader(b)
	nc, err := r.count()
	if err != nil {
		return nil, nil, err
	}
	columns = make([]string, nc)
	for i := range columns {
		if columns[i], err = r.str(); err != nil {
			return nil, nil, err
		}
	}
	nr, err := r.count()
	if err != nil {
		return nil, nil, err
	}
	if nc == 0 && nr > 0 {
		return nil, nil, ErrMalformed
	}
	rows = make([][]any, nr)
	for i := range rows {
		row := make([]any, nc)
		for j := range row {
			v, err := r.value(0)
			if err != nil {
				return nil, nil, err
			}
			row[j] = plainNumber(v)
		}
		rows[i] = row
	}
	if !r.Done() {
		return nil, nil, ErrMalformed
	}
	return columns, rows, nil
}

// plainNumber turns json.Number leaves that fit an int64 into int64.
// Others stay json.Number: the decoder writes a number as text only when
// it carries it exactly (an integer beyond int64, see
// internal/model/extract/number.go), and a float64 would round it.
func plainNumber(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = plainNumber(e)
		}
	case map[string]any:
		for k, e := range t {
			t[k] = plainNumber(e)
		}
	}
	return v
}
