//go:build !linux

package sandbox

import (
	"io/fs"
	"time"
)

// accessTime is fi's access time, when the platform reports one: here it
// is not read, and the cache is pruned in write order.
func accessTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }

// oNoAtime: write order needs no care for reads.
const oNoAtime = 0
