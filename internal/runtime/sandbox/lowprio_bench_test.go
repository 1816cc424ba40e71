package sandbox

import "testing"

// BenchmarkRunLowPriority is what quarantine adds to each call of a
// quarantined pool: handing it to a low-priority worker thread (idle
// workers are reused). The baseline is the same empty call on the
// caller's goroutine.
func BenchmarkRunLowPriority(b *testing.B) {
	n := 0
	f := func() { n++ }
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			f()
		}
	})
	b.Run("low-priority-thread", func(b *testing.B) {
		c0 := processCPU()
		for b.Loop() {
			runLowPriority(f)
		}
		reportCPU(b, c0, 0)
	})
}
