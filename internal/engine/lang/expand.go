package lang

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// symRef records what a symbol token stood for. Entities, methods and
// relations keep their owner because the checker must verify it against the
// receiver; slots only contribute their wire name.
type symRef struct {
	kind     symbol.Kind
	name     string
	entity   symbol.Entity
	method   symbol.Method
	relation symbol.Relation
}

var unknownSymbolCode = map[symbol.Kind]string{
	symbol.KindEntity:   abi.CodeUnknownEntity,
	symbol.KindMethod:   abi.CodeUnknownMethod,
	symbol.KindSlot:     abi.CodeUnknownField,
	symbol.KindRelation: abi.CodeUnknownField,
}

const symbolHint = "symbols come from the session's teaching table; call plasm_context again"

// expand rewrites symbol identifiers into wire names in place. It works on
// tokens, never on text, so string and heredoc contents are untouched and
// every position still points into the program as sent.
//
// A symbol-shaped word the session does not know is not an error yet: in
// value position a bare word is literal text (version=v2, tag=e1), so the
// parser decides. The error is kept on the token and raised only when the
// word stands where a name must be (entity, method, field, relation, key,
// label). Known symbols are always expanded, and a known v# is refused
// wherever it appears because v# symbols are metadata.
func expand(toks []token, m *symbol.Map, refs *slab[symRef]) *abi.Error {
	for i := range toks {
		t := &toks[i]
		// A symbol is a kind letter and digits not starting with 0; most
		// names fail on the second character, so the call is skipped.
		if t.kind != tIdent || len(t.raw) < 2 || t.raw[1] < '1' || t.raw[1] > '9' {
			continue
		}
		k, n := symbol.Parse(t.raw)
		if k == symbol.KindNone {
			continue
		}
		ref := refs.put(symRef{kind: k, name: t.raw})
		ok := false
		if m != nil {
			switch k {
			case symbol.KindEntity:
				ref.entity, ok = m.Entity(n)
				t.text = ref.entity.Name
			case symbol.KindMethod:
				ref.method, ok = m.Method(n)
				t.text = ref.method.Label
			case symbol.KindSlot:
				var s symbol.Slot
				s, ok = m.Slot(n)
				t.text = s.Name
			case symbol.KindRelation:
				ref.relation, ok = m.Relation(n)
				t.text = ref.relation.Name
			case symbol.KindValue:
				if i+1 < len(toks) && toks[i+1].kind == tLBrace && !toks[i+1].space {
					// v#{…}: a union constructor, judged by the planner.
					continue
				}
				if _, known := m.ValueAt(n); known {
					return errAt(t.p, abi.CodeSyntax, t.raw+" is a value-domain symbol; v# symbols are metadata, never part of a program",
						"use the value itself (e.g. a quoted string or a number) where the teaching table shows "+t.raw)
				}
			}
		}
		if !ok || t.text == "" {
			t.text = t.raw
			if k == symbol.KindValue && i+1 < len(toks) && toks[i+1].kind == tLBrace && !toks[i+1].space {
				continue
			}
			if k == symbol.KindValue {
				t.symErr = errAt(t.p, abi.CodeSyntax, t.raw+" looks like a value-domain symbol; v# symbols are metadata, never names in a program",
					"use the value itself (e.g. a quoted string or a number)")
			} else {
				t.symErr = errAt(t.p, unknownSymbolCode[k], "unknown symbol "+t.raw, symbolHint)
			}
			continue
		}
		t.sym = ref
	}
	return nil
}
