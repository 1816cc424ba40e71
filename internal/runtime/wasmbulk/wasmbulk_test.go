package wasmbulk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

const bound = 256

func TestInline(t *testing.T) {
	type want struct{ copies, fills int }
	cases := []struct {
		name string
		body []byte
		want want
	}{
		{"copy 0 untouched", copyAt(0, 100, 0), want{}},
		{"copy 1", copyAt(0, 100, 1), want{1, 0}},
		{"copy 7", copyAt(0, 100, 7), want{1, 0}},
		{"copy 8", copyAt(0, 100, 8), want{1, 0}},
		{"copy 9", copyAt(0, 100, 9), want{1, 0}},
		{"copy 17", copyAt(0, 100, 17), want{1, 0}},
		{"copy 144", copyAt(0, 200, 144), want{1, 0}},
		{"copy bound", copyAt(0, 300, bound), want{1, 0}},
		{"copy bound+1 untouched", copyAt(0, 300, bound+1), want{}},
		{"copy variable length untouched", cat(get(0), get(1), get(2), memCopy()), want{}},
		{"copy non-minimal length untouched", cat(get(0), get(1), []byte{opI32Const, 0x88, 0x00}, memCopy()), want{}},
		{"zero 0 untouched", zeroAt(0, 0), want{}},
		{"zero 1", zeroAt(0, 1), want{0, 1}},
		{"zero 7", zeroAt(0, 7), want{0, 1}},
		{"zero 8", zeroAt(0, 8), want{0, 1}},
		{"zero 9", zeroAt(0, 9), want{0, 1}},
		{"zero 17", zeroAt(0, 17), want{0, 1}},
		{"zero 144", zeroAt(0, 144), want{0, 1}},
		{"zero bound", zeroAt(0, bound), want{0, 1}},
		{"zero bound+1 untouched", zeroAt(0, bound+1), want{}},
		{"fill value 17", fillAt(0, 17), want{0, 1}},
		{"fill constant 0x1ab", cat(get(0), i32c(0x1ab), i32c(9), memFill()), want{0, 1}},
		{"fill variable length untouched", cat(get(0), get(1), get(2), memFill()), want{}},
		{"several", cat(copyAt(0, 400, 24), zeroAt(40, 48), fillAt(100, 3), copyAt(8, 500, 300)), want{1, 2}},
		{"in a block", cat([]byte{0x02, 0x40}, copyAt(0, 400, 24), []byte{0x0b}), want{1, 0}},
		{"unreachable code", cat([]byte{0x00}, i32c(24), memCopy()), want{1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := testModule(c.body, 1, []byte{2, 0x7e}) // two i64 locals of its own
			out, st, err := Inline(m, bound)
			if err != nil {
				t.Fatal(err)
			}
			if got := (want{st.Copies, st.Fills}); got != c.want {
				t.Fatalf("inlined %+v, want %+v", got, c.want)
			}
			if c.want == (want{}) {
				if !bytes.Equal(out, m) {
					t.Fatal("module changed with nothing to inline")
				}
				return
			}
			if st.Functions != 1 {
				t.Fatalf("%d functions changed", st.Functions)
			}
			// Nothing left to inline: the sites are gone, not copied.
			if again, st, err := Inline(out, bound); err != nil || st != (Stats{}) || !bytes.Equal(again, out) {
				t.Fatalf("inlining again: %+v, %v", st, err)
			}
			compiles(t, out)
		})
	}
}

// TestInlineKeepsOtherFunctions: a function without a site keeps its
// bytes, and its locals are not renumbered.
func TestInlineKeepsOtherFunctions(t *testing.T) {
	m := testModule(cat(get(0), get(1), get(2), memCopy()), 0, nil)
	out, st, err := Inline(m, bound)
	if err != nil || st != (Stats{}) || !bytes.Equal(out, m) {
		t.Fatalf("%+v %v", st, err)
	}
}

