package oldmeter

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// reader is the shared binary reader (every read reports ErrMalformed,
// which is wasmbin.ErrMalformed, rather than panicking on short or
// over-long input; positions in messages are module offsets) plus the
// one reading only the meter's decoders differ on.
type reader struct {
	wasmbin.Reader
	// wazeroSIMD: read a SIMD sub-opcode byte with its high bit set as
	// wazero does (one byte, the rest being further instructions) instead
	// of refusing it. Only Screen does: it must read as wazero reads, the
	// meter must read as everyone reads.
	wazeroSIMD bool
}

// newReader reads b, whose first byte is at module offset base.
func newReader(b []byte, base int) *reader {
	return &reader{Reader: wasmbin.NewReader(b, base)}
}

// sub reads the next n bytes (a function body) as a reader of their own
// that reads SIMD sub-opcodes as r does. It is a value, so the caller's
// copy can stay on the stack (one per function body).
func (r *reader) sub(n uint32) (reader, error) {
	b, err := r.Sub(n)
	return reader{Reader: b, wazeroSIMD: r.wazeroSIMD}, err
}

// Opcodes the instrumenter and the verifier look at.
const (
	opUnreachable  = 0x00
	opBlock        = 0x02
	opLoop         = 0x03
	opIf           = 0x04
	opElse         = 0x05
	opEnd          = 0x0b
	opBr           = 0x0c
	opBrIf         = 0x0d
	opBrTable      = 0x0e
	opCall         = 0x10
	opCallIndirect = 0x11
	opReturnCall   = 0x12
	opReturnCallIn = 0x13
	opLocalGet     = 0x20
	opLocalTee     = 0x22
	opGlobalGet    = 0x23
	opGlobalSet    = 0x24
	opI32Const     = 0x41
	opI32LtU       = 0x49
	opI32Sub       = 0x6b
	opI32ShrU      = 0x76
	opRefFunc      = 0xd2
	prefixMisc     = 0xfc
	prefixSIMD     = 0xfd
	prefixAtomic   = 0xfe
	blockEmpty     = 0x40
)

// inst is one decoded instruction.
type inst struct {
	op  byte
	sub uint32 // the sub-opcode of a prefixed (0xFC, 0xFD) instruction
	// pos and end delimit the instruction's bytes.
	pos, end int
	// idx is the first index immediate: a label depth (br, br_if), a
	// function (call, return_call, ref.func), a global (global.get/set).
	idx uint32
	// idxAt and idxEnd delimit idx's bytes, so a function index can be
	// re-encoded in place.
	idxAt, idxEnd int
	// labels are br_table's label depths, default last (reused between
	// calls of decodeInst on the same inst).
	labels []uint32
}

// immediate shapes of single-byte opcodes.
const (
	immNone = iota + 1
	immBlock
	immLabel
	immBrTable
	immFunc
	immU32
	immU32x2
	immMemarg
	immI32
	immI64
	immF32
	immF64
	immSelectT
	immRefNull
	immMisc
	immSIMD
)

// opImm gives the immediates of every single-byte opcode wazero v1.12
// accepts with its default features (WebAssembly 2.0: MVP, mutable
// globals, sign extension, non-trapping conversions, multi-value, bulk
// memory, reference types, SIMD) plus the tail-call instructions. Zero
// means unknown: the decoder refuses it. Threads (0xFE), exception
// handling and typed function references are not enabled in plasmd's
// runtimes, so they are refused rather than guessed at.
var opImm = func() [256]uint8 {
	var t [256]uint8
	for _, op := range []byte{0x00, 0x01, 0x05, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1} {
		t[op] = immNone
	}
	t[opBlock], t[opLoop], t[opIf] = immBlock, immBlock, immBlock
	t[opBr], t[opBrIf] = immLabel, immLabel
	t[opBrTable] = immBrTable
	t[opCall], t[opReturnCall], t[opRefFunc] = immFunc, immFunc, immFunc
	t[opCallIndirect], t[opReturnCallIn] = immU32x2, immU32x2
	t[0x1c] = immSelectT
	for op := 0x20; op <= 0x26; op++ { // local.get/set/tee, global.get/set, table.get/set
		t[op] = immU32
	}
	for op := 0x28; op <= 0x3e; op++ { // loads and stores
		t[op] = immMemarg
	}
	t[0x3f], t[0x40] = immU32, immU32 // memory.size, memory.grow: memory index
	t[opI32Const], t[0x42], t[0x43], t[0x44] = immI32, immI64, immF32, immF64
	for op := 0x45; op <= 0xc4; op++ { // numeric MVP and sign extension
		t[op] = immNone
	}
	t[0xd0] = immRefNull
	t[prefixMisc], t[prefixSIMD] = immMisc, immSIMD
	return t
}()

