//go:build !unix

package sandbox

import "time"

// processCPU is not measured here; CPU metrics then read 0.
func processCPU() time.Duration { return 0 }
