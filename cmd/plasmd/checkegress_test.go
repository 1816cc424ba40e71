package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogCheckIPLiterals: `plasmd catalog check` and the server's
// catalog load warn at the literal's file:line:col about a metadata
// address written in a mapping's path, and refuse one no configuration
// dials.
func TestCatalogCheckIPLiterals(t *testing.T) {
	write := func(dir, path string) string {
		t.Helper()
		c := filepath.Join(t.TempDir(), dir)
		if err := os.MkdirAll(c, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"domain.yaml": `version: 1
http_backend: http://127.0.0.1:8080/api
values: {s: {type: string}}
entities:
  Note:
    id_field: id
    fields: {id: {value_ref: s}}
capabilities:
  note_query: {kind: query, entity: Note}
`,
			"mappings.yaml": "note_query:\n  method: GET\n  path: [{type: literal, value: \"" + path + "\"}]\n",
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(c, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	const want = "mappings.yaml:3:33: note_query.path[0].value: http://169.254.169.254:80 is a link-local or cloud metadata address"

	meta := write("meta", "http://169.254.169.254/latest/meta-data/")
	var out, errb bytes.Buffer
	if code := run([]string{"catalog", "check", meta}, &out, &errb); code != 0 || !strings.Contains(out.String(), "1 warnings") || !strings.Contains(out.String(), want) {
		t.Errorf("check: code %d\n%s%s", code, out.String(), errb.String())
	}
	var logged bytes.Buffer
	if _, err := loadCatalogs(meta, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "169.254.169.254:80 is a link-local") || !strings.Contains(logged.String(), "catalog=meta") {
		t.Errorf("serve's load did not log the warning:\n%s", logged.String())
	}

	out.Reset()
	errb.Reset()
	never := write("never", "http://0.0.0.0:8080/")
	if code := run([]string{"catalog", "check", never}, &out, &errb); code != 1 || !strings.Contains(out.String()+errb.String(), "mappings.yaml:3:33: note_query.path[0].value: origin can never be dialled") {
		t.Errorf("check of an unspecified address: code %d\n%s%s", code, out.String(), errb.String())
	}
}
