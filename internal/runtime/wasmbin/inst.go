package wasmbin

import "fmt"

// Inst is one decoded instruction.
type Inst struct {
	Op  byte
	Sub uint32 // the sub-opcode of a prefixed (0xFC, 0xFD) instruction
	// Pos and End delimit the instruction's bytes in the Reader's Buf.
	Pos, End int
	// Idx is the first index immediate: a label depth (br, br_if), a
	// function (call, return_call, ref.func), a local, a global, a table
	// (table.get/set), a memory (memory.size/grow).
	Idx uint32
	// IdxAt and IdxEnd delimit Idx's bytes, so a function index can be
	// re-encoded in place.
	IdxAt, IdxEnd int
	// Labels are br_table's label depths, default last (reused between
	// calls of Decode on the same Inst).
	Labels []uint32
}

// NamesFunction reports whether Idx is a function index (call,
// return_call, ref.func): what a rewriter that shifts function indices
// re-encodes.
func (in *Inst) NamesFunction() bool { return opImm[in.Op] == immFunc }

// SIMD says how a Decoder reads the 0xFD (SIMD) prefix.
type SIMD uint8

const (
	// SIMDRefused: every 0xFD instruction is unsupported.
	SIMDRefused SIMD = iota
	// SIMDAgreed reads the sub-opcode as one byte, as wazero v1.12 does
	// (not the LEB128 the spec says), and refuses a byte with its high bit
	// set: a spec reader takes it as the start of a longer LEB128 (fd 8c
	// 00 is v128.const to one, i16x8.shr_s then unreachable to wazero), so
	// every reading of what it accepts agrees.
	SIMDAgreed
	// SIMDWazero reads the sub-opcode as one byte whatever it is, as
	// wazero v1.12's validator and compilers both do.
	SIMDWazero
)

// Decoder reads instructions: opcode, then immediates. Its fields are the
// few readings its users differ on; everything else (the immediates of
// every opcode, the checks that keep a hostile body from making it
// allocate or read out of bounds) is the same for all.
//
// What it accepts: the single-byte opcodes of WebAssembly 2.0 (MVP,
// mutable globals, sign extension, non-trapping conversions,
// multi-value, bulk memory, reference types), every 0xFC sub-opcode up to
// table.fill (0x11), SIMD as SIMD says and the tail calls if TailCalls.
// Threads (0xFE), exception handling, typed function references and
// multi-memory are refused, not guessed at.
type Decoder struct {
	// Unsupported is wrapped by every refusal of well-formed bytes the
	// decoder does not read; a bad encoding is ErrMalformed.
	Unsupported error
	// TypedRef is wrapped by refusals of the typed function reference
	// forms (a type starting 0x63 or 0x64); nil: Unsupported.
	TypedRef error
	SIMD     SIMD
	// TailCalls accepts return_call and return_call_indirect.
	TailCalls bool
	// AnyValType accepts every byte from 0x6f to 0x7f as a value type
	// (select t, block types, ValType): a reader that only needs lengths
	// (every such byte is one byte long) and leaves validation to wazero.
	// Without it only WebAssembly 2.0's seven value types are.
	AnyValType bool
}

func (d *Decoder) typedRef() error {
	if d.TypedRef != nil {
		return d.TypedRef
	}
	return d.Unsupported
}

// Opcodes the decoder treats specially.
const (
	opReturnCall     = 0x12
	opReturnCallIndr = 0x13
	prefixSIMD       = 0xfd
	prefixAtomic     = 0xfe
	blockEmpty       = 0x40
)

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

