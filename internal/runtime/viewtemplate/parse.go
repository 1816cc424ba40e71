package viewtemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

type node interface{}

type textNode struct{ text string }

type outNode struct{ e expr }

type setNode struct {
	name string
	e    expr
}

type branch struct {
	cond expr // nil for else
	body []node
}

type ifNode struct{ branches []branch }

type expr interface{}

type litExpr struct{ v any }

type nameExpr struct {
	name string
	pos  int
}

type attrExpr struct {
	obj  expr
	name string
	pos  int
}

type indexExpr struct {
	obj, idx expr
	pos      int
}

type callExpr struct { // a string method: x.split('-')
	obj    expr
	method string
	args   []expr
	pos    int
}

type filterExpr struct {
	arg  expr
	name string
	args []expr
	pos  int
}

type binExpr struct {
	op   string
	l, r expr
	pos  int
}

type notExpr struct{ e expr }

type listExpr struct{ items []expr }

// endTag is a closing or continuing tag met while parsing a block.
type endTag struct {
	kw   string // elif else endif
	rest string
	pos  int
}

type blockParser struct {
	src   string
	segs  []segment
	i     int
	depth int
}

func (p *blockParser) errAt(pos int, format string, args ...any) error {
	l, c := lineCol(p.src, pos)
	return &Error{Line: l, Column: c, Msg: fmt.Sprintf(format, args...)}
}

// block parses nodes until a tag that ends it (returned) or the end (nil).
func (p *blockParser) block(depth int) ([]node, *endTag, error) {
	if depth > maxDepth {
		return nil, nil, p.errAt(0, "blocks nested deeper than %d", maxDepth)
	}
	var out []node
	for p.i < len(p.segs) {
		s := p.segs[p.i]
		p.i++
		switch s.kind {
		case segText:
			out = append(out, &textNode{s.text})
		case segOut:
			e, err := p.expr(s.text, s.pos)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, &outNode{e})
		case segTag:
			trimmed := strings.TrimSpace(s.text)
			pos := s.pos + strings.Index(s.text, trimmed)
			kw, rest, _ := strings.Cut(trimmed, " ")
			restPos := pos + len(kw) + 1
			switch kw {
			case "if":
				n, err := p.ifBlock(rest, restPos, depth)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, n)
			case "elif", "else", "endif":
				return out, &endTag{kw: kw, rest: rest, pos: pos}, nil
			case "set":
				name, val, ok := strings.Cut(rest, "=")
				name = strings.TrimSpace(name)
				if !ok || !validName(name) {
					return nil, nil, p.errAt(pos, "write {%% set name = expression %%}")
				}
				e, err := p.expr(val, restPos+len(rest)-len(val))
				if err != nil {
					return nil, nil, err
				}
				out = append(out, &setNode{name, e})
			default:
				err := p.errAt(pos, "unsupported tag %q: view templates know if, elif, else, endif and set (no loops, includes or macros)", kw)
				err.(*Error).Unsupported = true
				return nil, nil, err
			}
		}
	}
	return out, nil, nil
}

