// Package sandboxtest holds what the tests of several packages share about
// the sandbox: the directory their compiled-module cache lives in.
//
// Compiling the engine takes minutes under -race, loading it from the
// cache well under a second. Every package's tests must name the same
// directory, or a cold `make test` compiles the engine once per name and
// keeps as many copies on disk.
package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheEnv names the variable that, when set, overrides CacheDir.
const CacheEnv = "PLASMD_WASM_TEST_CACHE"

// CacheDir is the compiled-module cache the tests share across packages
// and runs: $PLASMD_WASM_TEST_CACHE, else plasmd-wasm-test-cache-<uid>
// under the temporary directory. The uid, not $USER (unset under some CI
// runners and in containers), keeps users on one machine apart: entries
// are written 0600, and a cache holding another user's entries is unusable.
func CacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("plasmd-wasm-test-cache-%d", os.Getuid()))
}
