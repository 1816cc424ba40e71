package wasmdata

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// module builds a module with one memory of pages pages (exported as
// "memory") and the given raw data section payload; extra sections go
// before it.
func module(pages byte, data []byte, extra ...[]byte) []byte {
	b := []byte(wasmbin.Header)
	b = append(b, 5, 3, 1, 0, pages)                               // memory section: one memory, min pages
	b = append(b, 7, 10, 1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0) // export "memory"
	for _, e := range extra {
		b = append(b, e...)
	}
	if data != nil {
		b = append(b, sectionData)
		b = binary.AppendUvarint(b, uint64(len(data)))
		b = append(b, data...)
	}
	return b
}

// active is a data section payload of active segments (offset, bytes).
func active(segs ...segment) []byte {
	return encode(segs)
}

// image is the memory a module's data section initialises, applied in
// section order as an engine does; nil when the section is not one Merge
// reads.
func image(t testing.TB, mod []byte) map[uint32]byte {
	t.Helper()
	_, payload, ok := dataPayload(mod)
	if !ok {
		return nil
	}
	segs, err := segments(&payload)
	if err != nil {
		return nil
	}
	img := map[uint32]byte{}
	for _, s := range segs {
		for i, c := range s.Init {
			if c != 0 {
				img[s.Offset+uint32(i)] = c
			} else {
				delete(img, s.Offset+uint32(i))
			}
		}
	}
	return img
}

// dataPayload finds the data section by walking the sections afresh.
func dataPayload(mod []byte) (before int, payload wasmbin.Reader, ok bool) {
	found := errors.New("found")
	err := wasmbin.EachSection(mod, func(s wasmbin.Section) error {
		if s.ID == sectionData {
			before, payload = s.At, s.Payload
			return found
		}
		return nil
	})
	return before, payload, err == found
}

