package catalogdir

import (
	"errors"
	"testing"
	"testing/fstest"
)

// TestBadCharactersHavePositions: a catalog file with bytes that are not
// UTF-8 or a control character was refused without a line ("invalid YAML:
// invalid leading UTF-8 octet"); the error now points at the character.
func TestBadCharactersHavePositions(t *testing.T) {
	tests := []struct {
		name, domain string
		line, col    int
		msg          string
	}{
		{"not UTF-8", "version: 1\ndescription: \"caf\xe9 menu\"\n", 2, 18, "invalid YAML: the file is not UTF-8 text (byte 0xe9)"},
		{"NUL", "version: 1\ndescription: x\nhttp_backend: \"http://h/\x00\"\n", 3, 25, "invalid YAML: control character U+0000 is not allowed"},
		{"escape", "version: 1\n\x1b[31mred\n", 2, 1, "invalid YAML: control character U+001B is not allowed"},
		{"after multibyte text", "description: ééé\x7f\n", 1, 17, "invalid YAML: control character U+007F is not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"c/domain.yaml":   {Data: []byte(tc.domain)},
				"c/mappings.yaml": {Data: []byte("{}\n")},
			}
			_, err := Load(fsys, "c", "")
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("want ErrorList, got %v", err)
			}
			for _, e := range list {
				if e.File == "c/domain.yaml" && e.Msg == tc.msg && e.Line == tc.line && e.Column == tc.col {
					return
				}
			}
			t.Errorf("no %d:%d %q among:\n%v", tc.line, tc.col, tc.msg, list)
		})
	}
}
