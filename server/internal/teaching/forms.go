package teaching

import (
	"strings"
)

// The preamble's second grammar block teaches the forms beyond reads,
// relations and methods, one short line per form, and only the forms the
// exposed slice can use: a session without mutations is not taught
// for-each effects, one without numeric fields is not taught sums, one
// without references between its entities is not taught .^ or e1.p1
// predicates. Every line starts with "#   ", like the grammar lines.

// Lines of the forms block; a line is sent only when its condition holds.
const (
	formsHead    = "# More forms (host-side, over rows already read):\n"
	formsCompute = "#   .aggregate(n=count) .group_by(p1, n=count) .singleton() · a => {k: _.p1} one row per row of a\n"
	formsSum     = "#   aggregates: count, sum(p1) avg(p1) min(p1) max(p1) on number fields\n"
	formsRender  = "#   r = a[p1] <<T, template lines, T alone: one row {content}; Go text/template over .rows: {{len .rows}} {{range .rows}}{{.p1}}{{end}}; pass r.content on\n"
	formsEffect  = "#   a => e1(_.p1).m1(p2=_.p3) runs the method once per row of a (_ is the row); \"… ${a.p1} …\" in a method's text fills it from a row\n"
	formsReverse = "#   e1(id).^e2{…} the e2 rows referencing that e1 row · e2{e1.p1=v} e2 rows whose e1 matches\n"
)

// moreForms is the forms block for the slice a wave exposes.
func moreForms(w Wave) string {
	exposed := map[string]map[string]bool{} // entry → entity
	for _, e := range w.Exposure.Entities {
		if exposed[e.EntryID] == nil {
			exposed[e.EntryID] = map[string]bool{}
		}
		exposed[e.EntryID][e.Entity] = true
	}
	if len(exposed) == 0 {
		return ""
	}
	numeric, mutates, refs := false, false, false
	for _, c := range w.Exposure.Capabilities {
		cat := w.catalogs[c.EntryID]
		if cat == nil {
			continue
		}
		if cp := cat.Capabilities[c.Capability]; cp != nil && !cp.IsRead() {
			mutates = true
		}
	}
	for entry, ents := range exposed {
		cat := w.catalogs[entry]
		if cat == nil {
			continue
		}
		for name := range ents {
			e := cat.Entities[name]
			if e == nil {
				continue
			}
			for _, f := range e.Fields {
				v := cat.Values[f.ValueRef]
				if v == nil {
					continue
				}
				switch {
				case v.Type == "integer" || v.Type == "number":
					numeric = true
				case v.Type == "entity_ref" && v.Target != name && ents[v.Target]:
					refs = true
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString(formsHead)
	b.WriteString(formsCompute)
	if numeric {
		b.WriteString(formsSum)
	}
	b.WriteString(formsRender)
	if mutates {
		b.WriteString(formsEffect)
	}
	if refs {
		b.WriteString(formsReverse)
	}
	return b.String()
}
