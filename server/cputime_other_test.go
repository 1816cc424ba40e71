//go:build !unix

package server_test

import (
	"testing"
	"time"
)

// processCPU is not measured here; CPU metrics then read 0.
func processCPU() time.Duration { return 0 }

// reportCPU reports nothing where CPU time is not measured.
func reportCPU(*testing.B, time.Duration) {}
