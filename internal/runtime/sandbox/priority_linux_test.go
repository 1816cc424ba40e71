package sandbox

import (
	"runtime"
	"syscall"
	"testing"
)

// threadNice is the calling thread's nice value (the raw syscall returns
// 20 - nice).
func threadNice(t *testing.T) int {
	t.Helper()
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestRunLowPriority: f runs on a thread at quarantineNice, the caller's thread
// keeps its priority, and f's panic reaches the caller.
func TestRunLowPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadNice(t)
	var inside int
	runLowPriority(func() { inside = threadNice(t) })
	if inside != quarantineNice {
		t.Fatalf("nice inside: %d, want %d", inside, quarantineNice)
	}
	if after := threadNice(t); after != before {
		t.Fatalf("caller's nice changed from %d to %d", before, after)
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the panic", p)
		}
	}()
	runLowPriority(func() { panic("boom") })
}
