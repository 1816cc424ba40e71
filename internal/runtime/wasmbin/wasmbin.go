// Package wasmbin owns the reading and writing of the WebAssembly binary
// format that the host's module readers and rewriters (wasmmeter and its
// Screen, wasmbulk, wasmdata) share:
//   - Reader and the Append functions: integers (unsigned and signed
//     LEB128), names and byte runs;
//   - EachSection, Section.Replace and AppendSection: the module header
//     and section framing, and splicing a rewritten section in;
//   - Decoder and Inst: the one instruction decoder, every opcode's
//     immediates (0xFC and 0xFD prefixes included), with the few readings
//     its users differ on (which errors, SIMD, tail calls) as its fields.
//
// It is the one place that decides which encodings are accepted and how
// long each instruction is, so the meter, Screen, the bulk-memory inliner
// and the data-segment merger cannot drift apart. What each section's
// payload means is left to its users.
//
// Input is hostile: every read reports ErrMalformed, wrapped with what was
// wanted and the module byte where it went wrong, and never panics or
// reads past its buffer. A Reader carries the module offset of its buffer
// (Base), so a reader over one section or function body still names
// absolute module offsets ("at module byte N"), which a vendor can find
// with a hex dump.
//
// What is accepted (the WebAssembly 2.0 binary format's rules, which
// wazero v1.12 applies too, except where S32 says otherwise):
//   - U32: an unsigned LEB128 of at most 5 bytes whose value fits 32 bits
//     (a 5th byte above 0x0f is an overflow, a 6th byte is too long);
//     non-minimal encodings within 5 bytes (0x80 0x00 for 0) are valid.
//   - Signed(n): a signed LEB128 of at most n bytes (5 for s32 and s33,
//     10 for s64). Only the length is checked, not that the value fits
//     the type: the meter uses it to step over immediates (which wazero
//     reads in as many bytes) and leaves the range to wazero's validator.
//   - S32: a signed LEB128 of at most 5 bytes whose value fits 32 bits,
//     for a reader that uses the value (wasmdata re-encodes offsets). This
//     is the spec's rule; wazero v1.12 does not check the 5th byte's top
//     bit (0x80 0x80 0x80 0x80 0x40 is 0 to it), so S32 refuses a little
//     that wazero runs, never the other way round.
//   - Name: a U32 length and that many bytes. UTF-8 is not checked here:
//     wazero checks it when it decodes the module.
package wasmbin

import (
	"errors"
	"fmt"
)

// ErrMalformed is every refusal of a Reader: the bytes are not an
// encoding the binary format allows (cut short, over-long, overflowing).
// wasmmeter and wasmdata use this very value as their ErrMalformed.
var ErrMalformed = errors.New("malformed wasm module")

// Reader reads Buf front to back from Pos. Base is the module offset of
// Buf[0] (0 when Buf is the whole module); it only affects messages.
// The fields are exported because rewriters slice Buf by position and
// step back to re-read; a Reader never reads outside Buf whatever they
// hold, as long as 0 <= Pos <= len(Buf).
type Reader struct {
	Buf  []byte
	Pos  int
	Base int
}

// NewReader returns a Reader over b, whose first byte is at module offset
// base.
func NewReader(b []byte, base int) Reader { return Reader{Buf: b, Base: base} }

// Offset is the module offset of Buf[pos].
func (r *Reader) Offset(pos int) int { return r.Base + pos }

// Done reports whether every byte has been read.
func (r *Reader) Done() bool { return r.Pos >= len(r.Buf) }

// Left is how many bytes are still to be read.
func (r *Reader) Left() int { return len(r.Buf) - r.Pos }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if p := r.Pos; p < len(r.Buf) {
		r.Pos = p + 1
		return r.Buf[p], nil
	}
	return 0, r.errEnd()
}

