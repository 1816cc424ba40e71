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

// checkAnswers runs the checks of this file on one cleanly parsed mapping.
func (l *loader) checkAnswers(p *parser, name string, o *object) {
	l.checkExprVars(p, name, o)
	if rn := o.val("response"); rn != nil && rn.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(rn.Content); i += 2 {
			if rn.Content[i].Value == "example" {
				l.checkExample(p, o.sub("response")+".example", name, rn.Content[i+1])
			}
		}
	}
}

// checkExprVars requires that every {type: var} and {exists: …} in a
// mapping's query, body and headers names a variable the capability's
// environment can define (see varsOf).
func (l *loader) checkExprVars(p *parser, name string, o *object) {
	cp := l.cat.Capabilities[name]
	m := l.cat.Mappings[name]
	if cp == nil || m == nil || m.Transport == "wasm" || cp.OpenInput || cp.Unavailable != "" {
		// An open input (Plasm's additional_fields) may set any variable;
		// a capability plasmd cannot run sends nothing.
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
			// plasm_execute_* are set by Plasm's own host (session id,
			// prompt hash); plasmd leaves them empty, as a catalog expects
			// outside that host.
			if v.Value == "" || slices.Contains(known, v.Value) || strings.HasPrefix(v.Value, "plasm_execute_") {
				return
			}
			hint := p.suggest(v.Value, known)
			report := p.errorf
			if hint == "" {
				// Not a misspelling: Plasm loads such a catalog too (an
				// optional knob nobody declared), so it is a warning.
				report = p.warnf
				hint = fmt.Sprintf(" (a %s mapping may use %s)", cp.Kind, listUpTo(known, 10))
			}
			report(v, "%s: variable %q names no parameter of %s nor field of its entity, so it is always empty and the request goes out without it%s",
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
	out = append(out, l.plasmVars(cp)...)
	switch cp.Kind {
	case catalog.KindGet, catalog.KindUpdate, catalog.KindDelete, catalog.KindAction, catalog.KindSingleton:
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
		isVar, isExists := false, false
		var nameNode, varNode *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "type":
				isVar = v.Kind == yaml.ScalarNode && v.Value == catalog.ExprVar
				isExists = v.Kind == yaml.ScalarNode && v.Value == "exists"
			case "var": // Plasm's tagged {type: exists, var: …}
				varNode = v
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
		if isExists && varNode != nil && varNode.Kind == yaml.ScalarNode {
			fn(varNode)
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
	if ent == nil || ent.IDField == "" || ent.Fields[ent.IDField] == nil || n == nil || n.Kind != yaml.SequenceNode || len(cp.Provides) == 0 || ent.Implicit {
		return // an implicit identity is the request's, not a field's
	}
	if slices.Contains(cp.Provides, ent.IDField) {
		return
	}
	// Plasm loads such a catalog (e.g. a get that only fetches a
	// document body), so plasmd loads it too, warning where it is.
	p.warnf(n, "%s: does not include %s's id field %q, so its rows cannot be read again, related or told apart (add %s to provides)",
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

// checkExample holds a mapping's response shape against the sample body
// its response declares under example: items_path (or single) must reach
// the rows in it, and every field the capability provides (or, without
// provides, every required field) must be found at its path in at least
// one example row. Otherwise the list would decode as "0 rows" with a
// bogus handle, or a column would stay blank without a word.
func (l *loader) checkExample(p *parser, ctx, name string, n *yaml.Node) {
	cp := l.cat.Capabilities[name]
	m := l.cat.Mappings[name]
	if cp == nil || m == nil || m.Response == nil {
		return
	}
	ent := l.cat.Entities[cp.Entity]
	var body any
	if err := n.Decode(&body); err != nil {
		p.errorf(n, "%s: %v", ctx, err)
		return
	}
	r := m.Response
	at, ok := walkKeys(body, r.ItemsPath)
	if !ok {
		p.errorf(n, "%s: items_path %v reaches nothing in the example, so every answer would decode as no rows (check items_path against the backend's response)", ctx, r.ItemsPath)
		return
	}
	var rows []any
	switch v := at.(type) {
	case []any:
		rows = v
	case map[string]any:
		if !r.Single {
			p.errorf(n, "%s: items_path %v reaches an object, not a list, in the example; say single: true or point items_path at the list", ctx, r.ItemsPath)
			return
		}
		rows = []any{v}
	default:
		p.errorf(n, "%s: items_path %v reaches %T in the example, not rows", ctx, r.ItemsPath, at)
		return
	}
	if ent == nil || len(rows) == 0 {
		return
	}
	want := cp.Provides
	if len(want) == 0 {
		for _, f := range ent.FieldOrder {
			if fd := ent.Fields[f]; fd != nil && fd.Required {
				want = append(want, f)
			}
		}
	}
	for _, f := range want {
		fd := ent.Fields[f]
		if fd == nil {
			continue
		}
		path := fd.Path
		if len(path) == 0 {
			path = []string{f}
		}
		if !slices.ContainsFunc(rows, func(row any) bool {
			if r.ItemInnerKey != "" {
				row, _ = walkKeys(row, []string{r.ItemInnerKey})
			}
			_, found := walkKeys(row, path)
			return found
		}) {
			p.errorf(n, "%s: field %s (path %s) is in none of the example's rows, so its column would always be blank (fix the field's path or provides)",
				ctx, f, strings.Join(path, "."))
		}
	}
}

// walkKeys follows object keys from v; a key present with a null value
// counts as found.
func walkKeys(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
