package catalog

import "testing"

// TestViewRelationDeterministic: with two views of one entity outputting
// the same relation (the loader refuses it, a hand-built catalog may not),
// the answer is the view first by name every time, not a random one.
func TestViewRelationDeterministic(t *testing.T) {
	c := &Catalog{Views: map[string]*View{}}
	for _, name := range []string{"zeta", "beta", "alpha", "gamma"} {
		c.Views[name] = &View{Name: name, Entity: "Card", Relations: []ViewRelationOutput{{Relation: "other"}, {Relation: "item", Node: name}}}
	}
	c.Views["aaa_other"] = &View{Name: "aaa_other", Entity: "Item", Relations: []ViewRelationOutput{{Relation: "item"}}}
	for range 100 {
		v, ro := c.ViewRelation("Card", "item")
		if v == nil || v.Name != "alpha" || ro.Node != "alpha" {
			t.Fatalf("ViewRelation = %v, %+v; want view alpha", v, ro)
		}
	}
	if v, ro := c.ViewRelation("Card", "none"); v != nil || ro != nil {
		t.Errorf("unknown relation: %v %v", v, ro)
	}
}
