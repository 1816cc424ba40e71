package oldbulk

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// Immediate shapes of the single-byte opcodes of WebAssembly 2.0 without
// SIMD (what Go's wasm backend writes, and more). Zero is unknown: the
// decoder refuses it with ErrUnsupported, and the module is kept as it is.
const (
	immNone = iota + 1
	immBlock
	immU32
	immU32x2
	immBrTable
	immMemarg
	immI32
	immI64
	immF32
	immF64
	immSelectT
	immRefNull
	immMisc
)

var opImm = func() [256]uint8 {
	var t [256]uint8
	for _, op := range []byte{0x00, 0x01, 0x05, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1} {
		t[op] = immNone
	}
	t[0x02], t[0x03], t[0x04] = immBlock, immBlock, immBlock
	t[0x0c], t[0x0d], t[0x10], t[0xd2] = immU32, immU32, immU32, immU32
	t[0x0e] = immBrTable
	t[0x11] = immU32x2
	t[0x1c] = immSelectT
	for op := 0x20; op <= 0x26; op++ { // locals, globals, table.get/set
		t[op] = immU32
	}
	for op := 0x28; op <= 0x3e; op++ {
		t[op] = immMemarg
	}
	t[0x3f], t[0x40] = immU32, immU32
	t[0x41], t[0x42], t[0x43], t[0x44] = immI32, immI64, immF32, immF64
	for op := 0x45; op <= 0xc4; op++ {
		t[op] = immNone
	}
	t[0xd0] = immRefNull
	t[prefixMisc] = immMisc
	return t
}()

// skipInst reads one instruction and returns its opcode and, for 0xFC,
// its sub-opcode.
func skipInst(r *wasmbin.Reader) (op byte, sub uint32, err error) {
	at := r.Pos
	if op, err = r.Byte(); err != nil {
		return 0, 0, err
	}
	switch opImm[op] {
	case immNone:
	case immBlock:
		if p := r.Pos; p < len(r.Buf) && (r.Buf[p] == 0x40 || r.Buf[p] >= 0x6f && r.Buf[p] <= 0x7f) {
			r.Pos++
		} else {
			var v int64
			if v, err = r.Signed(5); err == nil && v < 0 {
				err = fmt.Errorf("%w: block type %d at module byte %d", ErrUnsupported, v, r.Offset(at))
			}
		}
	case immU32:
		_, err = r.U32()
	case immU32x2:
		if _, err = r.U32(); err == nil {
			_, err = r.U32()
		}
	case immBrTable:
		var n uint32
		if n, err = r.U32(); err == nil {
			if uint64(n) >= uint64(r.Left()) {
				return 0, 0, fmt.Errorf("%w: br_table of %d labels at module byte %d", ErrMalformed, n, r.Offset(at))
			}
			for i := uint32(0); i <= n && err == nil; i++ {
				_, err = r.U32()
			}
		}
	case immMemarg:
		var align uint32
		if align, err = r.U32(); err == nil {
			if align&0x40 != 0 {
				return 0, 0, fmt.Errorf("%w: memarg with a memory index at module byte %d", ErrUnsupported, r.Offset(at))
			}
			_, err = r.U32()
		}
	case immI32:
		_, err = r.Signed(5)
	case immI64:
		_, err = r.Signed(10)
	case immF32:
		_, err = r.Bytes(4)
	case immF64:
		_, err = r.Bytes(8)
	case immSelectT:
		var ts []byte
		if ts, err = r.Bytes(2); err == nil && (ts[0] != 1 || ts[1] < 0x6f || ts[1] > 0x7f) {
			err = fmt.Errorf("%w: select type at module byte %d", ErrUnsupported, r.Offset(at))
		}
	case immRefNull:
		var b byte
		if b, err = r.Byte(); err == nil && b != 0x70 && b != 0x6f {
			err = fmt.Errorf("%w: ref.null type %#x at module byte %d", ErrUnsupported, b, r.Offset(at))
		}
	case immMisc:
		sub, err = skipMisc(r, at)
	default:
		err = fmt.Errorf("%w: opcode %#x at module byte %d", ErrUnsupported, op, r.Offset(at))
	}
	return op, sub, err
}

func skipMisc(r *wasmbin.Reader, at int) (uint32, error) {
	sub, err := r.U32()
	if err != nil {
		return 0, err
	}
	imms := 0
	switch {
	case sub <= 0x07: // saturating truncations
	case sub == 0x08 || sub == 0x0a || sub == 0x0c || sub == 0x0e: // memory.init, memory.copy, table.init, table.copy
		imms = 2
	case sub == 0x09 || sub == 0x0b || sub == 0x0d || sub >= 0x0f && sub <= 0x11:
		imms = 1
	default:
		return 0, fmt.Errorf("%w: 0xfc %d at module byte %d", ErrUnsupported, sub, r.Offset(at))
	}
	for range imms {
		if _, err := r.U32(); err != nil {
			return 0, err
		}
	}
	return sub, nil
}
