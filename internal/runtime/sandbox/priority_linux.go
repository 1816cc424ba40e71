package sandbox

import "syscall"

// quarantineNice is the nice value quarantined calls run at. Not 19: a
// thread the kernel starves cannot answer the Go runtime's stop-the-world
// request, and every goroutine of the process waits for it, so a very low
// priority under heavy load would stall all tenants while it protects
// them. At 10 a contended core gives a normal thread about nine times the
// quarantined one's time (CFS weights 1024 against 110).
const quarantineNice = 10

// lowerThreadPriority gives the calling OS thread (locked to its
// goroutine) a low CPU priority, quarantineNice. On Linux, nice is per
// thread. A failure leaves the priority as it was: the call still runs.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), quarantineNice)
}
