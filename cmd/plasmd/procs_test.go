package main

import "testing"

func TestHostProcs(t *testing.T) {
	for _, tc := range []struct {
		env         string
		procs, want int
	}{
		{"", 2, 3},
		{"", 1, 2},
		{"4", 2, 0}, // the operator's GOMAXPROCS wins
	} {
		if got := hostProcs(tc.env, tc.procs); got != tc.want {
			t.Errorf("hostProcs(%q, %d) = %d, want %d", tc.env, tc.procs, got, tc.want)
		}
	}
}

func TestRunningSlots(t *testing.T) {
	for _, tc := range []struct{ flag, cores, want int }{
		{0, 2, 2},   // one per usable core, not per P (GOMAXPROCS was raised)
		{0, 0, 0},   // reserveHostProc never ran: the sandbox's default
		{3, 2, 3},   // the operator's --max-running wins
		{-1, 2, -1}, // no bound
	} {
		if got := runningSlots(tc.flag, tc.cores); got != tc.want {
			t.Errorf("runningSlots(%d, %d) = %d, want %d", tc.flag, tc.cores, got, tc.want)
		}
	}
}
