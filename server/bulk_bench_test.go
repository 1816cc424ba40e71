package server_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
)

// BenchmarkPlanBulkInlined plans benchProgram the way a session does in
// warm sandboxes running the engine with its data merged only ("merged")
// and as the server loads it ("module": enginewasm.Module, whose short
// constant-length memory.copy and memory.fill wasmbulk inlines), in
// alternating rounds of 200 plans so that all see the same machine load.
// All run metered (benchEngineOf). BULK_BOUNDS="64 1024" adds variants
// inlined up to those lengths, to re-measure enginewasm.MaxInlineBulk.
// Reported per variant: the median and best per-plan wall time and the
// median process CPU per plan over rounds, and the median per-round wall
// ratio to "merged" (-x).
func BenchmarkPlanBulkInlined(b *testing.B) {
	req, cats := planRequest(b)
	merged, _, _, err := wasmdata.Merge(enginewasm.Wasm, enginewasm.MaxDataGap)
	if err != nil {
		b.Fatal(err)
	}
	mods := [][]byte{merged, enginewasm.Module()}
	names := []string{"merged", "module"}
	for _, f := range strings.Fields(os.Getenv("BULK_BOUNDS")) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			b.Fatalf("BULK_BOUNDS: %q", f)
		}
		m, _, err := wasmbulk.Inline(merged, uint32(n))
		if err != nil {
			b.Fatal(err)
		}
		mods, names = append(mods, m), append(names, "b"+f)
	}
	var planners []func() error
	for _, m := range mods {
		planners = append(planners, sessionPlannerOf(b, req, cats, m))
	}
	var wall, cpu = make([][]float64, len(mods)), make([][]float64, len(mods))
	var xWall = make([][]float64, len(mods))
	const round = 200
	for b.Loop() {
		w := make([]float64, len(mods))
		for i, plan := range planners {
			c0, t0 := processCPU(), time.Now()
			for range round {
				if err := plan(); err != nil {
					b.Fatal(err)
				}
			}
			w[i] = time.Since(t0).Seconds() * 1e6 / round
			wall[i], cpu[i] = append(wall[i], w[i]), append(cpu[i], (processCPU()-c0).Seconds()*1e6/round)
			xWall[i] = append(xWall[i], w[i]/w[0])
		}
	}
	for i, name := range names {
		b.ReportMetric(median(wall[i]), name+"-µs")
		b.ReportMetric(minOf(wall[i]), name+"-best-µs")
		b.ReportMetric(median(cpu[i]), name+"-cpu-µs")
		b.ReportMetric(median(xWall[i]), name+"-x")
	}
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}
