package plan

import "testing"

// The decoder's minimum element sizes are what the encoder writes for a
// zero element: were one larger, a valid plan would be refused.
func TestWireMinSizes(t *testing.T) {
	size := func(f func(w *wireWriter)) int {
		var w wireWriter
		f(&w)
		return len(w.b)
	}
	for _, tc := range []struct {
		name      string
		min, have int
	}{
		{"node", minNode, size(func(w *wireWriter) { w.node(&Node{}) })},
		{"root", minRoot, size(func(w *wireWriter) { w.str(""); w.int(0) })},
		{"arg ref", minArgRef, size(func(w *wireWriter) { w.argRef(ArgRef{}) })},
		{"bind", minBind, size(func(w *wireWriter) { w.bind(Bind{}) })},
		{"pred", minPred, size(func(w *wireWriter) { w.preds([]Pred{{}}) }) - 1},
		{"transform", minTransform, size(func(w *wireWriter) { w.transform(&Transform{}) })},
		{"agg", minAgg, size(func(w *wireWriter) { w.transform(&Transform{Aggs: []Agg{{}}}) }) - size(func(w *wireWriter) { w.transform(&Transform{}) })},
		{"derived", minDerived, size(func(w *wireWriter) { w.transform(&Transform{Derive: []Derived{{}}}) }) - size(func(w *wireWriter) { w.transform(&Transform{}) })},
		{"template", minTemplate, size(func(w *wireWriter) { w.node(&Node{Templates: []ArgTemplate{{}}}) }) - minNode},
		{"view step", minViewStep, size(func(w *wireWriter) { w.viewBody(&View{Steps: []ViewStep{{}}}) }) - size(func(w *wireWriter) { w.viewBody(&View{Steps: []ViewStep{}}) })},
		{"view bind", minViewBind, size(func(w *wireWriter) { w.viewBody(&View{Steps: []ViewStep{{Binds: []ViewBind{{}}}}}) }) - size(func(w *wireWriter) { w.viewBody(&View{Steps: []ViewStep{{}}}) })},
		{"view output", minViewOutput, size(func(w *wireWriter) { w.viewBody(&View{Outputs: []ViewOutput{{}}}) }) - size(func(w *wireWriter) { w.viewBody(&View{}) })},
		{"view relation", minViewRelation, size(func(w *wireWriter) { w.viewBody(&View{Relations: []ViewRelation{{}}}) }) - size(func(w *wireWriter) { w.viewBody(&View{}) })},
		{"object member", minEntry, size(func(w *wireWriter) { w.str(""); w.value(nil, 0, false) })},
	} {
		if tc.min != tc.have {
			t.Errorf("%s: decoder assumes at least %d bytes, the encoder writes %d", tc.name, tc.min, tc.have)
		}
	}
}
