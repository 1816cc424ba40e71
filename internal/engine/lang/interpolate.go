package lang

import (
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// `${label.field}`, `${label}` and, inside an effect, `${_.field}` in a
// quoted string or heredoc passed to a method fill the argument with text
// from earlier rows (Plasm's program-string interpolation). Elsewhere such
// a string is refused rather than sent with the braces in it.

// interpolation splits a text value into an ArgTemplate for var k; ok is
// false when the value holds no `${`.
func (p *planner) interpolation(v *value, k string) (plan.ArgTemplate, bool, *abi.Error) {
	s, isText := v.lit.(string)
	if v.kind != vLit || !isText || !strings.Contains(s, "${") {
		return plan.ArgTemplate{}, false, nil
	}
	t := plan.ArgTemplate{Var: k}
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			t.Parts = append(t.Parts, s)
			return t, true, nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return t, true, errAt(v.p, abi.CodeSyntax, "unclosed ${ in text", "write ${label.field}, or ${_.field} inside an effect")
		}
		ref, err := p.interpRef(v, s[i+2:i+j])
		if err != nil {
			return t, true, err
		}
		t.Parts = append(t.Parts, s[:i])
		t.Refs = append(t.Refs, ref)
		s = s[i+j+1:]
		if len(t.Refs) > maxNodes {
			return t, true, errAt(v.p, abi.CodeBadRequest, "too many ${…} references in one text", "")
		}
	}
}

// interpRef resolves the inside of one `${…}` like a value reference.
func (p *planner) interpRef(v *value, path string) (plan.ArgRef, *abi.Error) {
	root, field, dotted := strings.Cut(strings.TrimSpace(path), ".")
	bad := errAt(v.p, abi.CodeSyntax, "${"+path+"} is not a reference", "write ${label.field}, ${label}, or ${_.field} inside an effect")
	if !isPlainIdent(root) || dotted && !isPlainIdent(field) {
		return plan.ArgRef{}, bad
	}
	rawField := field
	if k, n := symbol.Parse(field); k == symbol.KindSlot {
		// Text is never symbol-expanded by the lexer; a taught p# names
		// the same field here as it would outside the quotes.
		if sl, ok := p.symbols().Slot(n); ok && sl.Name != "" {
			field = sl.Name
		}
	}
	rv := &value{p: v.p, kind: vIdent, ident: name{p: v.p, text: root, raw: root}}
	if root == "_" {
		if !dotted {
			return plan.ArgRef{}, bad
		}
		rv = &value{p: v.p, kind: vUnderscore, field: &name{p: v.p, text: field, raw: rawField}}
	} else if dotted {
		rv.field = &name{p: v.p, text: field, raw: rawField}
	}
	if b, _ := p.labels.get(root); rv.kind == vIdent && b == nil {
		return plan.ArgRef{}, errAt(v.p, abi.CodeUnknownEntity, "${"+path+"} names no bound label", listHint(root, "labels", p.labelNames()))
	}
	_, ref, err := p.val(rv)
	if err != nil {
		return plan.ArgRef{}, err
	}
	return *ref, nil
}

func isPlainIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}

// addTemplate records an argument template on n; its label references
// become dependencies, its row references stay for eachRow.
func addTemplate(n *plan.Node, t plan.ArgTemplate) {
	for _, r := range t.Refs {
		if r.Node >= 0 {
			n.Deps = append(n.Deps, r.Node)
		}
	}
	n.Templates = append(n.Templates, t)
}

// noInterpolation refuses `${…}` in a text value that is not a method
// argument, so the braces are never sent as literal text by mistake.
func noInterpolation(v *value) *abi.Error {
	if s, ok := v.lit.(string); ok && v.kind == vLit && strings.Contains(s, "${") {
		return errAt(v.p, abi.CodeType, "${…} is filled in only in a method's arguments",
			"pass the value itself here, e.g. field=label.field")
	}
	return nil
}
