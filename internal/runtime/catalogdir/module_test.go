package catalogdir

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestReadModulesSizeLimit: a module.wasm over MaxModuleSize is refused
// with its path and the limit; one at the limit is read whole.
func TestReadModulesSizeLimit(t *testing.T) {
	cats := []*catalog.Catalog{{EntryID: "v", Module: &catalog.Module{}}}
	for _, tc := range []struct {
		name string
		size int
		want string // error text, "" when read
	}{
		{"at the limit", MaxModuleSize, ""},
		{"one byte over", MaxModuleSize + 1, "root/v/module.wasm is larger than the 67108864-byte (64 MiB) limit for a vendor module"},
		{"missing", -1, "reading root/v/module.wasm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if tc.size >= 0 {
				fsys["root/v/module.wasm"] = &fstest.MapFile{Data: make([]byte, tc.size)}
			}
			got, err := ReadModules(fsys, "root", cats)
			switch {
			case tc.want == "" && (err != nil || len(got["v"]) != tc.size):
				t.Fatalf("ReadModules: %d bytes, %v; want %d bytes", len(got["v"]), err, tc.size)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ReadModules: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
