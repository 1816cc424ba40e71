package sandbox

import (
	"bytes"
	"context"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine"
)

var benchMsg = bytes.Repeat([]byte("plasmd!\n"), 8) // 64 bytes

// BenchmarkSandboxCall is a warm ping round trip through the sandbox:
// pool checkout, deadline, input write, guest call, envelope check, copy out.
func BenchmarkSandboxCall(b *testing.B) {
	ctx := context.Background()
	tn := testHost.Tenant("bench", TenantSpec{Module: testEngine})
	b.Cleanup(tn.Close)
	if _, err := tn.Ping(ctx, benchMsg); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchMsg)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := tn.Ping(ctx, benchMsg)
		if err != nil || len(out) != len(benchMsg) {
			b.Fatal(out, err)
		}
	}
}

// BenchmarkNativeCall is the same op without the sandbox, the baseline the
// sandbox's cost is measured against.
func BenchmarkNativeCall(b *testing.B) {
	e := engine.New()
	b.SetBytes(int64(len(benchMsg)))
	b.ReportAllocs()
	for b.Loop() {
		out := e.Handle(abi.ExportPing, benchMsg)
		if len(out) != len(benchMsg)+1 || out[0] != abi.StatusOK {
			b.Fatal(out)
		}
	}
}
