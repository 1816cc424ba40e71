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
//
// Integers and section framing are read by wasmbin, the reader wasmmeter
// uses too, so both accept the same encodings; this package owns only
// the data section's segments and their merging. The one difference is deliberate: a segment's
// offset is read with wasmbin's S32, which refuses a value outside 32
// bits, where the meter's Signed(5) only checks the length. Merge uses
// the value (it re-encodes it): truncating an out-of-range one would
// place the data elsewhere, silently. S32 follows the spec, which is
// stricter than wazero v1.12: wazero does not check the 5th byte's top
// bit, so it takes 0x80 0x80 0x80 0x80 0x40 as 0. Such a module is
// refused here and runs unmerged, as wazero reads it. A bad integer in the
// offset expression is ErrMalformed, like any other bad integer;
// ErrUnsupported is kept for well-formed shapes Merge does not rewrite.
package wasmdata

import (
	"errors"
	"fmt"
	"slices"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// Errors Merge returns; the module is then to be used as it is. Every
// position in their messages is a module offset ("at module byte N").
var (
	// ErrMalformed: the bytes are not a well-formed module as far as Merge
	// reads them (header, section framing, data section). It is
	// wasmbin.ErrMalformed itself, so the shared reader's refusals are
	// this package's.
	ErrMalformed = wasmbin.ErrMalformed
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
	var data wasmbin.Section
	found := false
	err = wasmbin.EachSection(module, func(s wasmbin.Section) error {
		switch s.ID {
		case sectionDataCount:
			return fmt.Errorf("%w: data count section at module byte %d", ErrUnsupported, s.At)
		case sectionData:
			if found {
				return fmt.Errorf("%w: two data sections (the second at module byte %d)", ErrMalformed, s.At)
			}
			found, data = true, s
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if !found {
		return nil, 0, 0, fmt.Errorf("%w: no data section", ErrUnsupported)
	}
	segs, err := segments(&data.Payload)
	if err != nil {
		return nil, 0, 0, err
	}
	merged, err := merge(segs, maxGap)
	if err != nil {
		return nil, 0, 0, err
	}
	payload := encode(merged)
	if uint64(len(payload)) > 1<<32-1 { // only with a gap of gigabytes
		return nil, 0, 0, fmt.Errorf("%w: merged data section of %d bytes", ErrUnsupported, len(payload))
	}
	return data.Replace(module, payload), len(segs), len(merged), nil
}

// segments decodes a data section's payload (r, at its start), in
// section order.
func segments(r *wasmbin.Reader) ([]segment, error) {
	count, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("data section count: %w", err)
	}
	// Every segment takes at least 2 bytes; a count beyond that is a lie,
	// and would only make a huge allocation.
	if uint64(count) > uint64(r.Left())/2 {
		return nil, fmt.Errorf("%w: %d data segments in %d bytes at module byte %d", ErrMalformed, count, r.Left(), r.Offset(r.Pos))
	}
	segs := make([]segment, 0, count)
	for i := range count {
		s, err := activeSegment(r)
		if err != nil {
			return nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		segs = append(segs, s)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: %d bytes after the last data segment at module byte %d", ErrMalformed, r.Left(), r.Offset(r.Pos))
	}
	return segs, nil
}

// activeSegment reads one segment, which must be active for memory 0 at
// an i32.const offset.
func activeSegment(r *wasmbin.Reader) (segment, error) {
	at := r.Pos
	flags, err := r.U32()
	if err != nil {
		return segment{}, err
	}
	if flags != 0 {
		return segment{}, fmt.Errorf("%w: passive or names a memory (flags %d) at module byte %d", ErrUnsupported, flags, r.Offset(at))
	}
	at = r.Pos
	if op, err := r.Byte(); err != nil {
		return segment{}, err
	} else if op != opI32Const {
		return segment{}, fmt.Errorf("%w: offset is not an i32 constant at module byte %d", ErrUnsupported, r.Offset(at))
	}
	off, err := r.S32()
	if err != nil {
		return segment{}, err
	}
	at = r.Pos
	if op, err := r.Byte(); err != nil {
		return segment{}, err
	} else if op != opEnd {
		return segment{}, fmt.Errorf("%w: offset expression goes on at module byte %d", ErrUnsupported, r.Offset(at))
	}
	size, err := r.U32()
	if err != nil {
		return segment{}, err
	}
	init, err := r.Bytes(size)
	if err != nil {
		return segment{}, fmt.Errorf("overruns the section: %w", err)
	}
	return segment{Offset: uint32(off), Init: init}, nil
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
	b = wasmbin.AppendU32(b, uint32(len(segs)))
	for _, s := range segs {
		b = append(b, 0, opI32Const)
		b = wasmbin.AppendS32(b, int32(s.Offset))
		b = append(b, opEnd)
		b = wasmbin.AppendU32(b, uint32(len(s.Init)))
		b = append(b, s.Init...)
	}
	return b
}
