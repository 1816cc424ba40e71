package catalogdir

import (
	"os"
	"path/filepath"
	"testing"
)

// Port 0 in http_backend is the placeholder the demo catalogs and the
// views fixture use, replaced at load time: it loads without a warning,
// while port 0 anywhere else is an error (testdata/errors/bad_port.txtar).
func TestPlaceholderPortLoadsQuietly(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"domain.yaml": `version: 1
http_backend: http://127.0.0.1:0/api
values:
  text: {type: string}
entities:
  Item:
    id_field: id
    fields:
      id: {value_ref: text}
capabilities:
  item_get: {kind: get, entity: Item}
`,
		"mappings.yaml": `item_get:
  method: GET
  path:
    - {type: literal, value: items}
    - {type: var, name: id}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadPathReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Warnings) != 0 {
		t.Fatalf("warnings: %v", got.Warnings)
	}
	if got.Catalog.HTTPBackend != "http://127.0.0.1:0/api" {
		t.Fatalf("http_backend %q", got.Catalog.HTTPBackend)
	}
}