func (p *blockParser) ifBlock(cond string, pos, depth int) (*ifNode, error) {
	n := &ifNode{}
	c, err := p.expr(cond, pos)
	if err != nil {
		return nil, err
	}
	for {
		body, end, err := p.block(depth + 1)
		if err != nil {
			return nil, err
		}
		n.branches = append(n.branches, branch{cond: c, body: body})
		if end == nil {
			return nil, p.errAt(pos, "{%% if %%} is never closed with {%% endif %%}")
		}
		switch end.kw {
		case "endif":
			return n, nil
		case "else":
			if c == nil {
				return nil, p.errAt(end.pos, "a second {%% else %%}")
			}
			c = nil
		case "elif":
			if c == nil {
				return nil, p.errAt(end.pos, "{%% elif %%} after {%% else %%}")
			}
			if c, err = p.expr(end.rest, end.pos+5); err != nil {
				return nil, err
			}
		}
	}
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// exprParser parses one expression's tokens.
type exprParser struct {
	p     *blockParser
	toks  []token
	i     int
	depth int
}

func (p *blockParser) expr(s string, base int) (expr, error) {
	toks, err := lex(p.src, s, base)
	if err != nil {
		return nil, err
	}
	ep := &exprParser{p: p, toks: toks}
	e, err := ep.or()
	if err != nil {
		return nil, err
	}
	if t := ep.peek(); t.kind != tEOF {
		return nil, p.errAt(t.pos, "unexpected %q", t.text)
	}
	return e, nil
}

func (e *exprParser) peek() token { return e.toks[e.i] }

func (e *exprParser) next() token {
	t := e.toks[e.i]
	if t.kind != tEOF {
		e.i++
	}
	return t
}

func (e *exprParser) isWord(w string) bool { t := e.peek(); return t.kind == tName && t.text == w }
func (e *exprParser) isOp(o string) bool   { t := e.peek(); return t.kind == tOp && t.text == o }

func (e *exprParser) expect(o string) error {
	if !e.isOp(o) {
		t := e.peek()
		return e.p.errAt(t.pos, "expected %q, found %q", o, t.text)
	}
	e.next()
	return nil
}

// unsupported reports valid Jinja this subset does not run: the view is
// then not executable here, while the catalog still loads.
func (e *exprParser) unsupported(pos int, what string) error {
	err := e.p.errAt(pos, "%s are not supported in view templates", what)
	err.(*Error).Unsupported = true
	return err
}

// unsupportedOps are Jinja operators a view template may not use.
var unsupportedOps = map[string]string{
	"*": "arithmetic operators (* / // % **)", "/": "arithmetic operators (* / // % **)",
	"//": "arithmetic operators (* / // % **)", "%": "arithmetic operators (* / // % **)",
	"**": "arithmetic operators (* / // % **)",
}

// checkUnsupported looks at the token after a complete expression for
// Jinja that continues it in a way this subset does not run.
func (e *exprParser) checkUnsupported() error {
	t := e.peek()
	switch {
	case t.kind == tName && t.text == "if":
		return e.unsupported(t.pos, "inline if expressions (x if c else y)")
	case t.kind == tName && t.text == "is":
		return e.unsupported(t.pos, "tests (is defined, is none, …)")
	case t.kind == tOp && unsupportedOps[t.text] != "":
		return e.unsupported(t.pos, unsupportedOps[t.text])
	}
	return nil
}

func (e *exprParser) enter() error {
	e.depth++
	if e.depth > maxDepth {
		return e.p.errAt(e.peek().pos, "expression nested deeper than %d", maxDepth)
	}
	return nil
}

func (e *exprParser) or() (expr, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer func() { e.depth-- }()
	l, err := e.and()
	for err == nil && e.isWord("or") {
		t := e.next()
		var r expr
		if r, err = e.and(); err == nil {
			l = &binExpr{op: "or", l: l, r: r, pos: t.pos}
		}
	}
	if err == nil {
		err = e.checkUnsupported()
	}
	return l, err
}

func (e *exprParser) and() (expr, error) {
	l, err := e.not()
	for err == nil && e.isWord("and") {
		t := e.next()
		var r expr
		if r, err = e.not(); err == nil {
			l = &binExpr{op: "and", l: l, r: r, pos: t.pos}
		}
	}
	return l, err
}

func (e *exprParser) not() (expr, error) {
	if e.isWord("not") {
		e.next()
		if err := e.enter(); err != nil {
			return nil, err
		}
		defer func() { e.depth-- }()
		x, err := e.not()
		return &notExpr{x}, err
	}
	return e.cmp()
}

func (e *exprParser) cmp() (expr, error) {
	l, err := e.concat()
	if err != nil {
		return nil, err
	}
	t := e.peek()
	op := ""
	switch {
	case t.kind == tOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">="):
		op = t.text
		e.next()
	case e.isWord("in"):
		op = "in"
		e.next()
	case e.isWord("not") && e.i+1 < len(e.toks) && e.toks[e.i+1].kind == tName && e.toks[e.i+1].text == "in":
		op = "not in"
		e.i += 2
	default:
		return l, nil
	}
	r, err := e.concat()
	return &binExpr{op: op, l: l, r: r, pos: t.pos}, err
}

func (e *exprParser) concat() (expr, error) {
	l, err := e.add()
	for err == nil && e.isOp("~") {
		t := e.next()
		var r expr
		if r, err = e.add(); err == nil {
			l = &binExpr{op: "~", l: l, r: r, pos: t.pos}
		}
	}
	return l, err
}

func (e *exprParser) add() (expr, error) {
	l, err := e.filtered()
	for err == nil && (e.isOp("+") || e.isOp("-")) {
		t := e.next()
		var r expr
		if r, err = e.filtered(); err == nil {
			l = &binExpr{op: t.text, l: l, r: r, pos: t.pos}
		}
	}
	return l, err
}

func (e *exprParser) filtered() (expr, error) {
	x, err := e.postfix()
	for err == nil && e.isOp("|") {
		e.next()
		t := e.next()
		if t.kind != tName {
			return nil, e.p.errAt(t.pos, "expected a filter name after |")
		}
		f := &filterExpr{arg: x, name: t.text, pos: t.pos}
		if e.isOp("(") {
			if f.args, err = e.args(); err != nil {
				return nil, err
			}
		}
		x = f
	}
	return x, err
}

