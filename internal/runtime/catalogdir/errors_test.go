package catalogdir

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// parseArchive reads the small archive format of testdata/errors: an
// optional comment, then sections that start with a "-- name --" line.
func parseArchive(data []byte) map[string][]byte {
	files := map[string][]byte{}
	var name string
	var cur []byte
	flush := func() {
		if name != "" {
			files[name] = cur
		}
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			name, cur = strings.TrimSpace(trimmed[3:len(trimmed)-3]), []byte{}
			continue
		}
		if name != "" {
			cur = append(cur, line...)
		}
	}
	flush()
	return files
}

// archiveFS places an archive's files under dir.
func archiveFS(t testing.TB, file, dir string) fstest.MapFS {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for name, content := range parseArchive(data) {
		fsys[dir+"/"+name] = &fstest.MapFile{Data: content}
	}
	return fsys
}

func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update to accept):\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

// TestErrorsGolden loads each broken catalog of testdata/errors and compares
// every reported problem against testdata/errors.golden.
func TestErrorsGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/errors/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	sort.Strings(cases)
	var out bytes.Buffer
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		fsys := archiveFS(t, file, name)
		var warns ErrorList
		c, err := load(fsys, name, "", func(p string) string { return p }, &warns)
		var list ErrorList
		if len(warns) > 0 {
			out.WriteString("=== " + name + " (warnings)\n" + warns.Error() + "\n\n")
		}
		if !errors.As(err, &list) {
			if len(warns) == 0 {
				t.Errorf("%s: want an ErrorList or warnings, got catalog %v, error %v", name, c != nil, err)
			}
			continue
		}
		if c != nil {
			t.Errorf("%s: a catalog was returned along with errors", name)
		}
		for _, e := range list {
			if e.File == "" {
				t.Errorf("%s: error without a file: %v", name, e)
			}
		}
		out.WriteString("=== " + name + "\n" + list.Error() + "\n\n")
	}
	checkGolden(t, "testdata/errors.golden", out.Bytes())
}

// TestMessages pins the exact wording of representative problems.
func TestMessages(t *testing.T) {
	base := func(domainExtra, mappings string) fstest.MapFS {
		return fstest.MapFS{
			"c/domain.yaml": {Data: []byte(`version: 1
values:
  text: {type: string}
entities:
  Issue:
    id_field: id
    fields:
      id: {value_ref: text}
` + domainExtra + `
capabilities:
  issue_get: {kind: get, entity: Issue}
`)},
			"c/mappings.yaml": {Data: []byte(mappings)},
		}
	}
	const okMapping = "issue_get: {method: GET, path: [{type: var, name: id}]}\n"
	tests := []struct {
		name     string
		domain   string
		mappings string
		want     []string
	}{
		{
			name:     "unknown field key",
			domain:   "      title:\n        vaule_ref: text\n",
			mappings: okMapping,
			want: []string{
				`c/domain.yaml:10:9: entities.Issue.fields.title: unknown key "vaule_ref" (did you mean "value_ref"?)`,
				`c/domain.yaml:9:7: entities.Issue.fields.title: missing required key "value_ref"`,
			},
		},
		{
			name:     "bad method",
			mappings: "issue_get:\n  method: FETCH\n  path: []\n",
			want:     []string{`c/mappings.yaml:2:11: issue_get.method: "FETCH" is not one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS`},
		},
		{
			name:     "misspelt value_ref suggests",
			domain:   "      title: {value_ref: txt}\n",
			mappings: okMapping,
			want:     []string{`c/domain.yaml:9:26: entities.Issue.fields.title.value_ref: unknown value "txt" (did you mean "text"?)`},
		},
		{
			name: "capability without mapping",
			want: []string{`c/domain.yaml:11:3: capabilities.issue_get: no mapping for this capability in mappings.yaml (a capability served by the module needs one with transport: wasm)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(base(tt.domain, tt.mappings), "c", "")
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("want ErrorList, got %v", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			want := append([]string(nil), tt.want...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestErrorFormatting(t *testing.T) {
	tests := []struct {
		e    *Error
		want string
	}{
		{&Error{File: "a.yaml", Line: 3, Column: 7, Msg: "m"}, "a.yaml:3:7: m"},
		{&Error{File: "a.yaml", Line: 3, Msg: "m"}, "a.yaml:3: m"},
		{&Error{File: "a.yaml", Msg: "m"}, "a.yaml: m"},
		{&Error{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	l := ErrorList{
		{File: "b", Line: 1, Column: 1, Msg: "x"},
		{File: "a", Line: 2, Column: 1, Msg: "y"},
		{File: "a", Line: 1, Column: 9, Msg: "z"},
		{File: "a", Line: 1, Column: 2, Msg: "w"},
	}
	l.Sort()
	if got, want := l.Error(), "a:1:2: w\na:1:9: z\na:2:1: y\nb:1:1: x"; got != want {
		t.Errorf("sorted list:\n%s\nwant:\n%s", got, want)
	}
	if ErrorList(nil).Err() != nil {
		t.Error("empty list must give a nil error")
	}
}
