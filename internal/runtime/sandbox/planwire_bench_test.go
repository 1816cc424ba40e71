package sandbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// BenchmarkPlanAnswerForm plans the 3-line program through the engine
// with the answer as JSON (what a host before the binary form asked for
// and decoded with abi.Unmarshal) and in the binary wire form (PlanWith),
// alternating within every iteration so both see the same machine load:
// on a shared machine, separate benchmarks minutes apart differ by more
// than the change measured. Reported: the median wall time of each form
// per plan.
func BenchmarkPlanAnswerForm(b *testing.B) {
	ctx := context.Background()
	eng := demoEngine(b, nil, "answer-form", DefaultLimits())
	req := &abi.PlanRequest{Program: loopProgram, Entries: []string{"tracker"}}
	head := *req
	frame := abi.AppendFrameRaw(nil, abi.AppendPlanHeader(nil, &head), nil)
	asJSON := func() error {
		return eng.Tenant.do(ctx, abi.ExportPlan, needsOf(req.Entries), frame, nil, func(out []byte) error {
			if out[0] != '{' {
				b.Fatalf("answer starts %#x, want JSON", out[0])
			}
			var p plan.Plan
			return abi.Unmarshal(out, &p)
		})
	}
	asBinary := func() error { _, err := eng.PlanWith(ctx, req, nil); return err }
	for _, f := range []func() error{asJSON, asBinary} { // warm
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	var js, bin []time.Duration
	for b.Loop() {
		for i, f := range []func() error{asJSON, asBinary} {
			start := time.Now()
			if err := f(); err != nil {
				b.Fatal(err)
			}
			if d := time.Since(start); i == 0 {
				js = append(js, d)
			} else {
				bin = append(bin, d)
			}
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds()) / 1e3
	}
	b.ReportMetric(median(js), "json-µs/plan")
	b.ReportMetric(median(bin), "binary-µs/plan")
}
