package plan

import "testing"

// The decoder's minimum element sizes are what the encoder writes for a
// zero element: were one larger, a valid plan would be refused.
func TestWireMinSizes(t *testing.T) {
	node := func(n *Node) int { b, _ := putNode(nil, n); return len(b) }
	transform := func(x *Transform) int { b, _ := putTransform(nil, x); return len(b) }
	view := func(v *View) int { b, _ := putViewBody(nil, v); return len(b) }
	preds := func(ps []Pred) int { b, _ := putPreds(nil, ps); return len(b) }
	member := func() int { b, _ := putValue(putStr(nil, ""), nil, 0, false); return len(b) }
	for _, tc := range []struct {
		name      string
		min, have int
	}{
		{"node", minNode, node(&Node{})},
		{"root", minRoot, len(putInt(putStr(nil, ""), 0))},
		{"arg ref", minArgRef, len(putArgRef(nil, ArgRef{}))},
		{"bind", minBind, len(putBind(nil, Bind{}))},
		{"pred", minPred, preds([]Pred{{}}) - preds(nil)},
		{"transform", minTransform, transform(&Transform{})},
		{"agg", minAgg, transform(&Transform{Aggs: []Agg{{}}}) - transform(&Transform{})},
		{"derived", minDerived, transform(&Transform{Derive: []Derived{{}}}) - transform(&Transform{})},
		{"template", minTemplate, node(&Node{Templates: []ArgTemplate{{}}}) - node(&Node{})},
		{"view step", minViewStep, view(&View{Steps: []ViewStep{{}}}) - view(&View{Steps: []ViewStep{}})},
		{"view bind", minViewBind, view(&View{Steps: []ViewStep{{Binds: []ViewBind{{}}}}}) - view(&View{Steps: []ViewStep{{}}})},
		{"view output", minViewOutput, view(&View{Outputs: []ViewOutput{{}}}) - view(&View{})},
		{"view relation", minViewRelation, view(&View{Relations: []ViewRelation{{}}}) - view(&View{})},
		{"object member", minEntry, member()},
	} {
		if tc.min != tc.have {
			t.Errorf("%s: decoder assumes at least %d bytes, the encoder writes %d", tc.name, tc.min, tc.have)
		}
	}
}
