package bench

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling OS thread has used. The
// calibration benchmarks report it beside wall time: on a shared 2-core
// machine wall time moves with the neighbours, a thread's CPU time much
// less. (The sandbox package's benchmarks measure the same way.)
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// cpuLoop runs f in b.Loop on a thread locked to the goroutine (a Wasm
// call runs on its caller's thread) and reports that thread's CPU time
// per call as cpu-ns/op.
func cpuLoop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, n := threadCPU(), 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(n), "cpu-ns/op")
}
