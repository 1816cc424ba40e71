//go:build unix

package sandbox

import (
	"syscall"
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