// opImm gives the immediates of every single-byte opcode the decoder
// knows. Zero means unknown: the decoder refuses it.
var opImm = func() [256]uint8 {
	var t [256]uint8
	for _, op := range []byte{0x00, 0x01, 0x05, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1} {
		t[op] = immNone
	}
	t[0x02], t[0x03], t[0x04] = immBlock, immBlock, immBlock // block, loop, if
	t[0x0c], t[0x0d] = immLabel, immLabel                    // br, br_if
	t[0x0e] = immBrTable
	t[0x10], t[opReturnCall], t[0xd2] = immFunc, immFunc, immFunc // call, return_call, ref.func
	t[0x11], t[opReturnCallIndr] = immU32x2, immU32x2             // call_indirect, return_call_indirect
	t[0x1c] = immSelectT
	for op := 0x20; op <= 0x26; op++ { // local.get/set/tee, global.get/set, table.get/set
		t[op] = immU32
	}
	for op := 0x28; op <= 0x3e; op++ { // loads and stores
		t[op] = immMemarg
	}
	t[0x3f], t[0x40] = immU32, immU32 // memory.size, memory.grow: memory index
	t[0x41], t[0x42], t[0x43], t[0x44] = immI32, immI64, immF32, immF64
	for op := 0x45; op <= 0xc4; op++ { // numeric MVP and sign extension
		t[op] = immNone
	}
	t[0xd0] = immRefNull
	t[0xfc], t[prefixSIMD] = immMisc, immSIMD
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

// Decode decodes the instruction at r's position into in.
func (d *Decoder) Decode(r *Reader, in *Inst) error {
	in.Pos = r.Pos
	in.Sub, in.Idx, in.IdxAt, in.IdxEnd = 0, 0, 0, 0
	in.Labels = in.Labels[:0]
	op, err := r.Byte()
	if err != nil {
		return err
	}
	in.Op = op
	if err := d.imm(r, in, op); err != nil {
		return err
	}
	in.End = r.Pos
	return nil
}

func (d *Decoder) imm(r *Reader, in *Inst, op byte) error {
	var err error
	switch opImm[op] {
	case immNone:
	case immBlock:
		err = d.blockType(r)
	case immLabel, immFunc, immU32:
		if op == opReturnCall && !d.TailCalls {
			return d.unknown(r, in, op)
		}
		in.IdxAt = r.Pos
		in.Idx, err = r.U32()
		in.IdxEnd = r.Pos
	case immBrTable:
		var n uint32
		if n, err = r.U32(); err != nil {
			return err
		}
		if uint64(n) > uint64(len(r.Buf)-r.Pos) { // each label takes a byte
			return fmt.Errorf("%w: br_table of %d labels at module byte %d", ErrMalformed, n, r.Offset(in.Pos))
		}
		for range n + 1 {
			l, err := r.U32()
			if err != nil {
				return err
			}
			in.Labels = append(in.Labels, l)
		}
	case immU32x2:
		if op == opReturnCallIndr && !d.TailCalls {
			return d.unknown(r, in, op)
		}
		if _, err = r.U32(); err == nil {
			_, err = r.U32()
		}
	case immMemarg:
		err = d.memarg(r)
	case immI32:
		_, err = r.Signed(5)
	case immI64:
		_, err = r.Signed(10)
	case immF32:
		_, err = r.Bytes(4)
	case immF64:
		_, err = r.Bytes(8)
	case immSelectT:
		err = d.selectT(r, in)
	case immRefNull:
		_, err = d.RefType(r)
	case immMisc:
		err = d.misc(r, in)
	case immSIMD:
		if d.SIMD == SIMDRefused {
			return d.unknown(r, in, op)
		}
		err = d.simd(r, in)
	default:
		return d.unknown(r, in, op)
	}
	return err
}

func (d *Decoder) unknown(r *Reader, in *Inst, op byte) error {
	if op == prefixAtomic {
		return fmt.Errorf("%w: atomic instruction (threads) at module byte %d", d.Unsupported, r.Offset(in.Pos))
	}
	return fmt.Errorf("%w: opcode %#x at module byte %d", d.Unsupported, op, r.Offset(in.Pos))
}

// selectT reads select's type vector. wazero reads the count as one byte
// that must be 1, then one type; its validator reads a long-form
// reference type (0x63, 0x64 and a heap type) where its compilers skip
// one byte, so only a single-byte value type is read the same way by all.
func (d *Decoder) selectT(r *Reader, in *Inst) error {
	n, err := r.Byte()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: select with %d type bytes at module byte %d", d.Unsupported, n, r.Offset(in.Pos))
	}
	_, err = d.ValType(r)
	return err
}

// The first bytes of the long (typed function reference) forms of a
// reference type: (ref null ht) and (ref ht).
const (
	refNullable    = 0x63
	refNonNullable = 0x64
)

