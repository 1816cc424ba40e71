package wasmmeter

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
)

// nameSection is a module of one custom section named name whose
// content is payload, and the module offset of payload's first byte.
func nameSection(name string, payload []byte) ([]byte, int) {
	p := append(append(uleb(uint32(len(name))), name...), payload...)
	s := sect(secCustom, p)
	wasm := append(append([]byte(nil), header...), s...)
	return wasm, len(wasm) - len(payload)
}

// subsec is a name subsection (id 0 module, 1 functions, 2 locals).
func subsec(id byte, content ...[]byte) []byte {
	c := bytes.Join(content, nil)
	return append(append([]byte{id}, uleb(uint32(len(c)))...), c...)
}

// TestScreenNameSection: Screen reads the "name" section as wazero
// v1.12's decoder does (reviewer's H1: 24 bytes declaring 2^32-1 local
// names made wazero ask for ~96 GB and crashed plasmd out of memory) and
// refuses every count or length the bytes left cannot hold with
// ErrTooLarge, naming it; at the bound it accepts. Only modules Screen
// accepts (all tiny) are compiled, so a regression fails here and never
// hands a bomb to wazero.
func TestScreenNameSection(t *testing.T) {
	const huge = 1<<32 - 1
	empty := []byte{0, 0} // index 0, empty name
	type tcase struct {
		name string
		wasm []byte
		err  error
		at   int // module byte named
	}
	// named: a "name" section of payload, refused (unless err is nil)
	// naming payload byte at.
	named := func(name string, payload []byte, err error, at int) tcase {
		wasm, base := nameSection("name", payload)
		return tcase{name, wasm, err, base + at}
	}
	producers, _ := nameSection("producers", uleb(huge))
	cases := []tcase{
		named("reviewer's module: 2^32-1 local names", subsec(2, []byte{1, 0}, uleb(huge)), ErrTooLarge, 4),
		named("2^32-1 functions with local names", subsec(2, uleb(huge)), ErrTooLarge, 2),
		named("2^32-1 function names", subsec(1, uleb(huge)), ErrTooLarge, 2),
		named("module name of 2^32-1 bytes", subsec(0, uleb(huge)), ErrTooLarge, 2),
		named("function name of 2^32-1 bytes", subsec(1, []byte{1, 0}, uleb(huge)), ErrTooLarge, 4),
		named("local name of 2^32-1 bytes", subsec(2, []byte{1, 0, 1, 0}, uleb(huge)), ErrTooLarge, 6),
		named("function names at the bound", subsec(1, []byte{2}, empty, empty), nil, 0),
		named("function names one past", subsec(1, []byte{3}, empty, empty), ErrTooLarge, 2),
		named("local names at the bound", subsec(2, []byte{1, 0, 2}, empty, empty), nil, 0),
		named("local names one past", subsec(2, []byte{1, 0, 3}, empty, empty), ErrTooLarge, 4),
		named("module name at the bound", subsec(0, []byte{3}, []byte("abc")), nil, 0),
		named("module name one past", subsec(0, []byte{4}, []byte("abc")), ErrTooLarge, 2),
		named("all three, in order", bytes.Join([][]byte{subsec(0, []byte{1, 'm'}), subsec(1, []byte{1, 0, 1, 'f'}),
			subsec(2, []byte{1, 0, 1, 0, 1, 'x'})}, nil), nil, 0),
		named("unknown subsection skipped by its size", append(subsec(9, uleb(huge)), subsec(1, []byte{0})...), nil, 0),
		named("trailing bytes in a known subsection", subsec(1, []byte{0}, []byte{2, 0xff}), ErrMalformed, 3),
		named("subsection past the section", []byte{1, 9, 0}, ErrMalformed, 0),
		// Any custom section's name: wazero allocates its length first.
		{"custom section name of 2^32-1 bytes", append(append([]byte(nil), header...), sect(secCustom, uleb(huge))...), ErrTooLarge, len(header) + 2},
		{"other custom sections are not read", producers, nil, 0},
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasm, want := tc.wasm, tc.at
			err := Screen(wasm)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Screen = %v, want nil", err)
				}
				cm, err := rt.CompileModule(ctx, wasm)
				if err != nil {
					t.Fatalf("wazero refuses what Screen accepts: %v", err)
				}
				_ = cm.Close(ctx)
				if _, err := Instrument(wasm); err != nil {
					t.Fatalf("Instrument = %v", err)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("Screen = %v, want %v", err, tc.err)
			}
			if got := errOffset(err); got != want {
				t.Fatalf("Screen = %v: names module byte %d, want %d", err, got, want)
			}
			if _, err := Instrument(wasm); !errors.Is(err, tc.err) {
				t.Fatalf("Instrument = %v, want %v", err, tc.err)
			}
		})
	}
	if n := len(cases[0].wasm); n != 24 {
		t.Errorf("the reviewer's module is %d bytes, want 24", n)
	}
}
