package wasmbin

import (
	"bytes"
	"fmt"
)

// Header is the first 8 bytes of every module this package reads: the
// magic number and binary format version 1.
const Header = "\x00asm\x01\x00\x00\x00"

// Section is one section of a module as its framing gives it.
type Section struct {
	ID byte
	// At is the module offset of the section's id byte.
	At int
	// Payload reads the section's contents, naming module offsets
	// (Payload.Base is the offset of the payload's first byte).
	Payload Reader
}

// End is the module offset just past the section.
func (s Section) End() int { return s.Payload.Base + len(s.Payload.Buf) }

// EachSection checks module's header and calls each with every section,
// in module order, until each returns an error (which it returns as it
// is). Only the framing is read: an id byte, a U32 size and that many
// bytes; ids, their order and payloads are the caller's to check.
func EachSection(module []byte, each func(Section) error) error {
	if !bytes.HasPrefix(module, []byte(Header)) {
		return fmt.Errorf("%w: no wasm 1 header at module byte 0", ErrMalformed)
	}
	r := NewReader(module, 0)
	r.Pos = len(Header)
	for !r.Done() {
		at := r.Pos
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return err
		}
		p, err := r.Sub(size)
		if err != nil {
			return fmt.Errorf("%w: section %d at module byte %d overruns the module (%d bytes, %d left)",
				ErrMalformed, id, at, size, r.Left())
		}
		if err := each(Section{ID: id, At: at, Payload: p}); err != nil {
			return err
		}
	}
	return nil
}

// AppendSection appends a section: id, the payload's size, the payload.
// The caller makes sure the size fits 32 bits.
func AppendSection(b []byte, id byte, payload []byte) []byte {
	b = append(b, id)
	b = AppendU32(b, uint32(len(payload)))
	return append(b, payload...)
}

// Replace returns a copy of module, from which s was read, with s's
// payload replaced by payload (whose size must fit 32 bits); every other
// byte is kept.
func (s Section) Replace(module, payload []byte) []byte {
	end := s.End()
	out := make([]byte, 0, len(module)-(end-s.At)+len(payload)+6)
	out = append(out, module[:s.At]...)
	out = AppendSection(out, s.ID, payload)
	return append(out, module[end:]...)
}
