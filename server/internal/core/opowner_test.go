package core

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
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

// A killed owner its parent has not reaped yet (a zombie) has ended.
func TestOwnerGoneZombie(t *testing.T) {
	if ownerIdentity() == "" {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { _ = cmd.Wait() }()
	start, ok := procStart(cmd.Process.Pid)
	if !ok {
		t.Fatal("no start time for a running child")
	}
	owner := fmt.Sprintf("%s/%d/%s", ownerPlace(), cmd.Process.Pid, start)
	if ownerGone(owner) {
		t.Fatal("a running child judged gone")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped until the deferred Wait: wait for the kernel to mark it
	// a zombie (no timing threshold; the test's own timeout bounds it).
	for {
		if _, state, ok := procStat(cmd.Process.Pid); ok && state == "Z" {
			break
		}
		runtime.Gosched()
	}
	if !ownerGone(owner) {
		t.Error("a zombie owner judged alive")
	}
}
