//go:build unix

package server_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time every thread of this process has used (user
// plus system). Benchmarks report CPU per op beside wall time because on a
// shared, loaded machine wall time mostly measures the scheduler.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports process CPU per op since c0 (the server, the backend
// and the client all run in the benchmark's process).
func reportCPU(b *testing.B, c0 time.Duration) {
	if cpu := processCPU() - c0; cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
