//go:build !linux

package sandbox

// lowerThreadPriority is a no-op where per-thread priorities are not
// portable; quarantined calls then run at the usual priority.
func lowerThreadPriority() {}
