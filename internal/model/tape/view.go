package tape

import (
	"encoding/binary"
)

// Kind is the JSON kind of a value on a tape.
type Kind uint8

// Kinds. KindInvalid only appears on a View that is not over a validated
// tape.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// View is a read-only position on a validated tape. Reading through a view
// builds Go values only for what is asked for: a decoder that needs a few
// fields of each object never pays for the rest of the document, which
// matters in the guest where every call and loop iteration is charged.
//
// The zero View reads as null, which is what a missing member is.
type View struct {
	b   []byte
	off int
}

// Root validates that b holds exactly one well-formed value, reporting the
// same errors Decode would, and returns a view on it. Every other View
// method relies on that validation for its offsets; they still bounds-check,
// so a View over anything else yields KindInvalid or misses, never a panic.
func Root(b []byte) (View, error) {
	end, err := skip(b, 0, 0)
	if err != nil {
		return View{}, err
	}
	if end != len(b) {
		return View{}, ErrMalformed
	}
	return View{b: b}, nil
}

// Kind reports the kind of the value under v.
func (v View) Kind() Kind {
	if v.b == nil {
		return KindNull
	}
	if v.off < 0 || v.off >= len(v.b) {
		return KindInvalid
	}
	switch v.b[v.off] {
	case tagNull:
		return KindNull
	case tagTrue, tagFalse:
		return KindBool
	case tagNumber, tagInt, tagFloat:
		return KindNumber
	case tagString:
		return KindString
	case tagArray:
		return KindArray
	case tagObject:
		return KindObject
	}
	return KindInvalid
}

// Value builds the Go value under v exactly as Decode would have built it
// in place.
func (v View) Value() (any, error) {
	if v.b == nil {
		return nil, nil
	}
	r := Reader{b: v.b, off: v.off}
	return r.value(0)
}

// Get returns the member key of the object under v; as with Decode, the
// last of duplicate keys wins. ok is false when v is not an object or has
// no such member.
func (v View) Get(key string) (View, bool) {
	it := v.Members()
	var found View
	ok := false
	for {
		k, val, more := it.Next()
		if !more {
			return found, ok
		}
		if string(k) == key {
			found, ok = val, true
		}
	}
}

// Items appends the elements of the array under v to dst; nothing when v
// is not an array.
func (v View) Items(dst []View) []View {
	if v.Kind() != KindArray {
		return dst
	}
	n, off, ok := uvarint(v.b, v.off+1)
	if !ok {
		return dst
	}
	for range n {
		end, err := skip(v.b, off, 0)
		if err != nil {
			return dst
		}
		dst = append(dst, View{b: v.b, off: off})
		off = end
	}
	return dst
}

// Members iterates the members of the object under v, in tape order; it is
// empty when v is not an object.
func (v View) Members() Members {
	if v.Kind() != KindObject {
		return Members{}
	}
	n, off, ok := uvarint(v.b, v.off+1)
	if !ok {
		return Members{}
	}
	return Members{b: v.b, off: off, left: n}
}

// Members iterates an object's members.
type Members struct {
	b    []byte
	off  int
	left uint64
}

// Next returns the next member. The key aliases the tape: convert it only
// when it must outlive the tape.
func (m *Members) Next() (key []byte, val View, ok bool) {
	if m.left == 0 {
		return nil, View{}, false
	}
	kl, off, ok := uvarint(m.b, m.off)
	if !ok || kl > uint64(len(m.b)-off) {
		m.left = 0
		return nil, View{}, false
	}
	key = m.b[off : off+int(kl)]
	off += int(kl)
	end, err := skip(m.b, off, 0)
	if err != nil {
		m.left = 0
		return nil, View{}, false
	}
	m.left--
	m.off = end
	return key, View{b: m.b, off: off}, true
}

// uvarint reads a uvarint at off; the one-byte case, by far the most
// common, stays out of binary.Uvarint's loop.
func uvarint(b []byte, off int) (n uint64, next int, ok bool) {
	if off < 0 || off >= len(b) {
		return 0, off, false
	}
	if c := b[off]; c < 0x80 {
		return uint64(c), off + 1, true
	}
	n, k := binary.Uvarint(b[off:])
	if k <= 0 {
		return 0, off, false
	}
	return n, off + k, true
}

// skip returns the offset just past the value at off. It checks exactly
// what Reader.value checks, in the same order, so Root fails precisely
// when Decode would, with the same error.
func skip(b []byte, off, depth int) (int, error) {
	if off < 0 || off >= len(b) {
		return off, ErrMalformed
	}
	tag := b[off]
	off++
	switch tag {
	case tagNull, tagTrue, tagFalse:
		return off, nil
	case tagNumber, tagString:
		return skipStr(b, off)
	case tagInt:
		_, n := binary.Varint(b[off:])
		if n <= 0 {
			return off, ErrMalformed
		}
		return off + n, nil
	case tagFloat:
		if len(b)-off < 8 {
			return off, ErrMalformed
		}
		return off + 8, nil
	case tagArray, tagObject:
		if depth >= MaxDepth {
			return off, ErrTooDeep
		}
		n, next, ok := uvarint(b, off)
		if !ok || n > uint64(len(b)-next) {
			return off, ErrMalformed
		}
		off = next
		var err error
		for range n {
			if tag == tagObject {
				if off, err = skipStr(b, off); err != nil {
					return off, err
				}
			}
			if off, err = skip(b, off, depth+1); err != nil {
				return off, err
			}
		}
		return off, nil
	}
	return off, ErrMalformed
}

func skipStr(b []byte, off int) (int, error) {
	n, next, ok := uvarint(b, off)
	if !ok || n > uint64(len(b)-next) {
		return off, ErrMalformed
	}
	return next + int(n), nil
}
