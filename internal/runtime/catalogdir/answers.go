package catalogdir

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Checks for catalogs that load but would answer wrongly: a mapping
// variable that names nothing a program can set is always empty, so the
// request silently goes out without it (Film{release_year=1999} listing
// every film because the mapping says releaseyear); a capability that does
// not provide its entity's id yields rows that cannot be read again,
// related or told apart.

// maxVarNodes bounds the expression nodes one mapping's check walks; the
// tree is already bounded by the parser, this only keeps the walk cheap.
const maxVarNodes = 10000

// checkExprVars requires that every {type: var} and {exists: …} in a
// mapping's query, body and headers names a variable the capability's
// environment can define (see varsOf).
func (l *loader) checkExprVars(p *parser, name string, o *object) {
	cp := l.cat.Capabilities[name]
	m := l.cat.Mappings[name]
	if cp == nil || m == nil || m.Transport == "wasm" {
		return
	}
	known := l.varsOf(cp, m)
	for _, k := range []string{"query", "body", "headers"} {
		n := o.val(k)
		if n == nil {
			continue
		}
		budget := maxVarNodes
		walkVars(n, &budget, func(v *yaml.Node) {
			if v.Value == "" || slices.Contains(known, v.Value) {
				return
			}
			hint := p.suggest(v.Value, known)
			if hint == "" {
				hint = fmt.Sprintf(" (a %s mapping may use %s)", cp.Kind, listUpTo(known, 10))
			}
			p.errorf(v, "%s: variable %q names no parameter of %s nor field of its entity, so it is always empty and the request goes out without it%s",
				o.sub(k), v.Value, cp.Name, hint)
		})
	}
}

// varsOf is what a capability's CML environment can hold: its parameters,
// its entity's fields (predicates a program may write), paging parameters;
// for a single-row capability also id, the entity's key vars and the
// path's variables.
func (l *loader) varsOf(cp *catalog.Capability, m *catalog.Mapping) []string {
	out := paramNames(cp)
	if ent := l.cat.Entities[cp.Entity]; ent != nil {
		out = append(out, ent.FieldOrder...)
	}
	if m.Pagination != nil {
		for n := range m.Pagination.Params {
			out = append(out, n)
		}
	}
	switch cp.Kind {
	case catalog.KindGet, catalog.KindUpdate, catalog.KindDelete, catalog.KindAction:
		out = append(out, "id")
		if ent := l.cat.Entities[cp.Entity]; ent != nil {
			if ent.IDField != "" {
				out = append(out, ent.IDField)
			}
			out = append(out, ent.KeyVars...)
		}
		for _, seg := range m.Path {
			if seg.Type == "var" && seg.Name != "" {
				out = append(out, seg.Name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// walkVars calls fn with the name node of every {type: var, name: …} and
// the value of every {exists: …} under n, visiting at most *budget nodes.
func walkVars(n *yaml.Node, budget *int, fn func(*yaml.Node)) {
	if n == nil || *budget <= 0 {
		return
	}
	*budget--
	switch n.Kind {
	case yaml.MappingNode:
		isVar := false
		var nameNode *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "type":
				isVar = v.Kind == yaml.ScalarNode && v.Value == catalog.ExprVar
			case "name":
				nameNode = v
			case "exists":
				if v.Kind == yaml.ScalarNode {
					fn(v)
				}
			}
		}
		if isVar && nameNode != nil && nameNode.Kind == yaml.ScalarNode {
			fn(nameNode)
		}
		for i := 1; i < len(n.Content); i += 2 {
			walkVars(n.Content[i], budget, fn)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			walkVars(c, budget, fn)
		}
	}
}

// checkProvidesID requires a reading or creating capability that lists what
// it provides to include its entity's id field.
func (l *loader) checkProvidesID(p *parser, ctx string, cp *catalog.Capability, n *yaml.Node) {
	switch cp.Kind {
	case catalog.KindGet, catalog.KindQuery, catalog.KindSearch, catalog.KindCreate:
	default:
		return
	}
	ent := l.cat.Entities[cp.Entity]
	if ent == nil || ent.IDField == "" || ent.Fields[ent.IDField] == nil || n == nil || n.Kind != yaml.SequenceNode || len(cp.Provides) == 0 {
		return
	}
	if slices.Contains(cp.Provides, ent.IDField) {
		return
	}
	p.errorf(n, "%s: does not include %s's id field %q, so its rows cannot be read again, related or told apart (add %s to provides)",
		ctx, ent.Name, ent.IDField, ent.IDField)
}

func listUpTo(xs []string, n int) string {
	if len(xs) == 0 {
		return "no variables"
	}
	if len(xs) > n {
		return strings.Join(xs[:n], ", ") + ", …"
	}
	return strings.Join(xs, ", ")
}
