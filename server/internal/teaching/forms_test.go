package teaching

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/fixture"
)

// formsWave exposes ents and caps of the shared tracker fixture.
func formsWave(t *testing.T, ents []string, caps []string) Wave {
	t.Helper()
	w := Wave{catalogs: fixture.Catalogs(t, fixture.Tracker)}
	for _, e := range ents {
		w.Exposure.Entities = append(w.Exposure.Entities, ExposedEntity{EntryID: fixture.Tracker, Entity: e, Seeded: true})
	}
	for _, c := range caps {
		w.Exposure.Capabilities = append(w.Exposure.Capabilities, ExposedCapability{EntryID: fixture.Tracker, Capability: c})
	}
	return w
}

// The forms block teaches only what the exposed slice can use, and its
// size is measured against the fixed preamble.
func TestMoreForms(t *testing.T) {
	cases := []struct {
		name       string
		ents, caps []string
		want, not  []string
	}{
		{"read-only text", []string{"Label"}, []string{"label_search"}, []string{formsCompute, formsRender}, []string{formsSum, formsEffect, formsReverse}},
		{"numbers", []string{"Issue"}, []string{"issue_query"}, []string{formsSum}, []string{formsEffect, formsReverse}},
		{"mutations", []string{"Issue"}, []string{"issue_query", "issue_update"}, []string{formsEffect}, []string{formsReverse}},
		{"references", []string{"Issue", "Project"}, []string{"issue_query"}, []string{formsReverse}, []string{formsEffect}},
		{"nothing", nil, nil, nil, []string{formsHead}},
	}
	for _, tc := range cases {
		got := moreForms(formsWave(t, tc.ents, tc.caps))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: missing %q", tc.name, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: taught %q", tc.name, w)
			}
		}
		t.Logf("%-15s preamble %d bytes + forms %d bytes (%.1f%%)", tc.name, len(preamble), len(got), 100*float64(len(got))/float64(len(preamble)))
	}
	all := len(formsHead + formsCompute + formsSum + formsRender + formsEffect + formsReverse)
	if all > 700 {
		t.Errorf("forms block is %d bytes at most; keep it under 700", all)
	}
}
