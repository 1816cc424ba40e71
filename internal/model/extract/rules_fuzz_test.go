package extract

import (
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// FuzzDeriveAndPreprocess feeds arbitrary JSON through every derive rule
// and response_preprocess kind: they must return (possibly null), never
// panic, whatever shape the body has.
func FuzzDeriveAndPreprocess(f *testing.F) {
	f.Add(`{"teams":[{"id":1,"members":[{"id":"a"}]}],"list":["x",1],"data":[{"people":[1]}]}`, "1")
	f.Add(`[{"name":"From","value":"a"}]`, "")
	f.Add(`"https://code.example/repos/a/b"`, "x")
	f.Add(`{"tag":"label:red","blocks":[{"ref":"x:label:green"}]}`, "")
	rules := []*catalog.Derive{
		{Type: catalog.DeriveSegmentsAfterPrefix, Prefix: "https://code.example/repos/", PartIndex: 1},
		{Type: catalog.DeriveNameValueLookup, Equals: "from", MatchKey: "name", ValueField: "value", CaseInsensitive: true},
		{Type: catalog.DeriveObjectKeyLookup, Key: "Tag", CaseInsensitive: true},
		{Type: catalog.DeriveColonPair, PreferKeys: []string{"tag"}, BlocksKey: "blocks", RefField: "ref", Segment: "label"},
	}
	pres := []*catalog.Preprocess{
		{Kind: catalog.PreArrayFindPluck, Path: []string{"teams"}, IDField: "id", IDVar: "v", NestedArray: "members"},
		{Kind: catalog.PreConcatFieldArrays, Path: []string{"data"}, FromEach: "people"},
		{Kind: catalog.PreStringIDsToObjects, Path: []string{"list"}, Field: "id"},
		{Kind: catalog.PreStringIDsToObjects, Path: nil, Field: "id"},
	}
	f.Fuzz(func(t *testing.T, body, v string) {
		doc, err := ParseJSON([]byte(body))
		if err != nil {
			return
		}
		for _, d := range rules {
			derive(d, doc)
		}
		for _, pp := range pres {
			preprocess(doc, &catalog.Response{ItemsPath: []string{"rows"}, Preprocess: pp}, map[string]any{"v": v})
		}
	})
}

// TestDeriveNegativePartIndex: a part_index below zero (Validate and
// catalog.Check refuse it) derives null when a spec is applied without
// validation, rather than indexing before the first part.
func TestDeriveNegativePartIndex(t *testing.T) {
	d := &catalog.Derive{Type: catalog.DeriveSegmentsAfterPrefix, Prefix: "p/", PartIndex: -1}
	if got := derive(d, "p/a/b"); got != nil {
		t.Fatalf("derive = %v, want nil", got)
	}
}