// simdInvalid are the 0xFD sub-opcodes below 256 that are not SIMD
// instructions (wazero v1.12's internal/wasm/instruction.go lists the
// valid ones); 256 and above (relaxed SIMD) is not enabled.
var simdInvalid = map[uint32]bool{
	0x9a: true, 0xa2: true, 0xa5: true, 0xa6: true, 0xaf: true, 0xb0: true, 0xb2: true,
	0xb3: true, 0xb4: true, 0xbb: true, 0xc2: true, 0xc5: true, 0xc6: true, 0xcf: true,
	0xd0: true, 0xd2: true, 0xd3: true, 0xd4: true, 0xe2: true, 0xee: true,
}

// decodeInst decodes the instruction at r's position into in.
func decodeInst(r *reader, in *inst) error {
	in.pos = r.Pos
	in.sub, in.idx, in.idxAt, in.idxEnd = 0, 0, 0, 0
	in.labels = in.labels[:0]
	op, err := r.Byte()
	if err != nil {
		return err
	}
	in.op = op
	if err := decodeImm(r, in, op); err != nil {
		return err
	}
	in.end = r.Pos
	return nil
}

func decodeImm(r *reader, in *inst, op byte) error {
	var err error
	switch opImm[op] {
	case immNone:
	case immBlock:
		err = blockType(r)
	case immLabel, immFunc, immU32:
		in.idxAt = r.Pos
		in.idx, err = r.U32()
		in.idxEnd = r.Pos
	case immBrTable:
		var n uint32
		if n, err = r.U32(); err != nil {
			return err
		}
		if uint64(n) > uint64(len(r.Buf)-r.Pos) { // each label takes a byte
			return fmt.Errorf("%w: br_table of %d labels at module byte %d", ErrMalformed, n, r.Offset(in.pos))
		}
		for range n + 1 {
			l, err := r.U32()
			if err != nil {
				return err
			}
			in.labels = append(in.labels, l)
		}
	case immU32x2:
		if _, err = r.U32(); err == nil {
			_, err = r.U32()
		}
	case immMemarg:
		err = memarg(r)
	case immI32:
		_, err = r.Signed(5)
	case immI64:
		_, err = r.Signed(10)
	case immF32:
		_, err = r.Bytes(4)
	case immF64:
		_, err = r.Bytes(8)
	case immSelectT:
		// wazero reads the count as one byte that must be 1, then one
		// type; its validator reads a long-form reference type (0x63,
		// 0x64 and a heap type) where its compilers skip one byte, so
		// only a single-byte value type is read the same way by all.
		var n byte
		if n, err = r.Byte(); err == nil && n != 1 {
			return fmt.Errorf("%w: select with %d type bytes at module byte %d", ErrUnsupported, n, r.Offset(in.pos))
		}
		if err == nil {
			_, err = valType(r)
		}
	case immRefNull:
		_, err = refType(r)
	case immMisc:
		err = decodeMisc(r, in)
	case immSIMD:
		err = decodeSIMD(r, in)
	default:
		if op == prefixAtomic {
			return fmt.Errorf("%w: atomic instruction (threads) at module byte %d", ErrUnsupported, r.Offset(in.pos))
		}
		return fmt.Errorf("%w: opcode %#x at module byte %d", ErrUnsupported, op, r.Offset(in.pos))
	}
	return err
}

// blockType reads a block type: empty, one value type, or a type index
// (a non-negative s33).
func blockType(r *reader) error {
	if r.Pos < len(r.Buf) {
		switch r.Buf[r.Pos] {
		case blockEmpty, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
			r.Pos++
			return nil
		case refNullable, refNonNullable:
			return fmt.Errorf("%w: block type at module byte %d", ErrTypedRef, r.Offset(r.Pos))
		}
	}
	at := r.Pos
	v, err := r.Signed(5)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%w: block type %d at module byte %d", ErrUnsupported, v, r.Offset(at))
	}
	return nil
}

