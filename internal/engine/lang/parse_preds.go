package lang

import "github.com/plasmd/plasmd/guest/abi"

// Predicates: the `{field op value, …}` of a query or filter.

// predOp is the predicate operator a token is (a switch for the reason
// postfixKeyword gives).
func predOp(k tokKind) (string, bool) {
	switch k {
	case tEq:
		return "=", true
	case tNe:
		return "!=", true
	case tGt:
		return ">", true
	case tLt:
		return "<", true
	case tGe:
		return ">=", true
	case tLe:
		return "<=", true
	case tTilde:
		return "~", true
	}
	return "", false
}

// preds reads `{field op value, …}` including the braces.
func (ps *parser) preds() ([]pred, *abi.Error) {
	ps.next() // {
	var out []pred
	for {
		f, err := ps.ident("a field name")
		if err != nil {
			return nil, err
		}
		var foreign *name
		if ps.peek().kind == tDot && ps.peekN(1).kind == tIdent {
			ps.next()
			fe := f
			foreign = ps.a.names.put(fe)
			if f, err = ps.ident("a field of " + fe.raw); err != nil {
				return nil, err
			}
		}
		opTok := ps.peek()
		op, ok := predOp(opTok.kind)
		if !ok {
			return nil, ps.unexpected(opTok, "an operator (= != > < >= <= ~)")
		}
		ps.next()
		v, err := ps.value()
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = ps.a.preds.slice(4)
		}
		out = append(out, pred{p: f.p, field: f, op: op, val: v, foreign: foreign})
		if foreign != nil {
			out[len(out)-1].p = foreign.p
		}
		if ps.peek().kind != tComma {
			break
		}
		ps.next()
	}
	_, err := ps.expect(tRBrace)
	return out, err
}
