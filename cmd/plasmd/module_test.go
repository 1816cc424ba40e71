package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleCheck(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	dir := t.TempDir()
	build := func(name string) string {
		out := filepath.Join(dir, name+".wasm")
		cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "../../internal/runtime/sandbox/testdata/guests/"+name)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, msg)
		}
		return out
	}
	signer := "../../demo/catalogs/ledger/module.wasm"
	b, err := os.ReadFile(signer)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)

	cases := []struct {
		name string
		file string
		code int
		want []string
	}{
		{"committed module", signer, 0, []string{"sha256: " + hex.EncodeToString(sum[:]), "abi version: 1", "hooks: [prepare_request decode_response]", "plasm.hmac_sha256 (i32,i32,i32,i32,i32)->(i32)", "  ok",
			"metered: can be, if you trust it: serve --metered-module " + hex.EncodeToString(sum[:])}},
		{"wrong abi version", build("badversion"), 1, []string{"problems:", "plasm_abi_version returned 99"}},
		{"missing alloc", build("noalloc"), 1, []string{"problems:", "missing export plasm_alloc", "abi version: unknown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			// Compiling under -race on a loaded machine is slow; the test is
			// about what the check reports, not how fast.
			code := run([]string{"module", "check", "--timeout", "30m", c.file}, &stdout, &stderr)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, stdout.String(), stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, stdout.String())
				}
			}
		})
	}
	var stderr bytes.Buffer
	if code := run([]string{"module", "check"}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Errorf("no file: exit %d", code)
	}
}

// TestModuleCheckListsOnce: a module may import the same function more
// than once (Go's wasip1 runtime and its syscall package each import
// fd_write), and each import of an unknown function is a problem of its
// own; the report names each import and each problem once.
func TestModuleCheckListsOnce(t *testing.T) {
	dir := t.TempDir()
	// Two imports of env.bad ()->(): nothing else, so no memory export and
	// no ABI exports either.
	twice := filepath.Join(dir, "twice.wasm")
	if err := os.WriteFile(twice, []byte("\x00asm\x01\x00\x00\x00"+
		"\x01\x04\x01\x60\x00\x00"+
		"\x02\x15\x02\x03env\x03bad\x00\x00\x03env\x03bad\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		code int
		line string // must appear, exactly once
	}{
		{"../../demo/catalogs/ledger/module.wasm", 0, "    wasi_snapshot_preview1.fd_write (i32,i32,i32,i32)->(i32)\n"},
		{twice, 1, "    env.bad ()->()\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"module", "check", "--timeout", "30m", c.file}, &stdout, &stderr); code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", c.file, code, c.code, stdout.String(), stderr.String())
		}
		out := stdout.String()
		if n := strings.Count(out, c.line); n != 1 {
			t.Errorf("%s: %q listed %d times:\n%s", c.file, c.line, n, out)
		}
		seen := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "    ") {
				if seen[l] {
					t.Errorf("%s: %q listed twice:\n%s", c.file, l, out)
				}
				seen[l] = true
			}
		}
		if c.code != 0 && !strings.Contains(out, "problems:") {
			t.Errorf("%s: no problems listed:\n%s", c.file, out)
		}
	}
}
