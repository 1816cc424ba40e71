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
