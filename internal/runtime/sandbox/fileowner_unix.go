//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// fileOwner is fi's owning user id, when the platform reports one.
func fileOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
