package wasmmeter

import (
	"errors"
	"testing"
)

// localsModule is a module of len(bodies) functions of type () -> ();
// bodies[f] lists the counts of function f's i32 local declarations and
// the body is that and an end. It returns the module and, for each
// function and declaration, the module offset of the declaration.
func localsModule(bodies ...[]uint32) ([]byte, [][]int) {
	wasm := append([]byte(nil), header...)
	wasm = append(wasm, sect(secType, vec(1, []byte{0x60, 0, 0}))...)
	funcs := make([][]byte, len(bodies))
	for i := range funcs {
		funcs[i] = []byte{0}
	}
	wasm = append(wasm, sect(secFunction, vec(len(bodies), funcs...))...)
	code := uleb(uint32(len(bodies)))
	rel := make([][]int, len(bodies)) // offsets inside code
	for f, decls := range bodies {
		body := uleb(uint32(len(decls)))
		var at []int
		for _, k := range decls {
			at = append(at, len(body))
			body = append(append(body, uleb(k)...), tI32)
		}
		body = append(body, opEnd)
		size := uleb(uint32(len(body)))
		for _, a := range at {
			rel[f] = append(rel[f], len(code)+len(size)+a)
		}
		code = append(append(code, size...), body...)
	}
	s := sect(secCode, code)
	base := len(wasm) + len(s) - len(code)
	for f := range rel {
		for i := range rel[f] {
			rel[f][i] += base
		}
	}
	return append(wasm, s...), rel
}

// TestScreenLocals: a function's locals and the module's are capped
// (reviewer's H2: a 30-byte module declaring 2^32-1 locals made wazero
// size a slice, and its interpreter compile per local, by that count);
// a module at a cap passes Screen and Instrument, one past it is refused
// with ErrTooLarge naming the declaration that passed it. The modules
// are only read, never compiled.
func TestScreenLocals(t *testing.T) {
	full := func(n int) [][]uint32 { // n functions at the per-function cap
		out := make([][]uint32, n)
		for i := range out {
			out[i] = []uint32{MaxFunctionLocals}
		}
		return out
	}
	perModule := MaxModuleLocals / MaxFunctionLocals
	cases := []struct {
		name   string
		bodies [][]uint32
		bad    [2]int // function, declaration refused; {-1} when accepted
	}{
		{"no locals", [][]uint32{{}}, [2]int{-1}},
		{"function at the cap", [][]uint32{{MaxFunctionLocals}}, [2]int{-1}},
		{"function at the cap in parts", [][]uint32{{1, MaxFunctionLocals - 2, 1, 0}}, [2]int{-1}},
		{"function one past", [][]uint32{{MaxFunctionLocals + 1}}, [2]int{0, 0}},
		{"function one past in parts", [][]uint32{{MaxFunctionLocals, 0, 1}}, [2]int{0, 2}},
		{"2^32-1 locals (reviewer's module)", [][]uint32{{1<<32 - 1}}, [2]int{0, 0}},
		{"no uint32 wraparound", [][]uint32{{1, 1<<32 - 1}}, [2]int{0, 1}},
		{"second function one past", [][]uint32{{5}, {MaxFunctionLocals + 1}}, [2]int{1, 0}},
		{"module at the cap", full(perModule), [2]int{-1}},
		{"module one past", append(full(perModule), []uint32{0, 1}), [2]int{perModule, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasm, at := localsModule(tc.bodies...)
			err := Screen(wasm)
			if tc.bad[0] < 0 {
				if err != nil {
					t.Fatalf("Screen = %v, want nil", err)
				}
				out, err := Instrument(wasm)
				if err != nil {
					t.Fatalf("Instrument = %v", err)
				}
				if err := Verify(out); err != nil {
					t.Fatalf("Verify(Instrument) = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Screen = %v, want ErrTooLarge", err)
			}
			if want := at[tc.bad[0]][tc.bad[1]]; errOffset(err) != want {
				t.Fatalf("Screen = %v: names module byte %d, want %d", err, errOffset(err), want)
			}
			if _, err := Instrument(wasm); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Instrument = %v, want ErrTooLarge", err)
			}
		})
	}
}

// TestVerifyLocalsSlack: Verify reads a metered module, in which
// Instrument added the bulk charge's scratch local to a body at the cap.
func TestVerifyLocalsSlack(t *testing.T) {
	wasm := (&mod{types: []fnType{{}}, funcs: []uint32{0}, memory: true,
		locals: [][]byte{append(append([]byte{1}, uleb(MaxFunctionLocals)...), tI32)},
		bodies: [][]byte{{opI32Const, 0, opI32Const, 0, opI32Const, 1, prefixMisc, 0x0b, 0x00}}}).build()
	out, err := Instrument(wasm)
	if err != nil {
		t.Fatalf("Instrument = %v", err)
	}
	if err := Screen(out); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Screen(metered) = %v: the scratch local should pass the cap", err)
	}
	if err := Verify(out); err != nil {
		t.Fatalf("Verify(metered) = %v", err)
	}
}
