package core

import (
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
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

// The cache stores what a plan decodes to after crossing the ABI (numbers
// as json.Number, lists as []any), through the binary wire form or, for a
// plan that form declines, JSON: a hit equals the host's JSON decoding.
func TestPlanCacheStoresTheWireRoundTrip(t *testing.T) {
	deep := any("leaf")
	for range plan.MaxWireValueDepth + 1 {
		deep = []any{deep}
	}
	for name, v := range map[string]any{"shallow": []any{int64(3), 2.5, "x"}, "deep": deep} {
		p := &plan.Plan{Nodes: []plan.Node{{Op: plan.OpFetch, Args: map[string]any{"v": v}}}}
		var want plan.Plan
		if err := abi.Unmarshal(p.AppendJSON(nil), &want); err != nil {
			t.Fatal(err)
		}
		c := newPlanCache(1)
		c.put("k", p)
		got, ok := c.get("k")
		if !ok || !reflect.DeepEqual(got, &want) {
			t.Fatalf("%s: cached %v %#v, want %#v", name, ok, got, &want)
		}
	}
}
