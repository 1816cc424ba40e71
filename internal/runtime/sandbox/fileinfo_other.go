//go:build !linux

package sandbox

import (
	"io/fs"
	"time"
)

// accessTime is fi's access time, when the platform reports one: here it
// does not, and the cache is pruned in write order.
func accessTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }

// fileOwner is fi's owning user id, when the platform reports one: here it
// does not, and only the mode guards the cache directory.
func fileOwner(fs.FileInfo) (uint32, bool) { return 0, false }
