package oldmeter

import (
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// Rewrites of the sections that name functions outside the code.

func (w *rewriter) exports(r *reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n)
	for range n {
		name, err := r.Name()
		if err != nil {
			return nil, err
		}
		kind, err := r.Byte()
		if err != nil {
			return nil, err
		}
		idx, err := r.U32()
		if err != nil {
			return nil, err
		}
		if kind == 0 {
			idx = w.fn(idx)
		}
		out = wasmbin.AppendName(out, name)
		out = append(out, kind)
		out = wasmbin.AppendU32(out, idx)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the exports at module byte %d", ErrMalformed, r.Offset(r.Pos))
	}
	return out, nil
}

// elements rewrites every element segment encoding (flags 0 to 7).
func (w *rewriter) elements(r *reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n)
	for range n {
		at := r.Pos
		flags, err := r.U32()
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, fmt.Errorf("%w: element segment flags %d at module byte %d", ErrMalformed, flags, r.Offset(at))
		}
		out = wasmbin.AppendU32(out, flags)
		if flags&2 != 0 && flags&1 == 0 { // explicit table index (2, 6)
			t, err := r.U32()
			if err != nil {
				return nil, err
			}
			out = wasmbin.AppendU32(out, t)
		}
		if flags&1 == 0 { // active: offset expression
			if out, err = w.constExpr(r, out); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 { // element kind (1-3) or reference type (5-7)
			k, err := elemKind(r, flags)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		count, err := r.U32()
		if err != nil {
			return nil, err
		}
		if uint64(count) > uint64(r.Left()) {
			return nil, fmt.Errorf("%w: %d elements in %d bytes at module byte %d", ErrMalformed, count, r.Left(), r.Offset(r.Pos))
		}
		out = wasmbin.AppendU32(out, count)
		for range count {
			if flags&4 != 0 {
				if out, err = w.constExpr(r, out); err != nil {
					return nil, err
				}
				continue
			}
			f, err := r.U32()
			if err != nil {
				return nil, err
			}
			if f < w.importedFuncs {
				return nil, fmt.Errorf("%w: imported function %d in an element segment", ErrUnsupported, f)
			}
			out = wasmbin.AppendU32(out, w.fn(f))
		}
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the element segments at module byte %d", ErrMalformed, r.Offset(r.Pos))
	}
	return out, nil
}

// elemKind reads the element kind (flags 1-3: 0x00, funcref) or the
// reference type (flags 5-7) of an element segment. The long forms (0x63,
// 0x64 and a heap type) are refused: the meter and wazero would read a
// different number of bytes.
func elemKind(r *reader, flags uint32) (byte, error) {
	if flags&4 != 0 {
		return refType(r)
	}
	at := r.Pos
	k, err := r.Byte()
	if err == nil && k != 0 {
		err = fmt.Errorf("%w: element kind %#x at module byte %d", ErrUnsupported, k, r.Offset(at))
	}
	return k, err
}

// custom shifts the name section's function indices (module, function
// and local names are kept; other name subsections dropped) and drops
// DWARF, whose code offsets no longer hold.
func (w *rewriter) custom(r *reader) ([]byte, bool, error) {
	p := r.Buf
	name, err := r.Name()
	if err != nil {
		return nil, false, err
	}
	switch {
	case strings.HasPrefix(name, ".debug_"):
		return nil, false, nil
	case name != "name":
		return p, true, nil
	}
	out := wasmbin.AppendName(nil, name)
	for !r.Done() {
		id, err := r.Byte()
		if err != nil {
			return nil, false, err
		}
		size, err := r.U32()
		if err != nil {
			return nil, false, err
		}
		sub, err := r.sub(size)
		if err != nil {
			return nil, false, err
		}
		var np []byte
		switch id {
		case 0:
			np = sub.Buf
		case 1, 2:
			if np, err = w.nameMap(&sub, id == 2); err != nil {
				return nil, false, fmt.Errorf("%w: name section: %v", ErrUnsupported, err)
			}
		default:
			continue
		}
		out = append(out, id)
		out = wasmbin.AppendU32(out, uint32(len(np)))
		out = append(out, np...)
	}
	return out, true, nil
}

// nameMap shifts the function indices of a function name map, or of a
// local name map (indirect: each entry holds a map of locals, copied).
func (w *rewriter) nameMap(r *reader, indirect bool) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n)
	for range n {
		f, err := r.U32()
		if err != nil {
			return nil, err
		}
		out = wasmbin.AppendU32(out, w.fn(f))
		start := r.Pos
		if !indirect {
			if _, err := r.Name(); err != nil {
				return nil, err
			}
		} else {
			locals, err := r.U32()
			if err != nil {
				return nil, err
			}
			for range locals {
				if _, err := r.U32(); err != nil {
					return nil, err
				}
				if _, err := r.Name(); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, r.Buf[start:r.Pos]...)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after a name map at module byte %d", ErrMalformed, r.Offset(r.Pos))
	}
	return out, nil
}
