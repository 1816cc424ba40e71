package wasmmeter

import (
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
	blockEmpty     = 0x40
)

// inst is one decoded instruction (wasmbin's).
type inst = wasmbin.Inst

// The meter's readings of the shared instruction decoder: every opcode
// wazero v1.12 accepts with its default features (WebAssembly 2.0 with
// SIMD) plus the tail calls, refused with this package's errors. The
// meter reads SIMD sub-opcodes only where wazero and the spec agree (see
// wasmbin.SIMDAgreed): a module it accepts then runs as it was read.
// Screen reads function bodies as wazero does (wasmbin.SIMDWazero).
var (
	meterDecoder = wasmbin.Decoder{
		Unsupported: ErrUnsupported,
		TypedRef:    ErrTypedRef,
		SIMD:        wasmbin.SIMDAgreed,
		TailCalls:   true,
	}
	wazeroDecoder = wasmbin.Decoder{
		Unsupported: ErrUnsupported,
		TypedRef:    ErrTypedRef,
		SIMD:        wasmbin.SIMDWazero,
		TailCalls:   true,
	}
)

// decodeInst decodes the instruction at r's position into in.
func decodeInst(r *reader, in *inst) error {
	if r.wazeroSIMD {
		return wazeroDecoder.Decode(&r.Reader, in)
	}
	return meterDecoder.Decode(&r.Reader, in)
}

// valType reads a value type of WebAssembly 2.0 (one byte); the typed
// function reference forms are ErrTypedRef.
func valType(r *reader) (byte, error) { return meterDecoder.ValType(&r.Reader) }

// refType reads a reference type (funcref or externref).
func refType(r *reader) (byte, error) { return meterDecoder.RefType(&r.Reader) }
