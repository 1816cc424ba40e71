package wasmmeter

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// capModule is a module of the given leading sections followed by one
// section id of n copies of entry, the last of which is the one a cap
// refuses; it returns the module and that last entry's module offset.
func capModule(lead []byte, id byte, n int, entry []byte) ([]byte, int) {
	payload := append(uleb(uint32(n)), bytes.Repeat(entry, n)...)
	wasm := append(append(append([]byte(nil), header...), lead...), sect(id, payload)...)
	return wasm, len(wasm) - len(entry)
}

// tableEntry is a funcref table type with minimum min and no maximum.
func tableEntry(min uint32) []byte { return append([]byte{tFuncref, 0x00}, uleb(min)...) }

// TestScreenCaps: every cap accepts a module at its bound and refuses one
// past it with ErrTooLarge naming the entry that passed it. The modules
// are only read, never compiled: nothing here allocates what they ask for.
func TestScreenCaps(t *testing.T) {
	oneType := sect(secType, vec(1, []byte{0x60, 0, 0}))
	importTable := sect(secImport, vec(1, []byte{1, 'e', 1, 't', 1, tFuncref, 0x00, 0x00}))
	importGlobal := sect(secImport, vec(1, []byte{1, 'e', 1, 'g', 3, tI32, 0x00}))
	global := []byte{tI32, 0x00, opI32Const, 0x00, opEnd}
	passiveElem := []byte{0x01, 0x00, 0x00} // passive, funcref kind, no elements
	passiveData := []byte{0x01, 0x00}       // passive, no bytes
	bigElem := func(n uint32) []byte {      // one passive segment of n elements (function 0)
		return append(append([]byte{0x01, 0x00}, uleb(n)...), make([]byte, n)...)
	}
	code := func(instrs ...byte) []byte {
		body := append([]byte{0x00}, append(instrs, opEnd)...)
		return append(uleb(uint32(len(body))), body...)
	}
	tableAndFunc := append(append(append([]byte(nil), oneType...), sect(secFunction, vec(1, []byte{0}))...),
		sect(secTable, vec(1, tableEntry(1)))...)
	cases := []struct {
		name  string
		lead  []byte
		id    byte
		n     int
		entry []byte
		ok    bool
	}{
		{"tables at the cap", nil, secTable, MaxTables, tableEntry(0), true},
		{"tables past the cap", nil, secTable, MaxTables + 1, tableEntry(0), false},
		{"imported tables count", importTable, secTable, MaxTables, tableEntry(0), false},
		{"table elements at the cap", nil, secTable, 1, tableEntry(MaxTableElements), true},
		{"table elements past the cap", nil, secTable, 1, tableEntry(MaxTableElements + 1), false},
		{"table of 2^27 elements", nil, secTable, 1, tableEntry(1 << 27), false},
		{"table elements summed", nil, secTable, 2, tableEntry(MaxTableElements/2 + 1), false},
		{"declared maximum not counted", nil, secTable, 1, []byte{tFuncref, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f}, true},
		{"globals at the cap", nil, secGlobal, MaxGlobals, global, true},
		{"globals past the cap", nil, secGlobal, MaxGlobals + 1, global, false},
		{"imported globals count", importGlobal, secGlobal, MaxGlobals, global, false},
		{"element segments at the cap", nil, secElement, MaxElementSegments, passiveElem, true},
		{"element segments past the cap", nil, secElement, MaxElementSegments + 1, passiveElem, false},
		{"segment elements at the cap", nil, secElement, 1, bigElem(MaxSegmentElements), true},
		{"segment elements past the cap", nil, secElement, 1, bigElem(MaxSegmentElements + 1), false},
		{"segment elements summed", nil, secElement, 2, bigElem(MaxSegmentElements/2 + 1), false},
		{"data segments at the cap", nil, secData, MaxDataSegments, passiveData, true},
		{"data segments past the cap", nil, secData, MaxDataSegments + 1, passiveData, false},
		{"table.size", tableAndFunc, secCode, 1, code(prefixMisc, 0x10, 0x00, 0x1a), true},
		{"table.fill", tableAndFunc, secCode, 1, code(opI32Const, 0, 0xd0, tFuncref, opI32Const, 1, prefixMisc, 0x11, 0x00), true},
		{"table.grow", tableAndFunc, secCode, 1, code(0xd0, tFuncref, opI32Const, 1, prefixMisc, 0x0f, 0x00, 0x1a), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasm, at := capModule(tc.lead, tc.id, tc.n, tc.entry)
			err := Screen(wasm)
			if tc.ok {
				if err != nil {
					t.Fatalf("Screen = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Screen = %v, want ErrTooLarge", err)
			}
			if tc.id == secCode { // the offending instruction, not the body
				at = bytes.LastIndex(wasm, []byte{prefixMisc, miscTableGrow})
			}
			if got := errOffset(err); got != at {
				t.Fatalf("Screen = %v: names module byte %d, want %d", err, got, at)
			}
			if _, ierr := Instrument(wasm); !errors.Is(ierr, ErrTooLarge) {
				t.Fatalf("Instrument = %v, want ErrTooLarge", ierr)
			}
		})
	}
}

// TestScreenCapsGoModules: the modules the Go toolchain builds (the
// engine, the demo vendor module) are well inside every cap.
func TestScreenCapsGoModules(t *testing.T) {
	ledger, err := os.ReadFile("../../../demo/catalogs/ledger/module.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for name, wasm := range map[string][]byte{"engine": enginewasm.Module(), "ledger": ledger} {
		if err := Screen(wasm); err != nil {
			t.Errorf("%s: Screen = %v", name, err)
		}
	}
}

// FuzzScreen: Screen never panics, refuses only with its typed errors and
// names only offsets inside the module; seeded with modules near the caps.
func FuzzScreen(f *testing.F) {
	f.Add(sumModule().build())
	for _, seed := range [][]byte{
		append(uleb(2), append(tableEntry(5), tableEntry(1<<27)...)...),
		append(uleb(1), tFuncref, 0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x0f),
	} {
		f.Add(append(append([]byte(nil), header...), sect(secTable, seed)...))
	}
	f.Add(append(append([]byte(nil), header...), sect(secElement, vec(2, []byte{1, 0, 0}, []byte{1, 0, 2, 0, 0}))...))
	f.Add(append(append([]byte(nil), header...), sect(secData, vec(2, []byte{1, 0}, []byte{0, opI32Const, 0, opEnd, 1, 7}))...))
	for _, p := range [][]byte{
		subsec(2, []byte{1, 0}, uleb(1<<32-1)),
		append(subsec(0, []byte{1, 'm'}), subsec(1, []byte{1, 0, 1, 'f'})...),
		append(subsec(2, []byte{1, 0, 1, 0, 1, 'x'}), subsec(7, []byte{0xff})...),
	} {
		wasm, _ := nameSection("name", p)
		f.Add(wasm)
	}
	wasm, _ := localsModule([]uint32{1, MaxFunctionLocals - 1}, []uint32{0, 1<<32 - 1})
	f.Add(wasm)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		err := Screen(wasm)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTypedRef) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("untyped error: %v", err)
		}
		for _, at := range errOffsets(err) {
			if at > len(wasm) {
				t.Fatalf("%v: names module byte %d of a %d-byte module", err, at, len(wasm))
			}
		}
	})
}
