package wasmmeter

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

var moduleByte = regexp.MustCompile(`at module byte (\d+)`)

// errOffsets are the module offsets an error names ("at module byte N"),
// outermost first.
func errOffsets(err error) []int {
	var out []int
	for _, m := range moduleByte.FindAllStringSubmatch(err.Error(), -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// errOffset is the innermost module offset an error names; -1 when it
// names none.
func errOffset(err error) int {
	all := errOffsets(err)
	if len(all) == 0 {
		return -1
	}
	return all[len(all)-1]
}

// TestScreenErrorOffsets: Screen names the bad byte by its offset in the
// module, not in the section or body being read, so a vendor finds it in
// a hex dump of the file. The code-section cases have a type, function,
// memory and export section before them, and their bad byte is counted
// from the module's end (build appends each body's end), independently
// of how Screen walks to it.
func TestScreenErrorOffsets(t *testing.T) {
	withBodies := func(bodies ...[]byte) []byte {
		funcs := make([]uint32, len(bodies))
		return (&mod{
			types: []fnType{{}}, funcs: funcs, memory: true,
			exports: []export{{"memory", 2, 0}}, bodies: bodies,
		}).build()
	}
	fromEnd := func(b []byte, n int) int { return len(b) - n }
	unknownOp := withBodies([]byte{0x01}, []byte{0x01, 0xff})
	longLEB := withBodies([]byte{0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a})
	typedBlock := withBodies([]byte{0x02, 0x63, 0x00, 0x0b})
	cutBody := withBodies([]byte{0x01})
	cutBody[len(cutBody)-1] = 0x41 // the end is now an i32.const whose immediate is past the body
	memidx := withBodies([]byte{0x41, 0, 0x28, 0x40, 0, 0, 0x1a})
	noCode := (&mod{types: []fnType{{}}, funcs: []uint32{0}, memory: true, exports: []export{{"memory", 2, 0}}}).build()
	overrun := withBodies([]byte{0x01})
	overrun = overrun[:len(overrun)-1]
	tests := []struct {
		name string
		wasm []byte
		want error
		at   int  // the module offset the error names
		b    byte // the byte there
	}{
		{"unknown opcode in the second body", unknownOp, ErrUnsupported, fromEnd(unknownOp, 2), 0xff},
		{"six-byte local index", longLEB, ErrMalformed, fromEnd(longLEB, 8), 0x80},
		{"typed block type", typedBlock, ErrTypedRef, fromEnd(typedBlock, 4), 0x63},
		{"immediate cut by the body's end", cutBody, ErrMalformed, len(cutBody), 0},
		{"memarg with a memory index", memidx, ErrUnsupported, fromEnd(memidx, 5), 0x40},
		{"code section overruns the module", overrun, ErrMalformed, len(noCode), secCode},
		{"param (ref null func)", (&mod{types: []fnType{{params: []byte{0x63, 0x70}}}}).build(), ErrTypedRef, 13, 0x63},
		{"bytes after the function section", cat(header, sect(secFunction, []byte{0, 7})), ErrMalformed, 11, 7},
		{"global mutability", cat(header, sect(secGlobal, []byte{1, 0x7f, 2, 0x41, 0, 0x0b})), ErrMalformed, 12, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Screen(tc.wasm)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Screen = %v, want %v", err, tc.want)
			}
			if got := errOffset(err); got != tc.at {
				t.Fatalf("Screen = %v: names module byte %d, want %d", err, got, tc.at)
			}
			if tc.at < len(tc.wasm) && tc.wasm[tc.at] != tc.b {
				t.Fatalf("test bug: module byte %d is %#x, not %#x", tc.at, tc.wasm[tc.at], tc.b)
			}
			// Instrument and Verify screen first: the same error.
			if _, ierr := Instrument(tc.wasm); ierr == nil || ierr.Error() != err.Error() {
				t.Fatalf("Instrument = %v, want Screen's %v", ierr, err)
			}
			t.Log(err)
		})
	}
}

// TestRewriteErrorOffsets: Instrument's and Verify's own refusals, past
// Screen, also name module offsets.
func TestRewriteErrorOffsets(t *testing.T) {
	second := func(body ...byte) []byte {
		return (&mod{types: []fnType{{}}, funcs: []uint32{0, 0}, memory: true, bodies: [][]byte{{0x01}, body}}).build()
	}
	tests := []struct {
		name string
		wasm []byte
		want error
		end  int  // the bad byte, counted back from the module's end
		b    byte // the byte there
	}{
		{"tail call", second(0x12, 0x00), ErrUnsupported, 3, opReturnCall},
		{"else outside an if", second(0x01, 0x05), ErrMalformed, 2, opElse},
		{"branch past every label", second(0x0c, 0x05), ErrMalformed, 3, opBr},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Screen(tc.wasm); err != nil {
				t.Fatalf("Screen = %v: the case should reach Instrument", err)
			}
			_, err := Instrument(tc.wasm)
			want := len(tc.wasm) - tc.end
			if !errors.Is(err, tc.want) || errOffset(err) != want || tc.wasm[want] != tc.b {
				t.Fatalf("Instrument = %v, want %v at module byte %d", err, tc.want, want)
			}
			t.Log(err)
		})
	}

	good := instrumented(t, tamperModule().build())
	stray := []byte{0x41, 0x3a, 0x24, 0x00} // the marker global.set 0 ...
	i := bytes.Index(good, stray)
	if i < 0 {
		t.Fatal("marker not found")
	}
	tampered := bytes.Clone(good)
	tampered[i+3] = 2 // ... now sets the fuel
	err := Verify(tampered)
	if want := i + 2; !errors.Is(err, ErrUnmetered) || errOffset(err) != want {
		t.Fatalf("Verify = %v, want ErrUnmetered at module byte %d", err, want)
	}
	if got := fmt.Sprint(err); !regexp.MustCompile(`function body \d+ at module byte \d+: `).MatchString(got) {
		t.Fatalf("Verify = %q: no body offset", got)
	}
}
