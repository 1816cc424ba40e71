package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/plasmd/plasmd/guest/abi"
)

// nopEngine answers at once, so the benchmark measures only what tracing
// adds to a guest call.
type nopEngine struct{}

func (nopEngine) Compile(context.Context, *abi.CompileRequest) (*abi.CompiledRequest, error) {
	return &abi.CompiledRequest{Method: "GET"}, nil
}

func (nopEngine) Decode(context.Context, *abi.DecodeRequest, []byte) (*abi.DecodeResponse, error) {
	return &abi.DecodeResponse{}, nil
}

// BenchmarkGuestCallSpan: a guest call as the service makes it, with
// tracing off (no wrapper) and on (SDK, every span sampled and recorded), against
// the direct call as the baseline.
func BenchmarkGuestCallSpan(b *testing.B) {
	req := &abi.CompileRequest{EntryID: "tracker", Capability: "issue_get"}
	// Spans are sampled and recorded but go to no processor, so memory
	// stays flat however many iterations run.
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	cases := []struct {
		name string
		eng  interface {
			Compile(context.Context, *abi.CompileRequest) (*abi.CompiledRequest, error)
		}
	}{
		{"direct", nopEngine{}},
		{"off", New(nil).Engine(nopEngine{})},
		{"sdk", New(tp).Engine(nopEngine{})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx, run := New(tp).Run(context.Background(), RunInfo{SessionID: "bench"})
			defer run.End(nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.eng.Compile(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
