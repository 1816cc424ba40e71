package core

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// ownerGone tells a process that ended from one still running, and says
// nothing of owners it cannot see (another machine or pid namespace).
func TestOwnerGone(t *testing.T) {
	me := ownerIdentity()
	if me == "" {
		t.Skip("no /proc: owners are never judged gone, only deadlines")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start, ok := procStart(cmd.Process.Pid)
	if !ok {
		t.Fatal("no start time for a running child")
	}
	child := fmt.Sprintf("%s/%d/%s", ownerPlace(), cmd.Process.Pid, start)
	if ownerGone(child) {
		t.Error("a running child judged gone")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, owner string
		gone        bool
	}{
		{"this process", me, false},
		{"ended child", child, true},
		{"pid reused", fmt.Sprintf("%s/%d/1", ownerPlace(), os.Getpid()), true},
		{"other machine", fmt.Sprintf("other-boot/pid:[1]/%d/1", cmd.Process.Pid), false},
		{"garbage", "x", false},
		{"empty", "", false},
	} {
		if got := ownerGone(tc.owner); got != tc.gone {
			t.Errorf("%s: ownerGone(%q) = %v, want %v", tc.name, tc.owner, got, tc.gone)
		}
	}
}
