package catalogdir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A catalog file that is a FIFO or a device is refused by name; opening a
// FIFO blocked until something wrote to it, which hung `plasmd catalog
// check` and a server's start (found by a tester). If this regresses the
// test hangs until its timeout rather than passing.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		make       func(path string) error
	}{
		{"domain.yaml is a FIFO", "domain.yaml", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"mappings.yaml is a FIFO", "mappings.yaml", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"domain.yaml is a device", "domain.yaml", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "c")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"domain.yaml": baseDomain, "mappings.yaml": mappingsWith("")}
			for name, body := range files {
				if name == tc.file {
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.make(filepath.Join(dir, tc.file)); err != nil {
				t.Skipf("cannot make it here: %v", err)
			}
			_, err := Load(os.DirFS(root), "c", "")
			if err == nil || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("err = %v, want a refusal naming %s as not a regular file", err, tc.file)
			}
		})
	}
}
