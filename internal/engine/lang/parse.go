package lang

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
)

type parser struct {
	toks  []token
	i     int
	depth int
	a     *astArena
}

// parse parses toks into lines whose nodes come from a (a fresh arena when
// a is nil).
func parse(toks []token, a *astArena) ([]*line, *abi.Error) {
	if a == nil {
		a = directAST
	}
	ps := &parser{toks: toks, a: a}
	lines := a.lineRefs.slice(8)
	for {
		ps.skipNL()
		if ps.peek().kind == tEOF {
			break
		}
		ln, err := ps.line()
		if err != nil {
			return nil, err
		}
		lines = append(lines, ln)
		if len(lines) > maxNodes {
			return nil, errAt(ln.p, abi.CodeBadRequest, fmt.Sprintf("program has more than %d statements", maxNodes), "split the work into several programs")
		}
		if t := ps.peek(); t.kind != tNL && t.kind != tEOF {
			return nil, ps.unexpected(t, "end of line")
		}
	}
	if len(lines) == 0 {
		return nil, errAt(pos{1, 1}, abi.CodeSyntax, "empty program", "send an expression such as Entity{field=\"value\"} or Entity(\"id\")")
	}
	for _, ln := range lines[:len(lines)-1] {
		if ln.label == nil {
			return nil, errAt(ln.p, abi.CodeSyntax, "only the last line may list roots",
				"bind this line to a label (x = …) or move it to the last line")
		}
	}
	return lines, nil
}

func (ps *parser) peek() *token { return &ps.toks[ps.i] }

func (ps *parser) peekN(n int) *token {
	if ps.i+n < len(ps.toks) {
		return &ps.toks[ps.i+n]
	}
	return &ps.toks[len(ps.toks)-1]
}

func (ps *parser) next() *token {
	t := &ps.toks[ps.i]
	if t.kind != tEOF {
		ps.i++
	}
	return t
}

// lastEnd is the byte offset after the most recently consumed token.
func (ps *parser) lastEnd() int {
	if ps.i == 0 {
		return 0
	}
	return ps.toks[ps.i-1].end
}

func (ps *parser) skipNL() {
	for ps.peek().kind == tNL {
		ps.i++
	}
}

func (ps *parser) unexpected(t *token, want string) *abi.Error {
	if t.kind == tDotDot {
		return dotDotError(t.p)
	}
	hint := ""
	switch {
	case t.kind == tEOF:
		hint = "the program ends early; complete the expression"
	case t.kind == tNL && want != "end of line":
		hint = "a statement ends at the end of its line; continue it inside brackets or on one line"
	case want == "end of line" && t.kind == tComma:
		hint = "several roots go on the last line only, and a binding holds one expression"
	}
	return errAt(t.p, abi.CodeSyntax, fmt.Sprintf("expected %s, found %s", want, t.describe()), hint)
}

func (ps *parser) expect(k tokKind) (*token, *abi.Error) {
	t := ps.peek()
	if t.kind != k {
		return nil, ps.unexpected(t, fmt.Sprintf("%q", k.String()))
	}
	return ps.next(), nil
}

func (ps *parser) ident(want string) (n name, err *abi.Error) {
	err = ps.identInto(want, &n)
	return n, err
}

// identInto is ident writing into *n, every field of it, so the hot
// callers can read a name straight into its slot in the AST. In the Wasm
// guest a name is too large to return in registers: each one returned by
// value is zeroed with memory.fill (a loop of memmove calls under wazero)
// and copied with memory.copy, several times over. On error *n is left
// as it was.
func (ps *parser) identInto(want string, n *name) *abi.Error {
	t := ps.peek()
	if t.kind != tIdent {
		return ps.unexpected(t, want)
	}
	if t.symErr != nil {
		return t.symErr
	}
	ps.next()
	n.p, n.text, n.raw, n.qual, n.sym = t.p, t.text, t.raw, "", t.sym
	return nil
}

// qualName reads Entity or entry:Entity into *n (see identInto); the colon
// must touch both sides so that `{key: value}` in a derive is never
// mistaken for a qualified name.
func (ps *parser) qualName(want string, n *name) *abi.Error {
	if err := ps.identInto(want, n); err != nil {
		return err
	}
	c, e := ps.peek(), ps.peekN(1)
	if c.kind == tColon && !c.space && e.kind == tIdent && !e.space && n.sym == nil {
		if e.symErr != nil {
			return e.symErr
		}
		ps.next()
		ps.next()
		n.qual = n.text
		n.text, n.sym = e.text, e.sym
		n.raw = n.raw + ":" + e.raw
	}
	return nil
}