func sameImage(a, b map[uint32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestMerge(t *testing.T) {
	seg := func(off uint32, s string) segment { return segment{Offset: off, Init: []byte(s)} }
	tests := []struct {
		name          string
		mod           []byte
		gap           int
		before, after int
		err           error
	}{
		{"neighbours merge", module(1, active(seg(0, "ab"), seg(4, "cd"), seg(100, "ef"))), 8, 3, 2, nil},
		{"out of order", module(1, active(seg(100, "ef"), seg(0, "ab"), seg(3, "c"))), 8, 3, 2, nil},
		{"everything", module(1, active(seg(0, "ab"), seg(4, "cd"), seg(100, "ef"))), 1 << 20, 3, 1, nil},
		{"high offset", module(1, active(seg(0xffff_fff0, "ab"), seg(0xffff_fff4, "cd"))), 8, 2, 1, nil},
		{"empty section", module(1, active()), 8, 0, 0, nil},
		{"overlap", module(1, active(seg(0, "abcd"), seg(2, "x"))), 8, 0, 0, ErrUnsupported},
		{"passive", module(1, []byte{1, 1, 2, 'a', 'b'}), 8, 0, 0, ErrUnsupported},
		{"other memory", module(1, []byte{1, 2, 0, opI32Const, 0, opEnd, 1, 'a'}), 8, 0, 0, ErrUnsupported},
		{"global offset", module(1, []byte{1, 0, 0x23, 0, opEnd, 1, 'a'}), 8, 0, 0, ErrUnsupported},
		{"data count", module(1, active(seg(0, "a")), []byte{sectionDataCount, 1, 1}), 8, 0, 0, ErrUnsupported},
		{"no data", module(1, nil), 8, 0, 0, ErrUnsupported},
		{"past 4 GiB", module(1, active(seg(0xffff_ffff, "ab"))), 8, 0, 0, ErrUnsupported},
		{"count lies", module(1, []byte{0xff, 0xff, 0x03, 0}), 8, 0, 0, ErrMalformed},
		{"bytes overrun", module(1, []byte{1, 0, opI32Const, 0, opEnd, 9, 'a'}), 8, 0, 0, ErrMalformed},
		{"trailing bytes", module(1, append(active(seg(0, "a")), 0)), 8, 0, 0, ErrMalformed},
		{"section overruns", append(module(1, nil), sectionData, 50, 0), 8, 0, 0, ErrMalformed},
		{"two data sections", module(1, active(seg(0, "a")), append([]byte{sectionData, 1}, active()...)), 8, 0, 0, ErrMalformed},
		{"no header", []byte("\x00asn\x01\x00\x00\x00"), 8, 0, 0, ErrMalformed},
		// Offsets are read with wasmbin's S32 (see the package comment).
		{"non-minimal offset", module(1, []byte{1, 0, opI32Const, 0x80, 0x80, 0x80, 0x80, 0x00, opEnd, 1, 'a'}), 8, 1, 1, nil},
		{"offset past 32 bits", module(1, []byte{1, 0, opI32Const, 0x80, 0x80, 0x80, 0x80, 0x08, opEnd, 1, 'a'}), 8, 0, 0, ErrMalformed},
		{"offset's sign bit alone", module(1, signBitAlone), 8, 0, 0, ErrMalformed},
		{"offset of six bytes", module(1, []byte{1, 0, opI32Const, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, opEnd, 1, 'a'}), 8, 0, 0, ErrMalformed},
		{"offset cut short", module(1, []byte{1, 0, opI32Const}), 8, 0, 0, ErrMalformed},
		{"extended constant offset", module(1, []byte{1, 0, opI32Const, 0, opI32Const, 0, 0x6a, opEnd, 1, 'a'}), 8, 0, 0, ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, before, after, err := Merge(tc.mod, tc.gap)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if before != tc.before || after != tc.after {
				t.Fatalf("%d → %d segments, want %d → %d", before, after, tc.before, tc.after)
			}
			if !sameImage(image(t, out), image(t, tc.mod)) {
				t.Fatal("merging changed the initial memory")
			}
		})
	}
}

// signBitAlone is a data section whose one offset, 0x80 0x80 0x80 0x80
// 0x40, sets only the 5th byte's top bit: out of range by the spec,
// which wasmbin.S32 follows, but 0 to wazero v1.12.
var signBitAlone = []byte{1, 0, opI32Const, 0x80, 0x80, 0x80, 0x80, 0x40, opEnd, 1, 'a'}

// TestMergeLeavesWazerosOwnReadings: an offset only wazero's lenient
// reading accepts is refused, so the module runs unmerged, as wazero reads
// it, rather than being rewritten from a value Merge would have to guess.
func TestMergeLeavesWazerosOwnReadings(t *testing.T) {
	mod := module(1, signBitAlone)
	if _, _, _, err := Merge(mod, 8); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Merge = %v, want ErrMalformed", err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	m, err := rt.Instantiate(ctx, mod)
	if err != nil {
		t.Fatalf("wazero refuses it too (then the package comment is stale): %v", err)
	}
	if b, ok := m.Memory().ReadByte(0); !ok || b != 'a' {
		t.Fatalf("wazero placed the data elsewhere: byte 0 is %q", b)
	}
}

// TestMergeErrorOffsets: refusals name module offsets, not offsets in the
// data section.
func TestMergeErrorOffsets(t *testing.T) {
	base := len(module(1, nil)) + 2 // the data section's payload: after its id and one-byte size
	tests := []struct {
		name string
		mod  []byte
		want error
		at   int
	}{
		{"count lies", module(1, []byte{0x05, 0}), ErrMalformed, base + 1},
		{"passive", module(1, []byte{1, 1, 2, 'a', 'b'}), ErrUnsupported, base + 1},
		{"offset past 32 bits", module(1, []byte{1, 0, opI32Const, 0x80, 0x80, 0x80, 0x80, 0x08, opEnd, 1, 'a'}), ErrMalformed, base + 3},
		{"global offset", module(1, []byte{1, 0, 0x23, 0, opEnd, 1, 'a'}), ErrUnsupported, base + 2},
		{"trailing bytes", module(1, []byte{1, 0, opI32Const, 0, opEnd, 1, 'a', 9}), ErrMalformed, base + 7},
		{"bytes overrun", module(1, []byte{1, 0, opI32Const, 0, opEnd, 9, 'a'}), ErrMalformed, base + 6},
		{"section overruns", append(module(1, nil), sectionData, 50, 0), ErrMalformed, len(module(1, nil))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := Merge(tc.mod, 8)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Merge = %v, want %v", err, tc.want)
			}
			if want := fmt.Sprintf("at module byte %d", tc.at); !strings.Contains(err.Error(), want) {
				t.Fatalf("Merge = %v, want %q", err, want)
			}
			t.Log(err)
		})
	}
}

// TestMergeInstantiates: wazero instantiates the merged module and its
// memory holds exactly the original's data.
func TestMergeInstantiates(t *testing.T) {
	orig := module(2, active(segment{70000, []byte("tail")}, segment{1, []byte("head")}, segment{9, []byte{0, 7, 0}}, segment{40, []byte("mid")}))
	merged, before, after, err := Merge(orig, 32)
	if err != nil || before != 4 || after != 2 {
		t.Fatalf("Merge: %d → %d, %v", before, after, err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mem := func(name string, b []byte) []byte {
		m, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, _ := m.Memory().Read(0, m.Memory().Size())
		return out
	}
	if !bytes.Equal(mem("orig", orig), mem("merged", merged)) {
		t.Fatal("the merged module's memory differs from the original's")
	}
}

func FuzzMerge(f *testing.F) {
	f.Add(module(1, active(segment{0, []byte("ab")}, segment{4, []byte("cd")})), 8)
	f.Add(module(1, active(segment{100, []byte("x")}, segment{0, []byte("y")})), 200)
	f.Add(module(1, []byte{1, 1, 2, 'a', 'b'}), 8)
	f.Add(module(1, nil), 0)
	f.Fuzz(func(t *testing.T, mod []byte, gap int) {
		if gap < 0 || gap > 1<<16 {
			return
		}
		out, _, _, err := Merge(mod, gap)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if !sameImage(image(t, out), image(t, mod)) {
			t.Fatal("merging changed the initial memory")
		}
		// Everything but the data section is kept byte for byte.
		ib, _, _ := dataPayload(mod)
		ob, _, _ := dataPayload(out)
		if ib != ob || !bytes.Equal(mod[:ib], out[:ob]) {
			t.Fatal("sections before the data section changed")
		}
	})
}