// Bytes reads the next n bytes; the slice aliases Buf.
func (r *Reader) Bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.Buf)-r.Pos) {
		return nil, r.errShort(n)
	}
	s := r.Buf[r.Pos : r.Pos+int(n)]
	r.Pos += int(n)
	return s, nil
}

// Sub reads the next n bytes as a Reader of their own (a section's
// payload, a function body), which keeps naming module offsets.
func (r *Reader) Sub(n uint32) (Reader, error) {
	at := r.Pos
	b, err := r.Bytes(n)
	if err != nil {
		return Reader{}, err
	}
	return Reader{Buf: b, Base: r.Base + at}, nil
}

// U32 reads an unsigned LEB128 of at most 5 bytes whose value fits 32
// bits.
func (r *Reader) U32() (uint32, error) {
	// Most integers in a module are one byte: that path inlines.
	if p := r.Pos; p < len(r.Buf) && r.Buf[p] < 0x80 {
		r.Pos = p + 1
		return uint32(r.Buf[p]), nil
	}
	return r.u32()
}

func (r *Reader) u32() (uint32, error) {
	at := r.Pos
	var x uint64
	for i := 0; i < 5; i++ {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if x > 1<<32-1 {
				return 0, fmt.Errorf("%w: u32 overflows 32 bits at module byte %d", ErrMalformed, r.Offset(at))
			}
			return uint32(x), nil
		}
	}
	return 0, fmt.Errorf("%w: u32 longer than 5 bytes at module byte %d", ErrMalformed, r.Offset(at))
}

// Signed reads a signed LEB128 of at most maxBytes bytes (5 for s32 and
// s33, 10 for s64; at most 10) and returns its value, sign-extended. The
// value is not checked against the type's range: see the package
// comment.
func (r *Reader) Signed(maxBytes int) (int64, error) {
	at := r.Pos
	var x int64
	for i := 0; i < maxBytes; i++ {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		if i < 9 {
			x |= int64(c&0x7f) << (7 * i)
		} else {
			x |= int64(c&0x01) << 63
		}
		if c < 0x80 {
			if shift := 7 * (i + 1); shift < 64 && c&0x40 != 0 {
				x |= -1 << shift
			}
			return x, nil
		}
	}
	return 0, fmt.Errorf("%w: signed LEB128 longer than %d bytes at module byte %d", ErrMalformed, maxBytes, r.Offset(at))
}

// S32 reads a signed LEB128 of at most 5 bytes whose value fits 32 bits
// (the 5th byte's unused bits are the sign's), for readers that use the
// value.
func (r *Reader) S32() (int32, error) {
	at := r.Pos
	x, err := r.Signed(5)
	if err != nil {
		return 0, err
	}
	if x < -1<<31 || x > 1<<31-1 {
		return 0, fmt.Errorf("%w: s32 overflows 32 bits at module byte %d", ErrMalformed, r.Offset(at))
	}
	return int32(x), nil
}

// Name reads a name: a U32 length and that many bytes.
func (r *Reader) Name() (string, error) {
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	b, err := r.Bytes(n)
	return string(b), err
}

// The error paths are out of line, so Byte and Bytes stay small enough
// to inline into the decoders' loops.

func (r *Reader) errEnd() error {
	return fmt.Errorf("%w: unexpected end at module byte %d", ErrMalformed, r.Offset(r.Pos))
}

func (r *Reader) errShort(n uint32) error {
	return fmt.Errorf("%w: %d bytes wanted at module byte %d, %d left", ErrMalformed, n, r.Offset(r.Pos), len(r.Buf)-r.Pos)
}

// AppendU32 appends v as a minimal unsigned LEB128.
func AppendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendS32 appends v as a minimal signed LEB128.
func AppendS32(b []byte, v int32) []byte { return AppendS64(b, int64(v)) }

// AppendS64 appends v as a minimal signed LEB128.
func AppendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendName appends s as a name: its length, then its bytes.
func AppendName(b []byte, s string) []byte {
	return append(AppendU32(b, uint32(len(s))), s...)
}
