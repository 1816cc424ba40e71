// Package wasmdata merges a Wasm module's active data segments.
//
// Go's wasm linker splits the data section wherever a few zero bytes
// separate two values: the standard engine has some 55,000 segments of
// 26 bytes on average. wazero keeps one slice header per segment in every
// instance (1.3 MiB per engine instance, for as long as the instance
// lives) and copies them one by one at each instantiation. Merging
// segments that only a short run of zeros separates gives the same initial
// memory (a fresh memory is zero) from a few dozen segments.
//
// Only the plain shape is rewritten: one data section of active segments
// for memory 0 whose offsets are i32 constants and which do not overlap,
// and no data count section (so no instruction names a segment by index).
// Anything else is ErrUnsupported and the caller keeps the original bytes.
package wasmdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Errors Merge returns; the module is then to be used as it is.
var (
	// ErrMalformed: the bytes are not a well-formed module as far as Merge
	// reads them (header, section framing, data section).
	ErrMalformed = errors.New("malformed wasm module")
	// ErrUnsupported: a well-formed module whose data section Merge does
	// not rewrite (passive or non-constant segments, overlaps, a data count
	// section).
	ErrUnsupported = errors.New("data section not mergeable")
)

const (
	sectionData      = 11
	sectionDataCount = 12
	opI32Const       = 0x41
	opEnd            = 0x0b
)

var header = []byte{0, 'a', 's', 'm', 1, 0, 0, 0}

// segment is one active data segment of memory 0.
type segment struct {
	Offset uint32
	Init   []byte
}

// Merge returns module with every run of data segments separated by at
// most maxGap zero bytes merged into one segment, and how many segments
// it had before and after. A maxGap below a page keeps every merged gap
// inside pages the data already touches, so an instance's resident memory
// does not grow.
func Merge(module []byte, maxGap int) (out []byte, before, after int, err error) {
	if !bytes.HasPrefix(module, header) {
		return nil, 0, 0, fmt.Errorf("%w: no wasm 1 header", ErrMalformed)
	}
	var dataAt, dataEnd, payloadAt int // the data section: id byte, end, payload start
	found := false
	for pos := len(header); pos < len(module); {
		id := module[pos]
		size, n := uvarint32(module[pos+1:])
		if n == 0 || uint64(pos+1+n)+uint64(size) > uint64(len(module)) {
			return nil, 0, 0, fmt.Errorf("%w: section %d at %d overruns the module", ErrMalformed, id, pos)
		}
		end := pos + 1 + n + int(size)
		switch id {
		case sectionDataCount:
			return nil, 0, 0, fmt.Errorf("%w: data count section", ErrUnsupported)
		case sectionData:
			if found {
				return nil, 0, 0, fmt.Errorf("%w: two data sections", ErrMalformed)
			}
			found, dataAt, dataEnd, payloadAt = true, pos, end, pos+1+n
		}
		pos = end
	}
	if !found {
		return nil, 0, 0, fmt.Errorf("%w: no data section", ErrUnsupported)
	}
	segs, err := segments(module[payloadAt:dataEnd])
	if err != nil {
		return nil, 0, 0, err
	}
	merged, err := merge(segs, maxGap)
	if err != nil {
		return nil, 0, 0, err
	}
	payload := encode(merged)
	out = make([]byte, 0, len(module)-(dataEnd-dataAt)+len(payload)+6)
	out = append(out, module[:dataAt]...)
	out = append(out, sectionData)
	out = binary.AppendUvarint(out, uint64(len(payload)))
	out = append(out, payload...)
	out = append(out, module[dataEnd:]...)
	return out, len(segs), len(merged), nil
}

