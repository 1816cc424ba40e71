package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
)

// moduleCheckCacheDir is the compilation cache module check compiles
// into: none (memory only) for the command, as a module under check is
// usually bytes no cache holds yet. The package's tests set their shared
// test cache, so the committed module and the test guests are not
// compiled again under -race by every test of every run.
var moduleCheckCacheDir string

// moduleCommand runs `plasmd module check FILE.wasm…`.
func moduleCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] != "check" {
		fmt.Fprintln(stderr, "usage: plasmd module check [--timeout D] FILE.wasm…")
		return 2
	}
	fs := flag.NewFlagSet("module check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The bound covers compiling and instantiating every file; a module
	// looping in its initialisation is still stopped by the sandbox's own
	// call deadline.
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: plasmd module check [--timeout D] FILE.wasm…")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: moduleCheckCacheDir})
	if err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return 1
	}
	defer host.Close(context.Background())
	failed := false
	for _, p := range fs.Args() {
		if !checkModule(ctx, host, p, stdout, stderr) {
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

func checkModule(ctx context.Context, host *sandbox.Host, path string, stdout, stderr io.Writer) bool {
	wasm, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return false
	}
	ins, err := host.Inspect(ctx, wasm)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return false
	}
	fmt.Fprintf(stdout, "%s\n  sha256: %s\n", path, ins.Digest)
	if err := host.MeterCheck(ctx, wasm); err != nil {
		fmt.Fprintf(stdout, "  metered: cannot be (%v); runs with wazero's loop checks\n", err)
	} else {
		fmt.Fprintf(stdout, "  metered: can be, if you trust it: serve --metered-module %s\n", ins.Digest)
	}
	if ins.HasABIVersion {
		fmt.Fprintf(stdout, "  abi version: %d (host speaks %d)\n", ins.ABIVersion, abi.Version)
	} else {
		fmt.Fprintf(stdout, "  abi version: unknown (host speaks %d)\n", abi.Version)
	}
	fmt.Fprintf(stdout, "  hooks: %v\n  exports:\n", ins.Hooks)
	for _, e := range ins.Exports {
		fmt.Fprintf(stdout, "    %s %s\n", e.Name, e.Signature)
	}
	fmt.Fprintln(stdout, "  imports:")
	for _, e := range once(ins.Imports) {
		fmt.Fprintf(stdout, "    %s %s\n", e.Name, e.Signature)
	}
	if len(ins.Problems) == 0 {
		fmt.Fprintln(stdout, "  ok")
		return true
	}
	fmt.Fprintln(stdout, "  problems:")
	for _, p := range once(ins.Problems) {
		fmt.Fprintf(stdout, "    - %s\n", p)
	}
	return false
}

// once drops repeats from l, keeping the first of each in order. A module
// may import one function several times (Go's wasip1 runtime and its
// syscall package each import fd_write), and each import of a function
// the host lacks is a problem of its own; a report names each once.
func once[T comparable](l []T) []T {
	seen := make(map[T]bool, len(l))
	out := l[:0:0]
	for _, v := range l {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// addModules reads the module.wasm of every catalog in cats that declares
// one from fsys (root holds one directory per entry id) into into.
func addModules(into map[string][]byte, fsys fs.FS, root string, cats []*catalog.Catalog) error {
	m, err := catalogdir.ReadModules(fsys, root, cats)
	if err != nil {
		return err
	}
	for k, v := range m {
		into[k] = v
	}
	return nil
}

// addDirModules is addModules for a --catalogs path: one catalog directory
// or a directory of them (a .cgs.yaml file cannot carry a module).
func addDirModules(into map[string][]byte, path string, cats []*catalog.Catalog) error {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return nil
	}
	if fileExists(filepath.Join(path, catalogdir.DomainFile)) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("--catalogs: %w", err)
		}
		return addModules(into, os.DirFS(filepath.Dir(abs)), ".", cats)
	}
	return addModules(into, os.DirFS(path), ".", cats)
}
