package sandbox

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling OS thread has used, to the
// nanosecond; a caller that has locked its goroutine to its thread
// measures its own work with it, whatever else the machine runs, which
// wall time on a shared machine does not. (getrusage's RUSAGE_THREAD is
// tick-sampled and reads 0 for blocks of a few hundred microseconds.)
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
