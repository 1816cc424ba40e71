package lang

import (
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Parsing of the forms of Plasm's wider grammar that the first parser did
// not read: reverse traversal, unquoted phrases and union constructors.

// reverseStep reads `^Entity` and an optional `{preds}` after the dot.
func (ps *parser) reverseStep() (*step, *abi.Error) {
	caret := ps.next()
	var n name
	if err := ps.qualName("an entity after .^", &n); err != nil {
		return nil, err
	}
	st := ps.a.steps.put(step{p: caret.p, kind: stReverse, name: n})
	var err *abi.Error
	if ps.peek().kind == tLBrace {
		if st.preds, err = ps.preds(); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// phrase extends a bare word into an unquoted phrase: `owner=alice smith`
// is the text "alice smith". Words join with one space. It stops before a
// word that is itself followed by an operator, so a missing comma between
// two arguments (`a=b c=d`) is still reported as such.
func (ps *parser) phrase(v *value) bool {
	words := []string{v.ident.raw}
	for {
		t := ps.peek()
		if (t.kind != tIdent && t.kind != tNumber) || !t.space {
			break
		}
		if _, op := predOp(ps.peekN(1).kind); op || ps.peekN(1).kind == tLParen || ps.peekN(1).kind == tDot && !ps.postfixAt(2) {
			break
		}
		words = append(words, t.raw)
		ps.next()
	}
	if len(words) == 1 {
		return false
	}
	v.kind, v.lit = vLit, strings.Join(words, " ")
	return true
}

// postfixAt reports whether token i ahead is a postfix keyword (limit,
// sort, …), so `Issue~login bug.limit(2)` ends its phrase at "bug" rather
// than reading bug.limit as a label field.
func (ps *parser) postfixAt(i int) bool {
	t := ps.peekN(i)
	_, ok := postfixKeyword(t.text)
	return t.kind == tIdent && ok && t.sym == nil
}

// postfixCallAt reports a postfix step called at token i ahead (`limit(`,
// `filter{`). A one-word phrase ends there as a longer one does (phrase):
// without it Issue~login.limit(2) read login.limit as a label's field and
// failed at "(". A field is never called nor followed by a brace, so
// label.field values are unaffected.
func (ps *parser) postfixCallAt(i int) bool {
	k := ps.peekN(i + 1).kind
	return ps.postfixAt(i) && (k == tLParen || k == tLBrace)
}

// isUnionCtor reports whether the next tokens are `v#{`.
func (ps *parser) isUnionCtor() bool {
	t := ps.peek()
	if t.kind != tIdent {
		return false
	}
	k, _ := symbol.Parse(t.raw)
	nx := ps.peekN(1)
	return k == symbol.KindValue && nx.kind == tLBrace && !nx.space
}

// unionArg reads `v#{k=v, …}` as a method's sole argument.
func (ps *parser) unionArg() (arg, *abi.Error) {
	t := ps.next()
	ps.next() // {
	v := ps.a.values.put(value{p: t.p, kind: vUnion, ident: name{p: t.p, text: t.raw, raw: t.raw}})
	if ps.peek().kind != tRBrace {
		var err *abi.Error
		if v.union, err = ps.args(); err != nil {
			return arg{}, err
		}
	}
	if _, err := ps.expect(tRBrace); err != nil {
		return arg{}, err
	}
	if nx := ps.peek(); nx.kind == tComma {
		return arg{}, errAt(nx.p, abi.CodeSyntax, "a union constructor "+t.raw+"{…} must be the only argument",
			"put every field inside the braces: "+t.raw+"{k=v, …}")
	}
	return arg{key: name{p: t.p, text: t.raw, raw: t.raw}, val: v}, nil
}

// dotDotError explains a `..` left where it means nothing: it is only
// Plasm's "other optional parameters omitted" at the end of a call.
func dotDotError(p pos) *abi.Error {
	return errAt(p, abi.CodeSyntax, "`..` is the teaching table's marker for omitted optional parameters; it is only allowed as the last argument of a method call",
		"remove `..` (and the comma before it); pass only the parameters you want")
}
