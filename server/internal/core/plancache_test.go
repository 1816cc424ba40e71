package core

import (
	"testing"

	"github.com/plasmd/plasmd/internal/model/plan"
)

func TestPlanKeyUnambiguous(t *testing.T) {
	// Moving a character from one part to the next must change the key.
	a := planKey("t1", "s", 1, "eng", []string{"d1"}, "Issue")
	b := planKey("t", "1s", 1, "eng", []string{"d1"}, "Issue")
	c := planKey("t1", "s", 1, "eng", []string{"d", "1"}, "Issue")
	d := planKey("t1", "s", 2, "eng", []string{"d1"}, "Issue")
	seen := map[string]bool{}
	for _, k := range []string{a, b, c, d} {
		if seen[k] {
			t.Fatalf("two different inputs share key %q", k)
		}
		seen[k] = true
	}
}

func TestPlanCacheCopiesAndEvicts(t *testing.T) {
	c := newPlanCache(2)
	c.put("a", &plan.Plan{Nodes: []plan.Node{{ID: 0, Op: plan.OpFetch, Entity: "Issue"}}, Roots: []plan.Root{{Node: 0}}})
	p, ok := c.get("a")
	if !ok || p.Nodes[0].Entity != "Issue" {
		t.Fatalf("get a: %v %+v", ok, p)
	}
	// A caller changing its plan must not change what the next caller gets.
	p.Nodes[0].Entity = "Changed"
	if q, _ := c.get("a"); q.Nodes[0].Entity != "Issue" {
		t.Fatalf("cached plan shared with a caller: %+v", q.Nodes[0])
	}
	c.put("b", &plan.Plan{})
	c.get("a") // a is now the most recently used
	c.put("c", &plan.Plan{})
	if _, ok := c.get("b"); ok {
		t.Fatal("least recently used plan b was kept past the bound")
	}
	if _, ok := c.get("a"); !ok {
		t.Fatal("recently used plan a was evicted")
	}
}
