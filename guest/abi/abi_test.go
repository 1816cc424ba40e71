package abi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	tests := []struct {
		name    string
		header  any
		payload []byte
		prefix  []byte // bytes already in dst
	}{
		{"empty payload", DecodeRequest{EntryID: "t", Capability: "issue_get", Status: 200}, nil, nil},
		{"empty header object", struct{}{}, []byte("body"), nil},
		{"null header", nil, []byte{0, 1, 2}, nil},
		{"big payload", PlanRequest{Program: "Issue", SymbolsDigest: "abc"}, big, nil},
		{"binary payload", map[string]int{"a": 1}, []byte{0xff, 0, 0xfe, '\n'}, nil},
		{"appends after prefix", "h", []byte("p"), []byte("keep")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame, err := AppendFrame(bytes.Clone(tc.prefix), tc.header, tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(frame, tc.prefix) {
				t.Fatalf("prefix lost")
			}
			h, p, err := SplitFrame(frame[len(tc.prefix):])
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tc.header)
			if !bytes.Equal(h, want) {
				t.Fatalf("header = %q, want %q", h, want)
			}
			if !bytes.Equal(p, tc.payload) {
				t.Fatalf("payload differs (len %d vs %d)", len(p), len(tc.payload))
			}
		})
	}
}

func TestAppendFrameBadHeader(t *testing.T) {
	dst := []byte("x")
	out, err := AppendFrame(dst, func() {}, []byte("p"))
	if err == nil {
		t.Fatal("unencodable header accepted")
	}
	if !bytes.Equal(out, dst) {
		t.Fatalf("dst changed on error: %q", out)
	}
}

func TestSplitFrameHeaderDoesNotAliasPayload(t *testing.T) {
	frame, _ := AppendFrame(nil, "h", []byte("payload"))
	h, p, err := SplitFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(h, "XXXX"...)
	if string(p) != "payload" {
		t.Fatalf("appending to the header overwrote the payload: %q", p)
	}
}

func TestSplitFrameMalformed(t *testing.T) {
	le := func(n uint32, rest string) []byte {
		return append(binary.LittleEndian.AppendUint32(nil, n), rest...)
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"short 1", []byte{1}},
		{"short 3", []byte{0, 0, 0}},
		{"length one past end", le(3, "ab")},
		{"length with nothing after", le(1, "")},
		{"max uint32", le(math.MaxUint32, "abc")},
		{"max uint32 minus 3", le(math.MaxUint32-3, "abc")},
		{"big-endian length", append([]byte{0, 0, 0, 2}, "{}"...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, p, err := SplitFrame(tc.in)
			if !errors.Is(err, ErrFrame) {
				t.Fatalf("err = %v, want ErrFrame", err)
			}
			if h != nil || p != nil {
				t.Fatalf("returned data with an error: %q %q", h, p)
			}
		})
	}
}

func TestSplitFrameEdges(t *testing.T) {
	h, p, err := SplitFrame([]byte{0, 0, 0, 0})
	if err != nil || len(h) != 0 || len(p) != 0 {
		t.Fatalf("zero-length header: %q %q %v", h, p, err)
	}
	h, p, err = SplitFrame(append([]byte{2, 0, 0, 0}, "{}"...))
	if err != nil || string(h) != "{}" || len(p) != 0 {
		t.Fatalf("exact fit: %q %q %v", h, p, err)
	}
}

func TestPackResult(t *testing.T) {
	tests := []struct{ ptr, n uint32 }{
		{0, 0},
		{1, 2},
		{0x10000, 17},
		{math.MaxUint32, 0},
		{0, math.MaxUint32},
		{math.MaxUint32, math.MaxUint32},
		{0xdeadbeef, 0xcafebabe},
	}
	for _, tc := range tests {
		v := PackResult(tc.ptr, tc.n)
		if v>>32 != uint64(tc.ptr) || uint32(v) != tc.n {
			t.Errorf("PackResult(%#x, %#x) = %#x: pointer must be the high half", tc.ptr, tc.n, v)
		}
		if p, n := UnpackResult(v); p != tc.ptr || n != tc.n {
			t.Errorf("UnpackResult(PackResult(%#x, %#x)) = %#x, %#x", tc.ptr, tc.n, p, n)
		}
	}
}

func TestErrorFormatting(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Code: CodeSyntax, Message: "unexpected )", Line: 2, Column: 7}, "2:7: unexpected )"},
		{Error{Code: CodeSyntax, Message: "bad", Line: 1}, "1:0: bad"},
		{Error{Code: CodeCatalog, Message: "catalog \"x\" is not loaded"}, "catalog \"x\" is not loaded"},
		{Error{Code: CodeInternal, Message: "m", Column: 4}, "m"},
	}
	for _, tc := range tests {
		var err error = &tc.err
		if got := err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != tc.err.Code {
			t.Errorf("errors.As lost the code of %v", err)
		}
	}
}

func TestErrorJSON(t *testing.T) {
	b, err := json.Marshal(&Error{Code: CodeCatalog, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"code":"catalog","message":"m"}` {
		t.Fatalf("zero position and hint must be omitted: %s", b)
	}
	in := Error{Code: CodeSyntax, Message: "x", Line: 3, Column: 9, Hint: "h"}
	b, _ = json.Marshal(&in)
	var back Error
	if err := json.Unmarshal(b, &back); err != nil || back != in {
		t.Fatalf("round trip %s -> %+v (%v)", b, back, err)
	}
}

func TestTableCol(t *testing.T) {
	tb := Table{Columns: []string{"id", "title", "id"}}
	for name, want := range map[string]int{"id": 0, "title": 1, "missing": -1, "": -1} {
		if got := tb.Col(name); got != want {
			t.Errorf("Col(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestHookExport(t *testing.T) {
	if got := HookExport(HookDecodeResponse); got != "plasm_hook_decode_response" {
		t.Fatalf("HookExport = %q", got)
	}
}

func FuzzSplitFrame(f *testing.F) {
	seed, _ := AppendFrame(nil, DecodeRequest{EntryID: "t"}, []byte(`{"id":1}`))
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 'x'})
	f.Add([]byte{5, 0, 0, 0, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, p, err := SplitFrame(b)
		if err != nil {
			if !errors.Is(err, ErrFrame) {
				t.Fatalf("unexpected error type %v", err)
			}
			if len(b) >= 4 && uint64(binary.LittleEndian.Uint32(b)) <= uint64(len(b)-4) {
				t.Fatalf("rejected a well-formed frame %x", b)
			}
			return
		}
		if 4+len(h)+len(p) != len(b) {
			t.Fatalf("split lost bytes: %d+%d of %d", len(h), len(p), len(b))
		}
		if int(binary.LittleEndian.Uint32(b)) != len(h) {
			t.Fatalf("header length %d, prefix says %d", len(h), binary.LittleEndian.Uint32(b))
		}
		// Re-framing the parts reproduces the input when the header is JSON.
		if json.Valid(h) {
			var v json.RawMessage = bytes.Clone(h)
			again, err := AppendFrame(nil, v, p)
			if err != nil {
				t.Fatal(err)
			}
			h2, p2, err := SplitFrame(again)
			if err != nil || !bytes.Equal(p2, p) || !json.Valid(h2) {
				t.Fatalf("re-frame failed: %v", err)
			}
		}
	})
}