// segments decodes a data section's payload, in section order.
func segments(payload []byte) ([]segment, error) {
	count, n := uvarint32(payload)
	if n == 0 {
		return nil, fmt.Errorf("%w: data section count", ErrMalformed)
	}
	p := payload[n:]
	// Every segment takes at least 2 bytes; a count beyond that is a lie,
	// and would only make a huge allocation.
	if uint64(count) > uint64(len(p))/2 {
		return nil, fmt.Errorf("%w: %d data segments in %d bytes", ErrMalformed, count, len(p))
	}
	segs := make([]segment, 0, count)
	for i := range count {
		flags, n := uvarint32(p)
		if n == 0 {
			return nil, fmt.Errorf("%w: data segment %d flags", ErrMalformed, i)
		}
		if flags != 0 {
			return nil, fmt.Errorf("%w: data segment %d is passive or names a memory (flags %d)", ErrUnsupported, i, flags)
		}
		p = p[n:]
		if len(p) == 0 || p[0] != opI32Const {
			return nil, fmt.Errorf("%w: data segment %d offset is not an i32 constant", ErrUnsupported, i)
		}
		off, n := varint32(p[1:])
		if n == 0 || len(p) < 1+n+1 || p[1+n] != opEnd {
			return nil, fmt.Errorf("%w: data segment %d offset expression", ErrUnsupported, i)
		}
		p = p[1+n+1:]
		size, n := uvarint32(p)
		if n == 0 || uint64(size) > uint64(len(p)-n) {
			return nil, fmt.Errorf("%w: data segment %d overruns the section", ErrMalformed, i)
		}
		segs = append(segs, segment{Offset: uint32(off), Init: p[n : n+int(size)]})
		p = p[n+int(size):]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last data segment", ErrMalformed, len(p))
	}
	return segs, nil
}

// merge sorts segments by offset (their order does not matter when none
// overlap) and joins neighbours at most maxGap bytes apart.
func merge(segs []segment, maxGap int) ([]segment, error) {
	sorted := slices.Clone(segs)
	slices.SortStableFunc(sorted, func(a, b segment) int { return int(int64(a.Offset) - int64(b.Offset)) })
	var out []segment
	var end uint64 // end of the last merged segment
	for i, s := range sorted {
		start := uint64(s.Offset)
		if start+uint64(len(s.Init)) > 1<<32 {
			return nil, fmt.Errorf("%w: data segment at %#x runs past 4 GiB", ErrUnsupported, s.Offset)
		}
		if i > 0 && start < end {
			return nil, fmt.Errorf("%w: data segments overlap at %#x", ErrUnsupported, s.Offset)
		}
		if i > 0 && start-end <= uint64(maxGap) {
			last := &out[len(out)-1]
			last.Init = append(last.Init, make([]byte, start-end)...)
			last.Init = append(last.Init, s.Init...)
		} else {
			out = append(out, segment{Offset: s.Offset, Init: slices.Clone(s.Init)})
		}
		end = start + uint64(len(s.Init))
	}
	return out, nil
}

func encode(segs []segment) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, opI32Const)
		b = appendVarint32(b, int32(s.Offset))
		b = append(b, opEnd)
		b = binary.AppendUvarint(b, uint64(len(s.Init)))
		b = append(b, s.Init...)
	}
	return b
}

// uvarint32 reads an unsigned LEB128 of at most 5 bytes; n is 0 when the
// bytes are not one.
func uvarint32(b []byte) (v uint32, n int) {
	var x uint64
	for i := 0; i < 5 && i < len(b); i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if x > 1<<32-1 {
				return 0, 0
			}
			return uint32(x), i + 1
		}
	}
	return 0, 0
}

// varint32 reads a signed LEB128 of at most 5 bytes; n is 0 when the bytes
// are not one.
func varint32(b []byte) (v int32, n int) {
	var x int64
	for i := 0; i < 5 && i < len(b); i++ {
		x |= int64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			shift := 7 * (i + 1)
			if shift < 64 && b[i]&0x40 != 0 {
				x |= -1 << shift
			}
			if x < -1<<31 || x > 1<<31-1 {
				return 0, 0
			}
			return int32(x), i + 1
		}
	}
	return 0, 0
}

func appendVarint32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if x == 0 && c&0x40 == 0 || x == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
