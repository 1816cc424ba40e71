package wasmbin

import (
	"errors"
	"slices"
	"testing"
)

var (
	errUnsupported = errors.New("unsupported")
	errTypedRef    = errors.New("typed ref")
)

// The readings the packages use (wasmmeter's meter and Screen, wasmbulk),
// with test sentinels.
var (
	strict = Decoder{Unsupported: errUnsupported, TypedRef: errTypedRef, SIMD: SIMDAgreed, TailCalls: true}
	wazero = Decoder{Unsupported: errUnsupported, TypedRef: errTypedRef, SIMD: SIMDWazero, TailCalls: true}
	loose  = Decoder{Unsupported: errUnsupported, AnyValType: true}
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		d      *Decoder
		code   []byte
		want   error // nil: decoded, ending at len(code)
		op     byte
		sub    uint32
		idx    uint32
		labels []uint32
	}{
		{"nop", &strict, []byte{0x01}, nil, 0x01, 0, 0, nil},
		{"block empty", &strict, []byte{0x02, 0x40}, nil, 0x02, 0, 0, nil},
		{"block i32", &strict, []byte{0x02, 0x7f}, nil, 0x02, 0, 0, nil},
		{"block type index", &strict, []byte{0x03, 0x80, 0x01}, nil, 0x03, 0, 0, nil},
		{"block negative", &strict, []byte{0x02, 0x7a}, errUnsupported, 0, 0, 0, nil},
		{"block 0x7a loosely", &loose, []byte{0x02, 0x7a}, nil, 0x02, 0, 0, nil},
		{"block typed ref", &strict, []byte{0x02, 0x63, 0x70}, errTypedRef, 0, 0, 0, nil},
		{"block typed ref loosely", &loose, []byte{0x02, 0x64, 0x70}, errUnsupported, 0, 0, 0, nil},
		{"br", &strict, []byte{0x0c, 0x85, 0x01}, nil, 0x0c, 0, 133, nil},
		{"br_table", &strict, []byte{0x0e, 0x02, 0x00, 0x01, 0x02}, nil, 0x0e, 0, 0, []uint32{0, 1, 2}},
		{"br_table lies", &strict, []byte{0x0e, 0x09, 0x00}, ErrMalformed, 0, 0, 0, nil},
		{"br_table cut short", &strict, []byte{0x0e, 0x02, 0x00, 0x01}, ErrMalformed, 0, 0, 0, nil},
		{"call", &strict, []byte{0x10, 0x07}, nil, 0x10, 0, 7, nil},
		{"call_indirect", &strict, []byte{0x11, 0x01, 0x00}, nil, 0x11, 0, 0, nil},
		{"return_call", &strict, []byte{0x12, 0x03}, nil, 0x12, 0, 3, nil},
		{"return_call without tail calls", &loose, []byte{0x12, 0x03}, errUnsupported, 0, 0, 0, nil},
		{"return_call_indirect without tail calls", &loose, []byte{0x13, 0x01, 0x00}, errUnsupported, 0, 0, 0, nil},
		{"select t", &strict, []byte{0x1c, 0x01, 0x7f}, nil, 0x1c, 0, 0, nil},
		{"select two types", &strict, []byte{0x1c, 0x02, 0x7f, 0x7f}, errUnsupported, 0, 0, 0, nil},
		{"select typed ref", &strict, []byte{0x1c, 0x01, 0x63, 0x70}, errTypedRef, 0, 0, 0, nil},
		{"select 0x75 loosely", &loose, []byte{0x1c, 0x01, 0x75}, nil, 0x1c, 0, 0, nil},
		{"local.get", &strict, []byte{0x20, 0x02}, nil, 0x20, 0, 2, nil},
		{"i32.load", &strict, []byte{0x28, 0x02, 0x10}, nil, 0x28, 0, 0, nil},
		{"memarg memory index", &strict, []byte{0x28, 0x42, 0x00, 0x10}, errUnsupported, 0, 0, 0, nil},
		{"i32.const", &strict, []byte{0x41, 0xff, 0x7f}, nil, 0x41, 0, 0, nil},
		{"i32.const too long", &strict, []byte{0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, ErrMalformed, 0, 0, 0, nil},
		{"i64.const", &strict, []byte{0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, nil, 0x42, 0, 0, nil},
		{"f32.const", &strict, []byte{0x43, 1, 2, 3, 4}, nil, 0x43, 0, 0, nil},
		{"f64.const cut short", &strict, []byte{0x44, 1, 2, 3}, ErrMalformed, 0, 0, 0, nil},
		{"ref.null func", &strict, []byte{0xd0, 0x70}, nil, 0xd0, 0, 0, nil},
		{"ref.null i32", &loose, []byte{0xd0, 0x7f}, errUnsupported, 0, 0, 0, nil},
		{"ref.func", &strict, []byte{0xd2, 0x04}, nil, 0xd2, 0, 4, nil},
		{"memory.copy", &loose, []byte{0xfc, 0x0a, 0x00, 0x00}, nil, 0xfc, 0x0a, 0, nil},
		{"memory.fill", &loose, []byte{0xfc, 0x0b, 0x00}, nil, 0xfc, 0x0b, 0, nil},
		{"i32.trunc_sat", &loose, []byte{0xfc, 0x00}, nil, 0xfc, 0, 0, nil},
		{"0xfc 0x12", &strict, []byte{0xfc, 0x12}, errUnsupported, 0, 0, 0, nil},
		{"v128.const", &strict, append([]byte{0xfd, 0x0c}, make([]byte, 16)...), nil, 0xfd, 0x0c, 0, nil},
		{"v128.load lane", &strict, []byte{0xfd, 0x54, 0x00, 0x00, 0x03}, nil, 0xfd, 0x54, 0, nil},
		{"SIMD refused", &loose, append([]byte{0xfd, 0x0c}, make([]byte, 16)...), errUnsupported, 0, 0, 0, nil},
		{"SIMD invalid", &strict, []byte{0xfd, 0x9a, 0x01}, errUnsupported, 0, 0, 0, nil},
		{"SIMD high bit agreed", &strict, []byte{0xfd, 0x8c, 0x00}, errUnsupported, 0, 0, 0, nil},
		{"SIMD high bit as wazero", &wazero, []byte{0xfd, 0x8c}, nil, 0xfd, 0x8c, 0, nil},
		{"atomic", &strict, []byte{0xfe, 0x03, 0x00}, errUnsupported, 0, 0, 0, nil},
		{"unknown", &strict, []byte{0x06}, errUnsupported, 0, 0, 0, nil},
		{"empty", &strict, nil, ErrMalformed, 0, 0, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(tc.code, 100)
			var in Inst
			err := tc.d.Decode(&r, &in)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Decode = %v, want %v", err, tc.want)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.Op != tc.op || in.Sub != tc.sub || in.Idx != tc.idx || in.Pos != 0 || in.End != len(tc.code) || r.Pos != in.End {
				t.Fatalf("Decode = %+v (reader at %d)", in, r.Pos)
			}
			if !slices.Equal(in.Labels, tc.labels) && len(tc.labels)+len(in.Labels) > 0 {
				t.Fatalf("labels %v, want %v", in.Labels, tc.labels)
			}
		})
	}
}