func (ps *parser) line() (*line, *abi.Error) {
	t := ps.peek()
	ln := ps.a.lines.put(line{p: t.p})
	if t.kind == tIdent && ps.peekN(1).kind == tEq {
		lbl := &ps.a.names.grab(1)[0] // identInto writes every field
		if err := ps.identInto("label", lbl); err != nil {
			return nil, err
		}
		ln.label = lbl
		ps.next()
		r, err := ps.rhs()
		if err != nil {
			return nil, err
		}
		ln.rhs = append(ps.a.rhsRefs.slice(1), r)
		return ln, nil
	}
	ln.rhs = ps.a.rhsRefs.slice(4)
	for {
		r, err := ps.rhs()
		if err != nil {
			return nil, err
		}
		ln.rhs = append(ln.rhs, r)
		if len(ln.rhs) > maxNodes {
			return nil, errAt(r.p, abi.CodeBadRequest, fmt.Sprintf("more than %d roots", maxNodes), "")
		}
		if ps.peek().kind != tComma {
			return ln, nil
		}
		ps.next()
	}
}

func (ps *parser) rhs() (*rhs, *abi.Error) {
	t := ps.peek()
	r := ps.a.rhss.put(rhs{p: t.p, start: t.off})
	// Not a deferred closure: the guest calls one indirectly, and the
	// meter ticks after every indirect call.
	out, err := ps.rhsInto(r, t)
	r.end = ps.lastEnd()
	return out, err
}

// rhsInto parses the right-hand side r that starts at t.
func (ps *parser) rhsInto(r *rhs, t *token) (*rhs, *abi.Error) {
	if t.kind == tHeredoc || t.kind == tString {
		ps.next()
		r.kind = rhsText
		r.text = ps.a.values.put(value{p: t.p, lit: t.text})
		return r, nil
	}
	if t.kind != tIdent {
		return nil, ps.unexpected(t, "an entity, a label or page(…)")
	}
	if ps.peekN(1).kind == tArrow {
		return r, ps.arrow(r)
	}
	if t.sym == nil && ps.peekN(1).kind == tLParen {
		switch t.text {
		case "page":
			r.kind = rhsPage
			return r, ps.continuation(r, true)
		case "wait":
			r.kind = rhsWait
			return r, ps.continuation(r, false)
		case "cancel":
			r.kind = rhsCancel
			return r, ps.continuation(r, false)
		}
	}
	src, err := ps.source()
	if err != nil {
		return nil, err
	}
	r.src = src
	if r.steps, err = ps.chain(); err != nil {
		return nil, err
	}
	if h := ps.peek(); h.kind == tHeredoc {
		ps.next()
		r.render, r.tmpl = &h.p, h.text
	}
	return r, nil
}

func (ps *parser) continuation(r *rhs, isPage bool) *abi.Error {
	ps.next()
	ps.next()
	h, err := ps.ident("a continuation handle such as s0_pg1")
	if err != nil {
		return err
	}
	r.handle = ps.a.names.put(h)
	if isPage && ps.peek().kind == tComma {
		ps.next()
		k, err := ps.ident("limit=N")
		if err != nil {
			return err
		}
		if k.text != "limit" {
			return errAt(k.p, abi.CodeSyntax, "page(…) takes only limit=N after the handle", "write page("+h.raw+", limit=50)")
		}
		if _, err := ps.expect(tEq); err != nil {
			return err
		}
		n, np, err := ps.count()
		if err != nil {
			return err
		}
		r.limit, r.limitPos, r.hasLimit = n, np, true
	}
	_, err = ps.expect(tRParen)
	return err
}

// maxCount bounds .limit(n), .page_size(n) and page(…, limit=n): an int32,
// so it means the same on every platform.
const maxCount = 1<<31 - 1

func (ps *parser) count() (int, pos, *abi.Error) {
	t := ps.peek()
	if t.kind != tNumber {
		return 0, t.p, ps.unexpected(t, "a whole number")
	}
	ps.next()
	if t.num == nil {
		return 0, t.p, numberProblem(t)
	}
	n, ok := t.num.(int64)
	if !ok || n < 1 {
		return 0, t.p, errAt(t.p, abi.CodeType, "expected a positive whole number, found "+t.raw, "")
	}
	if n > maxCount {
		return 0, t.p, errAt(t.p, abi.CodeType, "expected a positive whole number of at most "+fmt.Sprint(maxCount)+", found "+t.raw, "")
	}
	return int(n), t.p, nil
}

