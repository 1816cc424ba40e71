//go:build !linux

package sandbox

import "time"

// threadCPU is not measured here; benchmarks that read it report 0.
func threadCPU() time.Duration { return 0 }
