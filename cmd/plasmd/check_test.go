package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogCheckReport covers the summary line, warnings, not-executable
// capabilities, --json, and paths that hold no catalog.
func TestCatalogCheckReport(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(dir, "cats")
	write(filepath.Join(root, "notes", "domain.yaml"), `version: 1
http_backend: https://notes.example
values: {s: {type: string}}
entities:
  Note:
    id_field: id
    fields: {id: {value_ref: s}}
    relations:
      self: {target: Note, cardinality: one}
capabilities:
  note_query: {kind: query, entity: Note}
  note_digest: {kind: query, entity: Note}
views:
  digest: {description: d, capability: note_digest, entity: Note, nodes: [{id: a, capability: note_query}]}
`)
	write(filepath.Join(root, "notes", "mappings.yaml"), `note_query: {method: GET, path: [], response: {items: hits, last_page: last}}
note_digest: {transport: view, view: digest}
`)
	write(filepath.Join(dir, "openapi-only", "openapi.yaml"), "openapi: 3.1.0\n")
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := run([]string{"catalog", "check", root}, &out, &errb); code != 0 {
		t.Fatalf("code %d, stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "ok  notes  1 entities, 2 capabilities, 1 relations, 1 warnings  sha256:") ||
		lines[1] != "    not executable here: note_digest: view digest: its output fills no id, the id of Note rows" ||
		!strings.Contains(lines[2], `mappings.yaml:1:61: note_query.response: unknown key "last_page" is ignored`) ||
		!strings.HasSuffix(lines[2], "(see docs/catalog-format.md#response)") {
		t.Errorf("report:\n%s", out.String())
	}

	out.Reset()
	errb.Reset()
	if code := run([]string{"catalog", "check", "--json", root, empty}, &out, &errb); code != 1 {
		t.Fatalf("json with an empty path: code %d", code)
	}
	var rep checkReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if rep.OK || len(rep.Catalogs) != 1 || rep.Catalogs[0].Relations != 1 || len(rep.Catalogs[0].Warnings) != 1 ||
		rep.Catalogs[0].Warnings[0].Line != 1 || len(rep.Catalogs[0].NotExecutable) != 1 ||
		len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "holds no catalog") {
		t.Errorf("json report: %+v", rep)
	}

	for _, p := range []string{empty, filepath.Join(dir, "openapi-only")} {
		out.Reset()
		errb.Reset()
		if code := run([]string{"catalog", "check", p}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "holds no catalog") {
			t.Errorf("%s: code %d, stderr %q", p, code, errb.String())
		}
	}
}

// TestCatalogCheckBounds: a catalog over one of the engine's bounds
// (catalog.Check) is reported at the node that breaks it, with the
// section of the format reference, in text and in --json.
func TestCatalogCheckBounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wide")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	steps := make([]string, 129)
	for i := range steps {
		steps[i] = "k"
	}
	files := map[string]string{
		"domain.yaml": `version: 1
values:
  text: {type: string}
entities:
  Issue:
    id_field: id
    fields:
      id: {value_ref: text}
capabilities:
  issue_query: {kind: query, entity: Issue}
`,
		"mappings.yaml": `issue_query:
  method: GET
  path: [{type: literal, value: issues}]
  response:
    items_path: [` + strings.Join(steps, ", ") + `]
`,
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"catalog", "check", dir}, &out, &errb); code != 1 {
		t.Fatalf("code %d, stdout %q", code, out.String())
	}
	want := filepath.Join(dir, "mappings.yaml") + ":5:17: issue_query.response.items_path: 129 steps, over the limit of 128 (the deepest JSON the decoder reads) (see docs/catalog-format.md#response)\n"
	if errb.String() != want {
		t.Fatalf("stderr %q\nwant   %q", errb.String(), want)
	}
	out.Reset()
	if code := run([]string{"catalog", "check", "--json", dir}, &out, &errb); code != 1 {
		t.Fatalf("--json: code %d", code)
	}
	var rep checkReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].File != filepath.Join(dir, "mappings.yaml") || rep.Errors[0].Line != 5 || rep.Errors[0].Column != 17 {
		t.Fatalf("json errors: %+v", rep.Errors)
	}
}
