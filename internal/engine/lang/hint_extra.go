package lang

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// symbolMixup explains a session symbol of the wrong kind where a field
// or a relation was expected: agents confuse p# (fields and parameters)
// with r# (relations) because both follow an entity in teaching rows.
// wantField is true where a field belongs (projection, predicate), false
// after a dot (relation).
func symbolMixup(n name, wantField bool) *abi.Error {
	s := n.sym
	if s == nil {
		return nil
	}
	switch {
	case wantField && s.kind == symbol.KindRelation:
		return errAt(n.p, abi.CodeUnknownField, n.raw+" is a relation symbol (r#), not a field: fields and parameters are p#",
			"follow the relation with ."+n.raw+", and project fields with [p#, …]")
	case !wantField && s.kind == symbol.KindSlot:
		return errAt(n.p, abi.CodeUnknownField, n.raw+" is a field symbol (p#), not a relation: relations are r#",
			"project the field with ["+n.raw+"], or follow a relation with .r#")
	}
	return nil
}