func (e *exprParser) args() ([]expr, error) {
	if err := e.expect("("); err != nil {
		return nil, err
	}
	var out []expr
	for !e.isOp(")") {
		a, err := e.or()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		if !e.isOp(",") {
			break
		}
		e.next()
	}
	return out, e.expect(")")
}

func (e *exprParser) postfix() (expr, error) {
	x, err := e.primary()
	for err == nil {
		switch {
		case e.isOp("."):
			e.next()
			t := e.next()
			if t.kind != tName {
				return nil, e.p.errAt(t.pos, "expected a name after '.'")
			}
			if e.isOp("(") {
				var args []expr
				if args, err = e.args(); err != nil {
					return nil, err
				}
				x = &callExpr{obj: x, method: t.text, args: args, pos: t.pos}
				continue
			}
			x = &attrExpr{obj: x, name: t.text, pos: t.pos}
		case e.isOp("["):
			t := e.next()
			if e.isOp(":") {
				return nil, e.unsupported(e.peek().pos, "slices (x[a:b])")
			}
			var idx expr
			if idx, err = e.or(); err != nil {
				return nil, err
			}
			if e.isOp(":") {
				return nil, e.unsupported(e.peek().pos, "slices (x[a:b])")
			}
			if err = e.expect("]"); err != nil {
				return nil, err
			}
			x = &indexExpr{obj: x, idx: idx, pos: t.pos}
		default:
			return x, nil
		}
	}
	return x, err
}

// negated is -n for an integer literal beyond int64 (a json.Number of its
// digits), kept exact as n is: 0 - n in float64 made -99999999999999999999
// -1e20, unequal to the cell it spells. --n is n again, and
// -9223372036854775808 is the int64 it fits. An int64 literal is negated
// as an int64 for the same reason (0 - x in float64 rounds beyond 2^53).
func negated(n json.Number) *litExpr {
	s := "-" + string(n)
	if strings.HasPrefix(string(n), "-") {
		s = string(n)[1:]
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return &litExpr{i}
	}
	return &litExpr{json.Number(s)}
}

func (e *exprParser) primary() (expr, error) {
	t := e.next()
	switch t.kind {
	case tString:
		return &litExpr{t.text}, nil
	case tNumber:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err == nil {
			return &litExpr{n}, nil
		}
		if errors.Is(err, strconv.ErrRange) {
			// An integer beyond int64 keeps its digits, as row cells do;
			// a float64 would round it. Canonical digits (0099… is 99…),
			// so that it prints as a number and compares exactly.
			return &litExpr{json.Number(strings.TrimLeft(t.text, "0"))}, nil
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, e.p.errAt(t.pos, "bad number %q", t.text)
		}
		return &litExpr{f}, nil
	case tName:
		switch t.text {
		case "true", "True":
			return &litExpr{true}, nil
		case "false", "False":
			return &litExpr{false}, nil
		case "none", "None":
			return &litExpr{nil}, nil
		}
		return &nameExpr{t.text, t.pos}, nil
	case tOp:
		switch t.text {
		case "(":
			if err := e.enter(); err != nil {
				return nil, err
			}
			defer func() { e.depth-- }()
			x, err := e.or()
			if err != nil {
				return nil, err
			}
			return x, e.expect(")")
		case "-":
			if err := e.enter(); err != nil {
				return nil, err
			}
			defer func() { e.depth-- }()
			x, err := e.postfix()
			if l, ok := x.(*litExpr); ok && err == nil {
				switch v := l.v.(type) {
				case json.Number:
					return negated(v), nil
				case int64:
					if v == math.MinInt64 { // --9223372036854775808
						return &litExpr{json.Number("9223372036854775808")}, nil
					}
					return &litExpr{-v}, nil
				}
			}
			return &binExpr{op: "-", l: &litExpr{int64(0)}, r: x, pos: t.pos}, err
		case "{":
			return nil, e.unsupported(t.pos, "dict literals ({…})")
		case "[":
			l := &listExpr{}
			for !e.isOp("]") {
				x, err := e.or()
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, x)
				if !e.isOp(",") {
					break
				}
				e.next()
			}
			return l, e.expect("]")
		}
	}
	if t.kind == tEOF {
		return nil, e.p.errAt(t.pos, "expression ends too early")
	}
	return nil, e.p.errAt(t.pos, "unexpected %q", t.text)
}
