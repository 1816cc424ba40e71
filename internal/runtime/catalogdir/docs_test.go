package catalogdir

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDocSections checks that every section a problem can link to exists in
// docs/catalog-format.md, and that the problems of the error corpus link
// somewhere.
func TestDocSections(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", DocPath))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	heading := regexp.MustCompile(`(?m)^#{2,3} (.+)$`)
	for _, m := range heading.FindAllStringSubmatch(string(doc), -1) {
		a := strings.ToLower(strings.TrimSpace(m[1]))
		a = regexp.MustCompile(`[^a-z0-9 -]`).ReplaceAllString(a, "")
		anchors[strings.ReplaceAll(a, " ", "-")] = true
	}
	sections := []string{"layout", "yaml"}
	for _, s := range docSections {
		sections = append(sections, s)
	}
	sections = append(sections, "relations", "fields", "parameters", "cml-expressions", "pagination", "response", "path")
	for _, s := range sections {
		if !anchors[s] {
			t.Errorf("section %q is linked but %s has no such heading", s, DocPath)
		}
	}
	for _, l := range regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`).FindAllStringSubmatch(string(doc), -1) {
		if !anchors[l[1]] {
			t.Errorf("%s links to #%s, which is no heading", DocPath, l[1])
		}
	}

	cases, _ := filepath.Glob("testdata/errors/*.txtar")
	var unlinked []string
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		var warns ErrorList
		_, err := load(archiveFS(t, file, name), name, "", func(p string) string { return p }, &warns)
		list, _ := err.(ErrorList)
		for _, e := range append(list, warns...) {
			if DocSection(e) == "" {
				unlinked = append(unlinked, e.Error())
			}
		}
	}
	sort.Strings(unlinked)
	if len(unlinked) > 0 {
		t.Errorf("%d problems link to no section, e.g.:\n%s", len(unlinked), strings.Join(unlinked[:min(10, len(unlinked))], "\n"))
	}
}