func (ps *parser) arrow(r *rhs) *abi.Error {
	over, err := ps.ident("label")
	if err != nil {
		return err
	}
	r.over = ps.a.names.put(over)
	r.arrow = ps.next().p
	if ps.peek().kind == tLBrace {
		r.kind = rhsDerive
		ps.next()
		for {
			k, err := ps.ident("an output column name")
			if err != nil {
				return err
			}
			if _, err := ps.expect(tColon); err != nil {
				return err
			}
			v, err := ps.value()
			if err != nil {
				return err
			}
			r.derive = append(r.derive, arg{key: k, val: v})
			if ps.peek().kind != tComma {
				break
			}
			ps.next()
		}
		_, err := ps.expect(tRBrace)
		return err
	}
	r.kind = rhsEffect
	t := ps.peek()
	eff := ps.a.rhss.put(rhs{p: t.p, start: t.off})
	src, err := ps.source()
	if err != nil {
		return err
	}
	eff.src = src
	if eff.steps, err = ps.chain(); err != nil {
		return err
	}
	eff.end = ps.lastEnd()
	r.effect = eff
	return nil
}

func (ps *parser) source() (*source, *abi.Error) {
	s := &ps.a.sources.take(1)[0]
	if err := ps.qualName("an entity or a label", &s.name); err != nil {
		return nil, err
	}
	n := &s.name
	s.p = n.p
	var err *abi.Error
	switch ps.peek().kind {
	case tLParen:
		ps.next()
		if ps.peek().kind == tIdent && ps.peekN(1).kind == tEq {
			s.form = srcKeys
			if s.keys, err = ps.args(); err != nil {
				return nil, err
			}
		} else {
			s.form = srcGet
			if ps.peek().kind == tRParen {
				return nil, errAt(ps.peek().p, abi.CodeSyntax, "empty id in "+n.raw+"()", "write "+n.raw+"(\"id\"), or "+n.raw+" alone to list")
			}
			if s.id, err = ps.value(); err != nil {
				return nil, err
			}
		}
		if _, err := ps.expect(tRParen); err != nil {
			return nil, err
		}
	case tLBrace:
		s.form = srcQuery
		if s.preds, err = ps.preds(); err != nil {
			return nil, err
		}
	case tTilde:
		s.form = srcSearch
		ps.next()
		if s.phrase, err = ps.value(); err != nil {
			return nil, err
		}
		if ps.peek().kind == tLBrace {
			if s.preds, err = ps.preds(); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// postfixKeyword is the postfix step a word names (limit, sort, …). It is
// a switch, not a map: in the Wasm guest a map lookup hashes the string in
// software and calls the hasher indirectly, which the meter follows with a
// tick (a round trip to the host).
func postfixKeyword(w string) (stepKind, bool) {
	switch w {
	case "limit":
		return stLimit, true
	case "sort":
		return stSort, true
	case "filter":
		return stFilter, true
	case "page_size":
		return stPageSize, true
	case "aggregate":
		return stAggregate, true
	case "group_by":
		return stGroupBy, true
	case "dedupe":
		return stDedupe, true
	case "singleton":
		return stSingleton, true
	}
	return 0, false
}

func (ps *parser) chain() ([]*step, *abi.Error) {
	var steps []*step
	for {
		var st *step
		var err *abi.Error
		switch ps.peek().kind {
		case tDot:
			ps.next()
			if ps.peek().kind == tCaret {
				st, err = ps.reverseStep()
			} else {
				st, err = ps.dotStep()
			}
		case tLBrack:
			st = ps.a.steps.put(step{p: ps.peek().p, kind: stProject})
			ps.next()
			st.fields, err = ps.names(tRBrack, "a field name")
		default:
			return steps, nil
		}
		if err != nil {
			return nil, err
		}
		if steps == nil {
			steps = ps.a.stepRefs.slice(4)
		}
		steps = append(steps, st)
		if len(steps) > maxNodes {
			return nil, errAt(st.p, abi.CodeBadRequest, fmt.Sprintf("chain has more than %d steps", maxNodes), "split it with bindings")
		}
	}
}

func (ps *parser) dotStep() (*step, *abi.Error) {
	st := &ps.a.steps.take(1)[0]
	if err := ps.identInto("a relation, a method or a postfix such as limit(…)", &st.name); err != nil {
		return nil, err
	}
	n := &st.name
	st.p = n.p
	var err *abi.Error
	nx := ps.peek().kind
	if k, ok := postfixKeyword(n.text); ok && n.sym == nil && (nx == tLParen || k == stFilter && nx == tLBrace) {
		st.kind = k
		return st, ps.postfix(st)
	}
	if nx != tLParen {
		st.kind = stRel
		return st, nil
	}
	st.kind = stCall
	ps.next()
	if ps.peek().kind != tRParen {
		if st.args, err = ps.args(); err != nil {
			return nil, err
		}
	}
	_, err = ps.expect(tRParen)
	return st, err
}

func (ps *parser) postfix(st *step) *abi.Error {
	var err *abi.Error
	if st.kind == stFilter {
		st.preds, err = ps.preds()
		return err
	}
	ps.next() // (
	switch st.kind {
	case stLimit, stPageSize:
		if st.n, st.nPos, err = ps.count(); err != nil {
			return err
		}
	case stSort:
		f, err := ps.ident("a field to sort by")
		if err != nil {
			return err
		}
		st.field = ps.a.names.put(f)
		if ps.peek().kind == tComma {
			ps.next()
			d, err := ps.ident("asc or desc")
			if err != nil {
				return err
			}
			switch d.text {
			case "asc", "ascending":
			case "desc", "descending":
				st.desc = true
			default:
				return errAt(d.p, abi.CodeSyntax, "sort direction must be asc or desc, found "+d.raw, "write .sort("+f.raw+", desc)")
			}
		}
	case stAggregate:
		if st.specs, err = ps.specs(); err != nil {
			return err
		}
	case stGroupBy:
		f, err := ps.ident("a field to group by")
		if err != nil {
			return err
		}
		st.field = ps.a.names.put(f)
		if t := ps.peek(); t.kind == tRParen {
			// Plasm refuses it too: a group is only an aggregate's key,
			// and the bare "expected ," did not say what was missing.
			return errAt(t.p, abi.CodeSyntax, "group_by needs at least one aggregate after the field",
				fmt.Sprintf(".group_by(%s, n=count) counts the rows per %s; sum(f), avg(f), min(f) and max(f) work too, several separated by commas", f.raw, f.raw))
		}
		if _, err := ps.expect(tComma); err != nil {
			return err
		}
		if st.specs, err = ps.specs(); err != nil {
			return err
		}
	case stDedupe:
		st.fields, err = ps.names(tRParen, "a field name")
		return err
	case stSingleton:
	}
	_, err = ps.expect(tRParen)
	return err
}

var aggregateFns = map[string]bool{"sum": true, "avg": true, "min": true, "max": true}

func (ps *parser) specs() ([]spec, *abi.Error) {
	var out []spec
	for {
		n, err := ps.ident("an aggregate name (n=count)")
		if err != nil {
			return nil, err
		}
		fn := n
		if ps.peek().kind == tEq {
			ps.next()
			if fn, err = ps.ident("count, sum(f), avg(f), min(f) or max(f)"); err != nil {
				return nil, err
			}
		}
		sp := spec{name: n, fn: fn.text}
		switch {
		case fn.text == "count":
		case aggregateFns[fn.text]:
			if _, err := ps.expect(tLParen); err != nil {
				return nil, err
			}
			f, err := ps.ident("a field name")
			if err != nil {
				return nil, err
			}
			sp.field = ps.a.names.put(f)
			if _, err := ps.expect(tRParen); err != nil {
				return nil, err
			}
			if fn.p == n.p {
				// Sugar: a bare sum(score) is named sum_score.
				sp.name.text, sp.name.raw = fn.text+"_"+f.text, fn.raw+"_"+f.raw
			}
		default:
			return nil, errAt(fn.p, abi.CodeSyntax, "unknown aggregate "+fn.raw, "use count, sum(f), avg(f), min(f) or max(f)")
		}
		out = append(out, sp)
		if ps.peek().kind != tComma {
			return out, nil
		}
		ps.next()
	}
}

// names reads `a, b, c` up to and including the closing token.
func (ps *parser) names(closing tokKind, want string) ([]name, *abi.Error) {
	var out []name
	for {
		if out == nil {
			out = ps.a.names.slice(4)
		}
		if len(out) < cap(out) {
			out = out[:len(out)+1] // identInto writes every field
		} else {
			out = append(out, name{})
		}
		if err := ps.identInto(want, &out[len(out)-1]); err != nil {
			return nil, err
		}
		if ps.peek().kind != tComma {
			break
		}
		ps.next()
	}
	_, err := ps.expect(closing)
	return out, err
}

// args reads `k=v, …` without the closing parenthesis.
func (ps *parser) args() ([]arg, *abi.Error) {
	var out []arg
	if ps.isUnionCtor() {
		a, err := ps.unionArg()
		if err != nil {
			return nil, err
		}
		return []arg{a}, nil
	}
	for {
		t := ps.peek()
		if t.kind == tDotDot && ps.peekN(1).kind == tRParen {
			// Plasm's "other optional parameters omitted": nothing to send.
			ps.next()
			return out, nil
		}
		if t.kind != tIdent || ps.peekN(1).kind != tEq {
			if t.kind == tIdent || t.kind == tString || t.kind == tNumber {
				return nil, errAt(t.p, abi.CodeSyntax, "expected name=value, found "+t.describe(), "arguments are named: write param=value")
			}
			return nil, ps.unexpected(t, "name=value")
		}
		k, err := ps.ident("")
		if err != nil {
			return nil, err
		}
		ps.next()
		v, err := ps.value()
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = ps.a.args.slice(4)
		}
		out = append(out, arg{key: k, val: v})
		if ps.peek().kind != tComma {
			return out, nil
		}
		ps.next()
	}
}

// listItems reads a list value's items and its closing bracket, the
// opening one read.
func (ps *parser) listItems(v *value) *abi.Error {
	v.kind = vList
	v.list = ps.a.valueRefs.empty(4)
	if ps.peek().kind == tRBrack {
		ps.next()
		return nil
	}
	for {
		item, err := ps.value()
		if err != nil {
			return err
		}
		v.list = append(v.list, item)
		if ps.peek().kind != tComma {
			break
		}
		ps.next()
	}
	_, err := ps.expect(tRBrack)
	return err
}

func (ps *parser) value() (*value, *abi.Error) {
	ps.depth++
	v, err := ps.valueAt() // no deferred closure: see rhs
	ps.depth--
	return v, err
}

func (ps *parser) valueAt() (*value, *abi.Error) {
	t := ps.peek()
	if ps.depth > maxDepth {
		return nil, errAt(t.p, abi.CodeBadRequest, "values nest more than 64 deep", "flatten the value")
	}
	v := ps.a.values.put(value{p: t.p})
	switch t.kind {
	case tString, tHeredoc:
		ps.next()
		v.lit = t.text
	case tNumber:
		ps.next()
		if v.lit = t.num; t.num == nil {
			return nil, numberProblem(t)
		}
	case tLBrack:
		ps.next()
		if err := ps.listItems(v); err != nil {
			return nil, err
		}
	case tIdent:
		if t.symErr != nil {
			// An unknown symbol-shaped word: literal text as a bare value,
			// but label.field and Entity(…) put it in name position.
			switch ps.peekN(1).kind {
			case tDot, tLParen, tColon:
				return nil, t.symErr
			}
			ps.next()
			v.lit = t.raw
			return v, nil
		}
		if t.sym == nil {
			switch t.text {
			case "true", "false":
				ps.next()
				v.lit = t.text == "true"
				return v, nil
			case "null":
				ps.next()
				return v, nil
			case "_":
				if ps.peekN(1).kind == tDot {
					ps.next()
					ps.next()
					f, err := ps.ident("a field name after _.")
					if err != nil {
						return nil, err
					}
					v.kind, v.field = vUnderscore, ps.a.names.put(f)
					return v, nil
				}
			}
		}
		// Entity(…) as a value.
		save := ps.i
		var probe name
		if err := ps.qualName("a value", &probe); err == nil && ps.peek().kind == tLParen {
			ps.i = save
			src, err := ps.source()
			if err != nil {
				return nil, err
			}
			v.kind, v.get = vEntity, src
			return v, nil
		}
		ps.i = save
		n, _ := ps.ident("a value")
		v.kind, v.ident = vIdent, n
		if !ps.phrase(v) && ps.peek().kind == tDot && !ps.postfixCallAt(1) {
			ps.next()
			f, err := ps.ident("a field name")
			if err != nil {
				return nil, err
			}
			v.field = ps.a.names.put(f)
		}
	default:
		return nil, ps.unexpected(t, "a value")
	}
	return v, nil
}
