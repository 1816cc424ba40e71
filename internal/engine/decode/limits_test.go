package decode

import (
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// limitsCatalog has a Note whose repo is derived from its url, and a Node
// that embeds itself (kids) without a get of its own, reached from Item.
func limitsCatalog() *catalog.Catalog {
	node := &catalog.Entity{Name: "Node", IDField: "id", Fields: map[string]*catalog.Field{"id": {Name: "id"}},
		Relations: map[string]*catalog.Relation{"kids": {Name: "kids", Target: "Node", Cardinality: "many",
			Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "kids"}, {Wildcard: true}}}}}}
	item := &catalog.Entity{Name: "Item", IDField: "id", Fields: map[string]*catalog.Field{"id": {Name: "id"}},
		Relations: map[string]*catalog.Relation{"root": {Name: "root", Target: "Node", Cardinality: "one",
			Materialize: catalog.Materialize{Kind: catalog.FromParentGet, Path: []catalog.PathStep{{Key: "root"}}}}}}
	note := &catalog.Entity{Name: "Note", IDField: "id", Fields: map[string]*catalog.Field{
		"id":  {Name: "id"},
		"url": {Name: "url"},
		"repo": {Name: "repo", Path: []string{"url"},
			Derive: &catalog.Derive{Type: catalog.DeriveSegmentsAfterPrefix, Prefix: "https://code.example/repos/", PartIndex: 1}},
	}}
	return &catalog.Catalog{EntryID: "t",
		Entities: map[string]*catalog.Entity{"Node": node, "Item": item, "Note": note},
		Capabilities: map[string]*catalog.Capability{
			"item_get": {Name: "item_get", Kind: catalog.KindGet, Entity: "Item"},
			"note_get": {Name: "note_get", Kind: catalog.KindGet, Entity: "Note"},
		},
		Mappings: map[string]*catalog.Mapping{}}
}

// TestSpecPastBoundsIsCatalogError: a catalog frozen without Check (the
// engine's own decode and decode-spec exports both compile through Spec)
// whose spec the host would refuse gets a typed catalog error from the
// engine, never a spec past the bounds or a panic on a negative part.
func TestSpecPastBoundsIsCatalogError(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(c *catalog.Catalog)
		want string
	}{
		{"negative part_index", func(c *catalog.Catalog) { c.Entities["Note"].Fields["repo"].Derive.PartIndex = -1 }, "part_index -1 is negative"},
		{"field path past limit", func(c *catalog.Catalog) {
			c.Entities["Note"].Fields["url"].Path = strings.Split(strings.Repeat("k.", extract.MaxPath)+"k", ".")
		}, "limit 128"},
		{"derive text", func(c *catalog.Catalog) {
			c.Entities["Note"].Fields["repo"].Derive.Prefix = strings.Repeat("x", extract.MaxTextSize+1)
		}, "limit 4096"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat := limitsCatalog()
			tt.edit(cat)
			s, aerr := Spec(cat, "note_get", "")
			if aerr == nil || aerr.Code != abi.CodeCatalog || !strings.Contains(aerr.Message, tt.want) {
				t.Fatalf("Spec = %+v, %v; want a %s error containing %q", s, aerr, abi.CodeCatalog, tt.want)
			}
			req := &abi.DecodeRequest{EntryID: "t", Capability: "note_get", Status: 200}
			_, aerr = Decode(cat, req, []byte(`{"id":"n1","url":"https://code.example/repos/a/b"}`))
			if aerr == nil || aerr.Code != abi.CodeCatalog {
				t.Fatalf("Decode = %v; want a %s error", aerr, abi.CodeCatalog)
			}
			if !errors.Is(cat.Check(), catalog.ErrInvalid) {
				t.Fatalf("Check passed a catalog whose spec the host refuses")
			}
		})
	}
}

// TestSpecOfCheckedCatalogValidates: a valid catalog compiles to specs
// the host accepts, for its capabilities and its relation chains.
func TestSpecOfCheckedCatalogValidates(t *testing.T) {
	cat := limitsCatalog()
	if err := cat.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ capability, relation string }{
		{"note_get", ""}, {"item_get", ""}, {"item_get", "root"}, {"item_get", "root.kids.kids"},
	} {
		s, aerr := Spec(cat, c.capability, c.relation)
		if aerr != nil || s.Invalid != "" {
			t.Fatalf("%v: %v %q", c, aerr, s.Invalid)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
}

// TestLongSelfEmbeddedChain: an entity with no get that embeds itself
// (Node.kids → Node) lets a program chain .kids without end; past the
// decoder's path limit the spec carries a typed Invalid (reported as a
// decode error for the answer) and stays one the host accepts, rather
// than a spec the host refuses and an instance discarded.
func TestLongSelfEmbeddedChain(t *testing.T) {
	cat := limitsCatalog()
	for _, n := range []int{10, 63, 64, 70, 500} {
		rel := "root" + strings.Repeat(".kids", n)
		s, aerr := Spec(cat, "item_get", rel)
		if aerr != nil {
			t.Fatalf("%d: %v", n, aerr)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%d: engine compiled a spec the host refuses: %v", n, err)
		}
		pastLimit := 1+2*n > extract.MaxPath
		if got := s.Invalid != ""; got != pastLimit {
			t.Fatalf("%d kids (%d steps): invalid %q, want invalid %v", n, 1+2*n, s.Invalid, pastLimit)
		}
		if pastLimit && !strings.Contains(s.Invalid, "limit 128") {
			t.Fatalf("%d: %q", n, s.Invalid)
		}
		if !pastLimit {
			continue
		}
		req := &abi.DecodeRequest{EntryID: "t", Capability: "item_get", Relation: rel, Status: 200}
		_, aerr = extract.Apply(s, req, []byte(`{"id":"i"}`), extract.Options{})
		if aerr == nil || aerr.Code != abi.CodeDecode {
			t.Fatalf("%d: Apply = %v, want a %s error", n, aerr, abi.CodeDecode)
		}
	}
}