// TestNamesFunction: the index a function-index rewrite re-encodes is
// exactly the bytes between IdxAt and IdxEnd.
func TestNamesFunction(t *testing.T) {
	for _, code := range [][]byte{{0x10, 0x80, 0x01}, {0x12, 0x05}, {0xd2, 0x02}} {
		r := NewReader(code, 0)
		var in Inst
		if err := strict.Decode(&r, &in); err != nil || !in.NamesFunction() {
			t.Fatalf("% x: %v, names a function %v", code, err, in.NamesFunction())
		}
		ir := NewReader(code[in.IdxAt:in.IdxEnd], 0)
		if v, err := ir.U32(); err != nil || v != in.Idx || !ir.Done() {
			t.Fatalf("% x: index bytes % x", code, code[in.IdxAt:in.IdxEnd])
		}
	}
	r := NewReader([]byte{0x20, 0x01}, 0)
	var in Inst
	if err := strict.Decode(&r, &in); err != nil || in.NamesFunction() {
		t.Fatalf("local.get names a function: %v", err)
	}
}

// FuzzDecode: any bytes decode to instructions inside the buffer or to a
// typed error, and the readings relate as their documentation says: what
// the strict reading accepts the loose and wazero readings accept with
// the same length and fields.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x02, 0x40, 0x0e, 0x01, 0x00, 0x00, 0x0b})
	f.Add(append([]byte{0xfd, 0x0c}, make([]byte, 16)...))
	f.Add([]byte{0x1c, 0x01, 0x7f, 0xfc, 0x0a, 0x00, 0x00, 0xd2, 0x01, 0xfd, 0x8c, 0x00})
	f.Fuzz(func(t *testing.T, code []byte) {
		rs, rl, rw := NewReader(code, 7), NewReader(code, 7), NewReader(code, 7)
		var is, il, iw Inst
		for !rs.Done() {
			es := strict.Decode(&rs, &is)
			el := loose.Decode(&rl, &il)
			ew := wazero.Decode(&rw, &iw)
			for _, e := range []error{es, el, ew} {
				if e != nil && !errors.Is(e, ErrMalformed) && !errors.Is(e, errUnsupported) && !errors.Is(e, errTypedRef) {
					t.Fatalf("untyped error %v", e)
				}
			}
			if es != nil {
				return
			}
			if is.Pos >= is.End || is.End > len(code) || rs.Pos != is.End {
				t.Fatalf("instruction at %d..%d of %d", is.Pos, is.End, len(code))
			}
			if ew != nil || !sameInst(&is, &iw) {
				t.Fatalf("wazero reading differs at %d: %v", is.Pos, ew)
			}
			// The loose reading refuses SIMD and tail calls; otherwise
			// it must agree.
			if is.Op == prefixSIMD || is.Op == opReturnCall || is.Op == opReturnCallIndr {
				return
			}
			if el != nil || !sameInst(&is, &il) {
				t.Fatalf("loose reading differs at %d: %v", is.Pos, el)
			}
		}
	})
}

func sameInst(a, b *Inst) bool {
	return a.Op == b.Op && a.Sub == b.Sub && a.Pos == b.Pos && a.End == b.End && a.Idx == b.Idx &&
		a.IdxAt == b.IdxAt && a.IdxEnd == b.IdxEnd && slices.Equal(a.Labels, b.Labels)
}
