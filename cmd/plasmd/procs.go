package main

import (
	"os"
	"runtime"
)

// hostProcs is the GOMAXPROCS plasmd runs with: one more than Go's default
// (the usable cores), unless GOMAXPROCS is set in the environment (0: keep
// what Go chose). Guest calls are bounded to one per core by default
// (--max-running) and each holds a Go P while it runs, so with GOMAXPROCS
// at the core count a host whose every slot runs a guest (a spinning one,
// or a quarantined one the kernel is starving) has no P left for HTTP,
// timers, wazero's deadline watchers and the garbage collector's workers,
// and a neighbour's calls wait for them. The slots stay one per core; the
// extra P only keeps host work moving (docs/decisions.md, "CPU is shared
// by the gate, then by the kernel").
func hostProcs(env string, procs int) int {
	if env != "" {
		return 0
	}
	return procs + 1
}

// usableCores is GOMAXPROCS as plasmd found it: the cores Go may use,
// which follows a container's CPU quota (runtime.NumCPU does not). Zero
// until reserveHostProc runs (tests calling run directly).
var usableCores int

// reserveHostProc applies hostProcs, remembering the usable cores first:
// the guest-call slots are one per usable core, not one per P.
func reserveHostProc() {
	usableCores = runtime.GOMAXPROCS(0)
	if n := hostProcs(os.Getenv("GOMAXPROCS"), usableCores); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

// runningSlots is the --max-running value plasmd passes on: 0 becomes the
// usable cores, since GOMAXPROCS, the sandbox's own default, was raised
// by one.
func runningSlots(flag, cores int) int {
	if flag == 0 && cores > 0 {
		return cores
	}
	return flag
}
