package core

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// An operation's worker lives in the process that accepted it. A one-shot
// MCP client (a new `plasmd stdio` per request) closes that process right
// after the answer and, if it does not exit, kills it (the TypeScript SDK
// sends SIGTERM after 2 s and SIGKILL after 4 s). No handler runs on
// SIGKILL, so the record would say "running" forever. Each record names
// its owner: the kernel boot, the pid namespace, the pid and the process's
// start time; a process on the same machine and namespace can then tell
// from /proc that the owner is gone (a reused pid has another start time).
// That is only a shortcut: the judgment is the owner's lease in the shared
// store (oplease.go), and /proc is believed only once the lease has also
// gone unrenewed for half its TTL, since a VM clone shares the boot id.

// ownerIdentity is this process's owner string, or "" without /proc.
var ownerIdentity = sync.OnceValue(func() string {
	place := ownerPlace()
	start, ok := procStart(os.Getpid())
	if place == "" || !ok {
		return ""
	}
	return fmt.Sprintf("%s/%d/%s", place, os.Getpid(), start)
})

// ownerPlace names the kernel boot and pid namespace pids are valid in.
func ownerPlace() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
}

// procStart is field 22 of /proc/pid/stat: the start time in clock ticks
// since boot.
func procStart(pid int) (string, bool) {
	start, _, ok := procStat(pid)
	return start, ok
}

// procStat reads pid's start time (field 22) and state (field 3) from
// /proc; readable is false when the file cannot be read or parsed.
func procStat(pid int) (start, state string, readable bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}
	// The command name (field 2) may hold spaces; fields after its ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", false
	}
	return f[19], f[0], true
}

// ownerGone reports whether owner names a process this one can see is no
// longer running: same boot and pid namespace, and the pid is gone or now
// another process.
func ownerGone(owner string) bool {
	place, rest, ok := cutLast2(owner)
	if !ok || place != ownerPlace() {
		return false
	}
	pidS, start, _ := strings.Cut(rest, "/")
	pid, err := strconv.Atoi(pidS)
	if err != nil || pid <= 0 {
		return false
	}
	now, state, readable := procStat(pid)
	if !readable {
		// /proc hides other users' processes under hidepid: only the
		// kernel's "no such process" says gone; EPERM says alive.
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	// A zombie has ended; only its parent has not reaped it yet.
	return now != start || state == "Z"
}

// cutLast2 splits "place/pid/start" into place and "pid/start".
func cutLast2(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", "", false
	}
	j := strings.LastIndexByte(s[:i], '/')
	if j < 0 {
		return "", "", false
	}
	return s[:j], s[j+1:], true
}
