package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResolveCacheDir(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := filepath.Join(t.TempDir(), "nested", "plasmd")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, want string }{
		{"off", ""},
		{"", ""},
		{dir, dir},
		{filepath.Join(file, "sub"), ""}, // cannot be created: memory only, not a failure
	} {
		if got := resolveCacheDir(tc.flag, log); got != tc.want {
			t.Errorf("resolveCacheDir(%q) = %q, want %q", tc.flag, got, tc.want)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("cache dir not created: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	t.Setenv("HOME", "/x/home")
	if got := defaultCacheDir(); got != "/x/cache/plasmd" {
		t.Errorf("defaultCacheDir() = %q", got)
	}
}

// TestStdioDefaultCache spawns `plasmd stdio` the way an MCP host does (no
// cache flag), twice at once on a fresh user cache directory: both answer,
// and the compiled engine lands in <user cache>/plasmd for the next spawn.
func TestStdioDefaultCache(t *testing.T) {
	bin := buildBinary(t)
	cacheHome := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan string, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "stdio", "--demo", "--log-level", "warn")
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
			cmd.Stderr = &stderr
			c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				errs <- err.Error() + ": " + stderr.String()
				return
			}
			defer cs.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plasm_run", Arguments: map[string]any{
				"logical_session_ref": "s0", "program": "x"}})
			if err != nil || res == nil {
				errs <- "call: " + stderr.String()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	entries, _ := filepath.Glob(filepath.Join(cacheHome, "plasmd", "wazero-*", "*"))
	if len(entries) == 0 {
		t.Fatalf("no compiled modules under %s/plasmd", cacheHome)
	}
}

// --cache-max-mib: -1 lifts the bound, 0 is the smallest bound rather
// than sandbox's "default", and a huge value saturates instead of
// wrapping to a negative (unbounded) one.
func TestCacheMaxBytes(t *testing.T) {
	for _, tc := range []struct {
		mib, want int64
	}{
		{-1, -1},
		{-5, -1},
		{0, 1},
		{1, 1 << 20},
		{1024, 1 << 30},
		{math.MaxInt64, math.MaxInt64},
		{math.MaxInt64>>20 + 1, math.MaxInt64},
	} {
		if got := cacheMaxBytes(tc.mib); got != tc.want {
			t.Errorf("cacheMaxBytes(%d) = %d, want %d", tc.mib, got, tc.want)
		}
	}
}
