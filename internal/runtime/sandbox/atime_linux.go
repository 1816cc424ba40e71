package sandbox

import (
	"io/fs"
	"syscall"
	"time"
)

// accessTime is fi's access time, when the platform reports one.
func accessTime(fi fs.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Atim.Sec, st.Atim.Nsec), true
}

// oNoAtime opens a file without marking it read: the start-up probe reads
// every entry's header, and would otherwise make each look used today to
// the prune (cacheprune.go).
const oNoAtime = syscall.O_NOATIME
