package catalogdir

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestLoadRunsCheck: a catalog catalog.Check would refuse (here a derive
// rule with more alternate prefixes than an extraction spec may carry)
// is refused at load, at the node that breaks the bound, rather than
// installed and then refused by the engine on every call; one at the
// bound loads. (TestCheckPositions has every bound.)
func TestLoadRunsCheck(t *testing.T) {
	prefixes := make([]string, catalog.MaxRuleStrings+1)
	for i := range prefixes {
		prefixes[i] = "https://code.example/" + strings.Repeat("p", i+1) + "/"
	}
	domain := func(alts []string) []byte {
		return []byte(`version: 1
values:
  text: {type: string}
entities:
  Issue:
    id_field: id
    fields:
      id: {value_ref: text}
      repo:
        value_ref: text
        path: url
        derive:
          type: segments_after_prefix
          prefix: https://code.example/repos/
          alternate_prefixes: [` + strings.Join(alts, ", ") + `]
          part_index: 1
capabilities:
  issue_get: {kind: get, entity: Issue}
`)
	}
	fs := func(alts []string) fstest.MapFS {
		return fstest.MapFS{
			"c/domain.yaml":   {Data: domain(alts)},
			"c/mappings.yaml": {Data: []byte("issue_get: {method: GET, path: [{type: var, name: id}]}\n")},
		}
	}
	if _, err := Load(fs(prefixes[:catalog.MaxRuleStrings]), "c", ""); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := Load(fs(prefixes), "c", "")
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("err = %v, want one problem", err)
	}
	want := Error{File: "c/domain.yaml", Line: 15, Column: 31, Msg: "entities.Issue.fields.repo.derive.alternate_prefixes: 65 strings, over the limit of 64"}
	if *list[0] != want {
		t.Fatalf("got %v, want %v", list[0], &want)
	}
}