// TestInlineSameMemory runs a function of many copies and fills before
// and after the rewrite, over the same seeded memory and arguments, and
// compares memory byte for byte, traps included (out-of-range addresses
// must trap both ways, and store nothing).
func TestInlineSameMemory(t *testing.T) {
	var body []byte
	sizes := []int32{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 144, 255, 256}
	off, lastCopy := int32(0), int32(0)
	for _, n := range sizes {
		body = append(body, copyAt(off, off, n)...)
		lastCopy = off
		off += n + 3
	}
	for _, n := range sizes {
		body = append(body, zeroAt(off, n)...)
		body = append(body, fillAt(off+n+1, n)...)
		off += 2*n + 5
	}
	body = append(body, cat(get(1), get(1), i32c(40), memCopy())...) // exact overlap
	m := testModule(body, 0, nil)
	out, st, err := Inline(m, bound)
	if err != nil || st.Copies != len(sizes)+1 || st.Fills != 2*len(sizes) {
		t.Fatalf("%+v %v", st, err)
	}
	span := off
	rng := rand.New(rand.NewPCG(1, 2))
	type call struct{ d, s, v uint32 }
	calls := []call{
		{0, 32768, 0xab},
		{65536 - uint32(span), 65536 - uint32(span) - 1 - uint32(span), 0x1ff}, // the very top
		{65536 - uint32(span) + 1, 0, 7},                                       // d's last pieces out of range
		{0, 65536 - 100, 1},                                                    // s out of range from 144 on
		{65536 - uint32(span) + 10, 0, 5},                                      // only the last fill's last piece out of range
		{0, 65536 + 4 - 256 - uint32(lastCopy), 9},                             // only the last copy's last piece out of range
		{1<<32 - 8, 0, 3},                                                      // addresses wrap in 32 bits
	}
	for range 20 {
		calls = append(calls, call{rng.Uint32N(32768 - uint32(span)), 32768 + rng.Uint32N(32768-uint32(span)), rng.Uint32()})
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	run := func(mod []byte, c call, seed uint64) ([]byte, error) {
		cm, err := rt.CompileModule(ctx, mod)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close(ctx)
		mem := inst.Memory()
		init := make([]byte, mem.Size())
		r := rand.New(rand.NewPCG(seed, 0))
		for i := range init {
			init[i] = byte(r.Uint32())
		}
		mem.Write(0, init)
		_, err = inst.ExportedFunction("run").Call(ctx, uint64(c.d), uint64(c.s), uint64(c.v))
		got, _ := mem.Read(0, mem.Size())
		return bytes.Clone(got), err
	}
	for i, c := range calls {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			want, werr := run(m, c, uint64(i))
			got, gerr := run(out, c, uint64(i))
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("original: %v, inlined: %v", werr, gerr)
			}
			if !bytes.Equal(got, want) {
				at := 0
				for got[at] == want[at] {
					at++
				}
				t.Fatalf("memory differs from byte %d (trap: %v)", at, werr)
			}
		})
	}
}

func TestInlineRefuses(t *testing.T) {
	ok := testModule(copyAt(0, 100, 24), 0, nil)
	cases := []struct {
		name string
		mod  []byte
		want error
	}{
		{"no header", []byte("not wasm"), ErrMalformed},
		{"cut short", ok[:len(ok)-3], ErrMalformed},
		{"SIMD", testModule(cat(get(0), []byte{0xfd, 0x0c}, make([]byte, 16), []byte{0x0b, 0x1a}), 0, nil), ErrUnsupported},
		{"atomics", testModule([]byte{0xfe, 0x03, 0x00}, 0, nil), ErrUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := Inline(c.mod, bound); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// FuzzInline: any bytes are refused with a typed error or inlined; a
// module wazero compiles still compiles once inlined.
func FuzzInline(f *testing.F) {
	f.Add(testModule(cat(copyAt(0, 100, 24), zeroAt(0, 40), fillAt(3, 9)), 1, []byte{1, 0x7f}))
	f.Add(testModule(cat(get(0), get(1), get(2), memCopy()), 0, nil))
	f.Add(testModule([]byte{0x02, 0x40, 0x0e, 0x01, 0x00, 0x00, 0x0b}, 0, nil))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, m []byte) {
		out, _, err := Inline(m, bound)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// Untrusted bytes reach wazero only once screened, as in the
		// sandbox: wazero v1.12 runs out of memory on some hostile
		// section counts (a table section of 0xe5e5ff tables).
		if wasmmeter.Screen(m) != nil {
			return
		}
		cm, err := rt.CompileModule(ctx, m)
		if err != nil {
			return
		}
		cm.Close(ctx)
		cm, err = rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("compiles, but not once inlined: %v", err)
		}
		cm.Close(ctx)
	})
}
