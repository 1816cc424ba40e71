package main

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
)

// Compiled modules are cached on disk by default so that MCP hosts, which
// spawn `plasmd stdio` once per chat, start warm: compiling the engine
// takes seconds, loading it from the cache a fraction of one. wazero keys
// each entry by its own version, the target platform and the module's
// digest, and writes entries to a temporary file renamed into place, so
// several plasmd processes can share one directory and a new plasmd or a
// changed module never loads a stale entry.

// cacheOff as --cache-dir keeps compiled modules in memory only.
const cacheOff = "off"

// defaultCacheDir is os.UserCacheDir()/plasmd, or "off" when the user has
// no cache directory (no $HOME, say).
func defaultCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		return cacheOff
	}
	return filepath.Join(base, "plasmd")
}

// resolveCacheDir turns the --cache-dir value into the directory to use,
// creating it; "" means memory only. A directory that cannot be created is
// logged and skipped: a cache speeds the start up, it is never required.
func resolveCacheDir(flag string, log *slog.Logger) string {
	if flag == "" || flag == cacheOff {
		return ""
	}
	if err := os.MkdirAll(flag, 0o700); err != nil {
		log.Warn("compiled-module cache disabled: cannot create its directory", "dir", flag, "err", err)
		return ""
	}
	return flag
}

// cacheMaxBytes turns --cache-max-mib into sandbox.Config.CacheMaxBytes:
// negative is no bound, 0 would be the default there, so it is kept as
// the smallest bound (every entry not used in the last hour goes).
func cacheMaxBytes(mib int64) int64 {
	switch {
	case mib < 0:
		return -1
	case mib == 0:
		return 1
	case mib > math.MaxInt64>>20:
		return math.MaxInt64
	}
	return mib << 20
}