// valTypes are WebAssembly 2.0's value types: i32, i64, f32, f64, v128,
// funcref, externref.
var valTypes = [256]bool{0x7f: true, 0x7e: true, 0x7d: true, 0x7c: true, 0x7b: true, 0x70: true, 0x6f: true}

func (d *Decoder) isValType(b byte) bool {
	return valTypes[b] || d.AnyValType && b >= 0x6f && b <= 0x7f
}

// blockType reads a block type: empty, one value type, or a type index
// (a non-negative s33).
func (d *Decoder) blockType(r *Reader) error {
	if r.Pos < len(r.Buf) {
		switch b := r.Buf[r.Pos]; {
		case b == blockEmpty || d.isValType(b):
			r.Pos++
			return nil
		case b == refNullable || b == refNonNullable:
			return fmt.Errorf("%w: block type at module byte %d", d.typedRef(), r.Offset(r.Pos))
		}
	}
	at := r.Pos
	v, err := r.Signed(5)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%w: block type %d at module byte %d", d.Unsupported, v, r.Offset(at))
	}
	return nil
}

// ValType reads a value type: one byte, a number, vector or reference
// type of WebAssembly 2.0 (or any of 0x6f to 0x7f with AnyValType). The
// long forms are refused with TypedRef: wazero v1.12's validator and
// compilers do not read them alike.
func (d *Decoder) ValType(r *Reader) (byte, error) {
	at := r.Pos
	b, err := r.Byte()
	if err != nil {
		return 0, err
	}
	switch {
	case d.isValType(b):
		return b, nil
	case b == refNullable || b == refNonNullable:
		return 0, fmt.Errorf("%w: value type at module byte %d", d.typedRef(), r.Offset(at))
	}
	return 0, fmt.Errorf("%w: value type %#x at module byte %d", d.Unsupported, b, r.Offset(at))
}

// RefType reads a reference type (funcref or externref), also
// ref.null's heap type.
func (d *Decoder) RefType(r *Reader) (byte, error) {
	at := r.Pos
	b, err := d.ValType(r)
	if err != nil {
		return 0, err
	}
	if b != 0x70 && b != 0x6f {
		return 0, fmt.Errorf("%w: reference type %#x at module byte %d", d.Unsupported, b, r.Offset(at))
	}
	return b, nil
}

func (d *Decoder) memarg(r *Reader) error {
	at := r.Pos
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 { // multi-memory's memory index flag: not enabled
		return fmt.Errorf("%w: memarg with a memory index at module byte %d", d.Unsupported, r.Offset(at))
	}
	_, err = r.U32()
	return err
}

func (d *Decoder) misc(r *Reader, in *Inst) error {
	sub, err := r.U32()
	if err != nil {
		return err
	}
	in.Sub = sub
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
	return fmt.Errorf("%w: 0xfc %d at module byte %d", d.Unsupported, sub, r.Offset(in.Pos))
}

// simd reads a 0xFD instruction's sub-opcode (one byte: see SIMD) and
// immediates.
func (d *Decoder) simd(r *Reader, in *Inst) error {
	b, err := r.Byte()
	if err != nil {
		return err
	}
	sub := uint32(b)
	in.Sub = sub
	switch {
	case b >= 0x80 && d.SIMD != SIMDWazero:
		return fmt.Errorf("%w: 0xfd %#x at module byte %d: a sub-opcode wazero and the spec read differently", d.Unsupported, b, r.Offset(in.Pos))
	case simdInvalid[sub]:
		return fmt.Errorf("%w: 0xfd %d at module byte %d", d.Unsupported, sub, r.Offset(in.Pos))
	case sub <= 0x0b || sub == 0x5c || sub == 0x5d: // loads, store, load-zero
		return d.memarg(r)
	case sub == 0x0c || sub == 0x0d: // v128.const, i8x16.shuffle
		_, err = r.Bytes(16)
		return err
	case sub >= 0x15 && sub <= 0x22: // extract/replace lane
		_, err = r.Byte()
		return err
	case sub >= 0x54 && sub <= 0x5b: // load/store lane
		if err := d.memarg(r); err != nil {
			return err
		}
		_, err = r.Byte()
		return err
	}
	return nil
}
