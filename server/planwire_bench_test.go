package server_test

import (
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// benchPlan is the plan of benchProgram, planned natively.
func benchPlan(b *testing.B) *plan.Plan {
	req, cats := planRequest(b)
	byID := map[string]*catalog.Catalog{}
	for _, c := range cats {
		mustFreeze(b, c)
		byID[c.EntryID] = c
	}
	p, err := lang.Plan(req, byID)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// The four costs of moving benchProgram's plan from the engine to the
// host: encoding it (in the guest; measured natively here) and decoding it
// (on the host), as JSON and in the binary wire form.
func BenchmarkPlanWireEncodeJSON(b *testing.B) {
	p := benchPlan(b)
	buf := p.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = p.AppendJSON(buf[:0])
	}
}

func BenchmarkPlanWireEncodeBinary(b *testing.B) {
	p := benchPlan(b)
	buf, err := p.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = p.AppendBinary(buf[:0])
	}
}

func BenchmarkPlanWireDecodeJSON(b *testing.B) {
	buf := benchPlan(b).AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var p plan.Plan
		if err := abi.Unmarshal(buf, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanWireDecodeBinary(b *testing.B) {
	buf, err := benchPlan(b).AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := plan.DecodeBinary(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// mustFreeze freezes c as the engine does once it installs a catalog,
// failing tb if Check refuses it.
func mustFreeze(tb testing.TB, c *catalog.Catalog) {
	tb.Helper()
	if err := c.Freeze(); err != nil {
		tb.Fatal(err)
	}
}
