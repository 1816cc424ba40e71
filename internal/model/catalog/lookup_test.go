package catalog_test

import (
	"slices"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// TestFreezeKeepsLookups checks that a frozen catalog answers every
// capability lookup exactly as it did before freezing, for every entity of
// the demo and plasmforms catalogs and for an entity none has.
func TestFreezeKeepsLookups(t *testing.T) {
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	forms, err := catalogdir.LoadPath("../../../testdata/catalogs/plasmforms")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(cats, forms) {
		entities := []string{"NoSuchEntity"}
		for name := range c.Entities {
			entities = append(entities, name)
		}
		type answer struct {
			caps      []string
			get, list string
		}
		ask := func(e string) answer {
			var a answer
			for _, cp := range c.CapabilitiesOf(e) {
				a.caps = append(a.caps, cp.Name)
			}
			if cp := c.GetCapability(e); cp != nil {
				a.get = cp.Name
			}
			if cp := c.FirstOfKind(e, "query"); cp != nil {
				a.list = cp.Name
			}
			return a
		}
		before := map[string]answer{}
		for _, e := range entities {
			before[e] = ask(e)
		}
		if err := c.Freeze(); err != nil {
			t.Fatal(err)
		}
		for _, e := range entities {
			got := ask(e)
			if !slices.Equal(got.caps, before[e].caps) || got.get != before[e].get || got.list != before[e].list {
				t.Errorf("%s/%s: frozen %+v, before %+v", c.EntryID, e, got, before[e])
			}
		}
	}
}
