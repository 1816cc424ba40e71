package oldbulk

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// bodyRewriter rewrites one function body at a time; its buffer is
// reused between bodies.
type bodyRewriter struct {
	code []byte
}

// recent is one instruction just copied to the output: where it starts
// there, and its value if it is a minimally encoded i32.const.
type recent struct {
	at      int
	isConst bool
	value   int32
}

// rewrite returns body (r, at its start) with its sites inlined, and
// whether there were any; a function of nparams parameters.
func (w *bodyRewriter) rewrite(r *wasmbin.Reader, nparams, maxLen uint32, st *Stats) ([]byte, bool, error) {
	groups, err := r.U32()
	if err != nil {
		return nil, false, err
	}
	declsAt := r.Pos
	total := uint64(nparams)
	for range groups {
		c, err := r.U32()
		if err != nil {
			return nil, false, err
		}
		at := r.Pos
		t, err := r.Byte()
		if err != nil {
			return nil, false, err
		}
		if t < 0x6f || t > 0x7f {
			return nil, false, fmt.Errorf("%w: local type %#x at module byte %d", ErrUnsupported, t, r.Offset(at))
		}
		total += uint64(c)
		if total > maxLocals {
			return nil, false, fmt.Errorf("%w: over %d locals", ErrUnsupported, maxLocals)
		}
	}
	decls := r.Buf[declsAt:r.Pos]
	d, s, v := uint32(total), uint32(total)+1, uint32(total)+2
	w.code = w.code[:0]
	var c1, c2 recent // the last instruction copied, and the one before
	none := recent{at: -1}
	c1, c2 = none, none
	sites, needV := 0, false
	for !r.Done() {
		at := r.Pos
		op, sub, err := skipInst(r)
		if err != nil {
			return nil, false, err
		}
		raw := r.Buf[at:r.Pos]
		if op == prefixMisc && c1.isConst && c1.value >= 1 && uint32(c1.value) <= maxLen {
			n := uint32(c1.value)
			switch {
			case sub == miscCopy && len(raw) == 4 && raw[2] == 0 && raw[3] == 0:
				w.code = emitCopy(w.code[:c1.at], n, d, s)
				st.Copies++
				sites++
				c1, c2 = none, none
				continue
			case sub == miscFill && len(raw) == 3 && raw[2] == 0:
				if c2.isConst && c2.value == 0 {
					w.code = emitFill(w.code[:c2.at], n, d, 0, true)
				} else {
					w.code = emitFill(w.code[:c1.at], n, d, v, false)
					needV = true
				}
				st.Fills++
				sites++
				c1, c2 = none, none
				continue
			}
		}
		c2 = c1
		c1 = recent{at: len(w.code)}
		if op == opI32Const {
			imm := wasmbin.NewReader(raw[1:], 0)
			if x, err := imm.S32(); err == nil && bytes32Equal(raw[1:], x) {
				c1.isConst, c1.value = true, x
			}
		}
		w.code = append(w.code, raw...)
	}
	if sites == 0 {
		return nil, false, nil
	}
	added := uint32(1)
	if needV {
		added++
	}
	if uint64(groups)+uint64(added) > 1<<32-1 {
		return nil, false, fmt.Errorf("%w: too many local groups", ErrUnsupported)
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(decls)+len(w.code)+12), groups+added)
	out = append(out, decls...)
	out = append(out, 2, typeI32)
	if needV {
		out = append(out, 1, typeI64)
	}
	return append(out, w.code...), true, nil
}

// maxLocals bounds a function's parameters and locals before ours: wazero
// refuses more than 2^32-1 declared locals (binary/code.go), and our three
// must still have u32 indices.
const maxLocals = 1<<32 - 1 - 3

// bytes32Equal reports whether b is the minimal signed LEB128 of x.
func bytes32Equal(b []byte, x int32) bool {
	var buf [5]byte
	enc := wasmbin.AppendS32(buf[:0], x)
	return string(enc) == string(b)
}

// chunk is one load/store pair of a forward copy.
type chunk struct {
	width       uint32
	load, store byte
}

var chunks = []chunk{
	{8, 0x29, 0x37}, // i64.load, i64.store
	{4, 0x28, 0x36}, // i32.load, i32.store
	{2, 0x2f, 0x3b}, // i32.load16_u, i32.store16
	{1, 0x2d, 0x3a}, // i32.load8_u, i32.store8
}

func memarg(b []byte, off uint32) []byte {
	return wasmbin.AppendU32(append(b, 0), off) // alignment hint 2^0: only a hint
}

func local(b []byte, op byte, idx uint32) []byte { return wasmbin.AppendU32(append(b, op), idx) }

// piece is one access of an inlined copy or fill: width bytes at offset.
type piece struct {
	off uint32
	c   chunk
}

// pieces cuts n bytes into the widest chunks, forward, then moves the
// last piece (the one ending at n) to the front. wazero checks an access's
// bounds once per address value and block and elides the checks of later
// accesses within the bound it has seen (knownSafeBound in wazevo's
// frontend): the first access covering [0, n) makes the others unchecked.
// It also means the one access that can trap comes before any store, so
// a trapping copy or fill stores nothing, as memory.copy and memory.fill
// do. Order is otherwise free: ranges that do not partially overlap give
// the same bytes in any order.
func pieces(buf []piece, n uint32) []piece {
	buf = buf[:0]
	off := uint32(0)
	for _, c := range chunks {
		for ; n-off >= c.width; off += c.width {
			buf = append(buf, piece{off, c})
		}
	}
	last := buf[len(buf)-1]
	copy(buf[1:], buf[:len(buf)-1])
	buf[0] = last
	return buf
}

// emitCopy appends a copy of n bytes; the stack holds dst, src.
func emitCopy(b []byte, n, d, s uint32) []byte {
	b = local(b, opLocalSet, s)
	b = local(b, opLocalSet, d)
	var buf [64]piece
	for _, p := range pieces(buf[:0], n) {
		b = local(b, opLocalGet, d)
		b = local(b, opLocalGet, s)
		b = memarg(append(b, p.c.load), p.off)
		b = memarg(append(b, p.c.store), p.off)
	}
	return b
}

// emitFill appends a fill of n bytes. With zero the stack holds dst (the
// value, a constant 0, was dropped with the length); otherwise dst and
// the value, whose low byte is splatted to an i64 kept in local v.
func emitFill(b []byte, n, d, v uint32, zero bool) []byte {
	if !zero {
		b = append(b, opI32Const)
		b = wasmbin.AppendS32(b, 0xff)
		b = append(b, opI32And, opI64ExtU, opI64Const)
		b = wasmbin.AppendS64(b, splat64)
		b = append(b, opI64Mul)
		b = local(b, opLocalSet, v)
	}
	b = local(b, opLocalSet, d)
	var buf [64]piece
	for _, p := range pieces(buf[:0], n) {
		b = local(b, opLocalGet, d)
		switch {
		case zero && p.c.width == 8:
			b = append(b, opI64Const, 0)
		case zero:
			b = append(b, opI32Const, 0)
		case p.c.width == 8:
			b = local(b, opLocalGet, v)
		default:
			b = append(local(b, opLocalGet, v), opI32Wrap)
		}
		b = memarg(append(b, p.c.store), p.off)
	}
	return b
}
