//go:build !unix

package sandbox

import "io/fs"

// fileOwner is fi's owning user id, when the platform reports one: here it
// does not, and only the mode guards the cache directory.
func fileOwner(fs.FileInfo) (uint32, bool) { return 0, false }
