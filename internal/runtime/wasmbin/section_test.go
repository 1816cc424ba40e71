package wasmbin

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func module(sections ...[]byte) []byte {
	return bytes.Join(append([][]byte{[]byte(Header)}, sections...), nil)
}

func TestEachSection(t *testing.T) {
	m := module(AppendSection(nil, 1, []byte{0, 1, 2}), AppendSection(nil, 0, nil), AppendSection(nil, 10, make([]byte, 200)))
	var got []Section
	if err := EachSection(m, func(s Section) error { got = append(got, s); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id             byte
		at, base, size int
	}{{1, 8, 10, 3}, {0, 13, 15, 0}, {10, 15, 18, 200}}
	if len(got) != len(want) {
		t.Fatalf("%d sections, want %d", len(got), len(want))
	}
	for i, w := range want {
		s := got[i]
		if s.ID != w.id || s.At != w.at || s.Payload.Base != w.base || len(s.Payload.Buf) != w.size || s.Payload.Pos != 0 {
			t.Fatalf("section %d = %d at %d, payload at %d of %d bytes", i, s.ID, s.At, s.Payload.Base, len(s.Payload.Buf))
		}
	}
	if got[2].End() != len(m) {
		t.Fatalf("last section ends at %d of %d", got[2].End(), len(m))
	}
	stop := errors.New("stop")
	n := 0
	if err := EachSection(m, func(Section) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("stopping: %v after %d", err, n)
	}
}

func TestEachSectionRefuses(t *testing.T) {
	tests := []struct {
		name string
		mod  []byte
		at   string
	}{
		{"no header", []byte("\x00asm\x02\x00\x00\x00"), "at module byte 0"},
		{"size cut short", module([]byte{1, 0x80}), "at module byte 10"},
		{"overrun", module([]byte{1, 5, 0}), "section 1 at module byte 8 overruns the module (5 bytes, 1 left)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := EachSection(tc.mod, func(Section) error { return nil })
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.at) {
				t.Fatalf("EachSection = %v, want ErrMalformed %q", err, tc.at)
			}
		})
	}
}

func TestReplace(t *testing.T) {
	m := module(AppendSection(nil, 1, []byte{9}), AppendSection(nil, 11, []byte{1, 2, 3}), AppendSection(nil, 0, []byte{0}))
	var data Section
	_ = EachSection(m, func(s Section) error {
		if s.ID == 11 {
			data = s
		}
		return nil
	})
	got := data.Replace(m, make([]byte, 130))
	want := module(AppendSection(nil, 1, []byte{9}), append([]byte{11, 0x82, 0x01}, make([]byte, 130)...), AppendSection(nil, 0, []byte{0}))
	if !bytes.Equal(got, want) {
		t.Fatalf("Replace = % x", got)
	}
}

// FuzzSections: any bytes are framed into sections that tile the module
// after the header, or refused with ErrMalformed; replacing every section
// with its own payload gives the module back.
func FuzzSections(f *testing.F) {
	f.Add(module(AppendSection(nil, 1, []byte{0, 1, 2}), AppendSection(nil, 10, make([]byte, 200))))
	f.Add(module([]byte{1, 5, 0}))
	f.Add([]byte("not wasm"))
	f.Fuzz(func(t *testing.T, m []byte) {
		next := len(Header)
		err := EachSection(m, func(s Section) error {
			if s.At != next || s.Payload.Base <= s.At || s.End() > len(m) {
				t.Fatalf("section at %d (payload %d, end %d), expected at %d of %d", s.At, s.Payload.Base, s.End(), next, len(m))
			}
			if r := s.Replace(m, s.Payload.Buf); !bytes.Equal(r, m) && canonicalSize(m, s) {
				t.Fatalf("replacing section at %d with itself changed the module", s.At)
			}
			next = s.End()
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if next != len(m) {
			t.Fatalf("sections end at %d of %d", next, len(m))
		}
	})
}

// canonicalSize: the section's size is minimally encoded, so re-encoding
// it gives the same bytes.
func canonicalSize(m []byte, s Section) bool {
	return bytes.Equal(m[s.At+1:s.Payload.Base], AppendU32(nil, uint32(len(s.Payload.Buf))))
}