// The first bytes of the long (typed function reference) forms of a
// reference type: (ref null ht) and (ref ht).
const (
	refNullable    = 0x63
	refNonNullable = 0x64
)

// valType reads a value type: one byte, a number, vector or reference
// type of WebAssembly 2.0. The long forms are refused with ErrTypedRef:
// wazero v1.12's validator and compilers do not read them alike.
func valType(r *reader) (byte, error) {
	at := r.Pos
	b, err := r.Byte()
	if err != nil {
		return 0, err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return b, nil
	case refNullable, refNonNullable:
		return 0, fmt.Errorf("%w: value type at module byte %d", ErrTypedRef, r.Offset(at))
	}
	return 0, fmt.Errorf("%w: value type %#x at module byte %d", ErrUnsupported, b, r.Offset(at))
}

// refType reads a reference type (funcref or externref), also ref.null's
// heap type.
func refType(r *reader) (byte, error) {
	at := r.Pos
	b, err := valType(r)
	if err != nil {
		return 0, err
	}
	if b != 0x70 && b != 0x6f {
		return 0, fmt.Errorf("%w: reference type %#x at module byte %d", ErrUnsupported, b, r.Offset(at))
	}
	return b, nil
}

func memarg(r *reader) error {
	at := r.Pos
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 { // multi-memory's memory index flag: not enabled
		return fmt.Errorf("%w: memarg with a memory index at module byte %d", ErrUnsupported, r.Offset(at))
	}
	_, err = r.U32()
	return err
}

func decodeMisc(r *reader, in *inst) error {
	sub, err := r.U32()
	if err != nil {
		return err
	}
	in.sub = sub
	switch {
	case sub <= 0x07: // saturating truncations
		return nil
	case sub == 0x08 || sub == 0x0a || sub == 0x0c || sub == 0x0e: // memory.init, memory.copy, table.init, table.copy
		if _, err := r.U32(); err != nil {
			return err
		}
		_, err = r.U32()
		return err
	case sub == 0x09 || sub == 0x0b || sub == 0x0d || (sub >= 0x0f && sub <= 0x11):
		// data.drop, memory.fill, elem.drop, table.grow/size/fill
		_, err = r.U32()
		return err
	}
	return fmt.Errorf("%w: 0xfc %d at module byte %d", ErrUnsupported, sub, r.Offset(in.pos))
}

// decodeSIMD reads the sub-opcode as wazero v1.12 does: one byte, not the
// LEB128 the spec says. A byte with its high bit set starts a longer
// LEB128 to a spec reader (fd 8c 00 is v128.const to one, i16x8.shr_s
// then unreachable to wazero), so the meter refuses it (the module then
// runs with wazero's own checks, which read it as wazero's compilers do):
// every reading of what the meter accepts agrees.
func decodeSIMD(r *reader, in *inst) error {
	b, err := r.Byte()
	if err != nil {
		return err
	}
	sub := uint32(b)
	in.sub = sub
	switch {
	case b >= 0x80 && !r.wazeroSIMD:
		return fmt.Errorf("%w: 0xfd %#x at module byte %d: a sub-opcode wazero and the spec read differently", ErrUnsupported, b, r.Offset(in.pos))
	case simdInvalid[sub]:
		return fmt.Errorf("%w: 0xfd %d at module byte %d", ErrUnsupported, sub, r.Offset(in.pos))
	case sub <= 0x0b || sub == 0x5c || sub == 0x5d: // loads, store, load-zero
		return memarg(r)
	case sub == 0x0c || sub == 0x0d: // v128.const, i8x16.shuffle
		_, err = r.Bytes(16)
		return err
	case sub >= 0x15 && sub <= 0x22: // extract/replace lane
		_, err = r.Byte()
		return err
	case sub >= 0x54 && sub <= 0x5b: // load/store lane
		if err := memarg(r); err != nil {
			return err
		}
		_, err = r.Byte()
		return err
	}
	return nil
}
