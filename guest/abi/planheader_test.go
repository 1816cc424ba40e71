package abi

import (
	"reflect"
	"testing"
)

func TestPlanHeaderRoundTrip(t *testing.T) {
	for _, req := range []*PlanRequest{
		{},
		{Program: "Issue(\"iss-1\")"},
		{Program: "a = Issue{status=\"open\"}\na", SymbolsDigest: "00ff", Entries: []string{"tracker", "kanban", ""}},
		{Program: string(make([]byte, 300)), Entries: []string{"ü"}},
		{Program: "Issue", Entries: []string{"tracker"}, PlanWire: 1},
		{PlanWire: 300},
	} {
		var got PlanRequest
		if err := ParsePlanHeader(AppendPlanHeader(nil, req), &got); err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if len(req.Entries) == 0 {
			req.Entries = []string{}
		}
		if !reflect.DeepEqual(&got, req) {
			t.Errorf("round trip %+v, got %+v", req, &got)
		}
	}
}

// A header without PlanWire is byte for byte what engines before
// ExportPlanWire parse: they refuse anything after the entries.
func TestPlanHeaderWithoutWireIsUnchanged(t *testing.T) {
	req := &PlanRequest{Program: "x", SymbolsDigest: "d", Entries: []string{"a"}}
	want := []byte{PlanHeaderTag, 1, 'x', 1, 'd', 1, 1, 'a'}
	if got := AppendPlanHeader(nil, req); string(got) != string(want) {
		t.Fatalf("header %x, want %x", got, want)
	}
	req.PlanWire = 1
	if got := AppendPlanHeader(nil, req); string(got) != string(append(want, 1)) {
		t.Fatalf("header with PlanWire %x, want %x", got, append(want, 1))
	}
}

func TestPlanHeaderMalformed(t *testing.T) {
	good := AppendPlanHeader(nil, &PlanRequest{Program: "x", SymbolsDigest: "d", Entries: []string{"a", "b"}})
	for _, b := range [][]byte{
		{PlanHeaderTag},
		good[:len(good)-1],
		append(append([]byte(nil), good...), 0),
		{PlanHeaderTag, 0x05, 'a'},
		{PlanHeaderTag, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		{PlanHeaderTag, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		append(append([]byte(nil), good...), 1, 1),                      // wire version, then more
		append(append([]byte(nil), good...), 0x80),                      // truncated wire version
		append(append([]byte(nil), good...), 0xff, 0xff, 0xff, 0xff, 1), // wire version out of range
	} {
		var req PlanRequest
		if err := ParsePlanHeader(b, &req); err == nil {
			t.Errorf("%x parsed as %+v", b, req)
		}
	}
	var req PlanRequest
	if err := ParsePlanHeader([]byte(`{"program":"p","entries":["e"]}`), &req); err != nil || req.Program != "p" {
		t.Errorf("JSON header: %+v, %v", req, err)
	}
}

// FuzzPlanHeader feeds arbitrary bytes to the binary decoder: it must
// never panic, and whatever it accepts must encode back to the same bytes.
func FuzzPlanHeader(f *testing.F) {
	f.Add(AppendPlanHeader(nil, &PlanRequest{Program: "Issue", SymbolsDigest: "ab", Entries: []string{"tracker"}}))
	f.Add([]byte{PlanHeaderTag, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		b = append([]byte{PlanHeaderTag}, b...)
		var req PlanRequest
		if err := ParsePlanHeader(b, &req); err != nil {
			return
		}
		if again := AppendPlanHeader(nil, &req); string(again) != string(b) {
			// Uvarints have one minimal form; a non-minimal length is
			// accepted but re-encodes shorter, which is fine as long as
			// the decoded request is the same.
			var back PlanRequest
			if err := ParsePlanHeader(again, &back); err != nil || !reflect.DeepEqual(&back, &req) {
				t.Fatalf("%x decoded to %+v, which re-encodes to %x", b, req, again)
			}
		}
	})
}
