// Package render checks the row templates of programs (`rows <<T … T`)
// for the sandbox the host renders them in: Go text/template syntax over
// .rows, no define, template, block or call, printf only with literal
// formats and small widths. It uses only text/template/parse, so the
// engine can check a template at plan time (errors carry the program's
// line) without linking the template executor; the host's rendering
// package parses the same text, puts a step counter in every loop (Prepare)
// and renders it.
//
// Go's own template language was chosen over a Jinja-like library: it has
// no file, include or import machinery to disable, its parse tree is public
// so the sandbox can be checked and instrumented before anything runs, and
// it adds no dependency. Templates written for Jinja ({% for %}, | length)
// are refused with the Go spelling in the hint.
package render

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"
)

// MaxSource bounds a template's text.
const MaxSource = 16 << 10

// TickName is the function the sandbox calls at the top of every loop
// body (see Prepare). A template may call it too; that only spends its
// own budget.
const TickName = "plasmdTick"

// ErrTemplate is the sentinel every template error matches.
var ErrTemplate = errors.New("template error")

// Error is a template error at Line (1-based, within the template text).
type Error struct {
	Line int
	Msg  string
	Hint string
}

func (e *Error) Error() string { return fmt.Sprintf("template line %d: %s", e.Line, e.Msg) }

// Is makes errors.Is(err, ErrTemplate) hold.
func (e *Error) Is(target error) bool { return target == ErrTemplate }

// GoSyntaxHint shows the Go spelling of the usual row templates.
const GoSyntaxHint = "templates use Go text/template over .rows: {{len .rows}} rows, {{range .rows}}{{.title}}\n{{end}}, {{(index .rows 0).title}}"

// Builtins are text/template's predefined functions plus TickName: the
// only functions a template may name.
var Builtins = map[string]any{}

func init() {
	for _, n := range []string{"and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne", TickName} {
		Builtins[n] = true // parse only checks that the value is non-nil
	}
}

// Check reports whether src is a template the sandbox renders.
func Check(src string) error {
	if len(src) > MaxSource {
		return &Error{Line: 1, Msg: fmt.Sprintf("template is %d bytes; the limit is %d", len(src), MaxSource)}
	}
	if l, ok := jinja(src); ok {
		return &Error{Line: l, Msg: "this looks like a Jinja template", Hint: GoSyntaxHint}
	}
	trees, err := parse.Parse("t", src, "", "", Builtins)
	if err != nil {
		return ParseError(err)
	}
	if len(trees) > 1 {
		return &Error{Line: 1, Msg: "define and block are not allowed", Hint: "write one template; repeat text with range"}
	}
	t := trees["t"]
	if t == nil || t.Root == nil {
		return nil
	}
	c := &checker{tree: t, src: src}
	return c.check(t.Root, 0)
}

// Prepare checks a parsed tree like Check and puts a TickName call at the
// top of every loop body, so the host's step budget sees every iteration.
func Prepare(tree *parse.Tree, src string) error {
	if tree == nil || tree.Root == nil {
		return nil
	}
	c := &checker{tree: tree, src: src, instrument: true}
	return c.check(tree.Root, 0)
}

// ParseError turns a text/template error into an *Error with its line.
func ParseError(err error) *Error {
	line, msg := SplitMessage(err.Error())
	return &Error{Line: line, Msg: msg, Hint: GoSyntaxHint}
}

// SplitMessage reads text/template's "template: t:LINE[:COL]: message"
// into the line (1 when absent) and the message.
func SplitMessage(msg string) (int, string) {
	rest, ok := strings.CutPrefix(msg, "template: t:")
	if !ok {
		return 1, msg
	}
	num, tail, ok := strings.Cut(rest, ":")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 1, msg
	}
	if col, after, ok := strings.Cut(tail, ":"); ok {
		if _, err := strconv.Atoi(col); err == nil {
			tail = after
		}
	}
	return max(n, 1), strings.TrimSpace(tail)
}

// jinja reports the line of a Jinja-only construct.
func jinja(src string) (int, bool) {
	for i, ln := range strings.Split(src, "\n") {
		if strings.Contains(ln, "{%") || strings.Contains(ln, "{#") || jinjaFilter(ln) {
			return i + 1, true
		}
	}
	return 0, false
}

// jinjaFilters are Jinja filter names; a Go pipeline only pipes into
// functions, and none of these is one here.
var jinjaFilters = map[string]bool{"length": true, "join": true, "upper": true, "lower": true, "default": true,
	"first": true, "last": true, "count": true, "e": true, "safe": true, "trim": true, "title": true}

// jinjaFilter reports `{{ … | filter` on one line.
func jinjaFilter(ln string) bool {
	for {
		i := strings.Index(ln, "{{")
		if i < 0 {
			return false
		}
		ln = ln[i+2:]
		action := ln
		if j := strings.Index(action, "}}"); j >= 0 {
			action = action[:j]
		}
		if subscript(action) {
			return true // {{ rows[0].title }}: Go indexes with index
		}
		for _, seg := range strings.Split(action, "|")[1:] {
			seg = strings.TrimLeft(seg, " \t")
			end := 0
			for end < len(seg) && (seg[end] == '_' || seg[end] >= 'a' && seg[end] <= 'z') {
				end++
			}
			if jinjaFilters[seg[:end]] {
				return true
			}
		}
	}
}

// subscript reports a [ outside quotes in an action: Jinja's subscript,
// which Go's template language does not have.
func subscript(action string) bool {
	var quote byte
	for i := 0; i < len(action); i++ {
		switch c := action[i]; {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '`' || c == '\'':
			quote = c
		case c == '[':
			return true
		}
	}
	return false
}

// checker walks a parsed template.
type checker struct {
	tree       *parse.Tree
	src        string
	instrument bool
}

// check walks the tree: it refuses sub-templates, call and unbounded
// printf widths, and puts a step counter at the top of every loop body.
func (c *checker) check(n parse.Node, depth int) error {
	if depth > 64 {
		return &Error{Line: c.line(n), Msg: "template nests more than 64 deep"}
	}
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return nil
		}
		for _, sub := range x.Nodes {
			if err := c.check(sub, depth+1); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return &Error{Line: c.line(n), Msg: "{{template}} is not allowed", Hint: "write one template; repeat text with range"}
	case *parse.ActionNode:
		return c.checkPipe(x.Pipe, depth)
	case *parse.IfNode:
		return c.checkBranch(&x.BranchNode, depth)
	case *parse.WithNode:
		return c.checkBranch(&x.BranchNode, depth)
	case *parse.RangeNode:
		if !c.instrument {
			if err := c.checkPipe(x.Pipe, depth); err != nil {
				return err
			}
			if err := c.check(x.List, depth+1); err != nil {
				return err
			}
			return c.check(x.ElseList, depth+1)
		}
		tick := &parse.ActionNode{NodeType: parse.NodeAction, Pos: x.Pos, Line: x.Line,
			Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: x.Pos, Line: x.Line,
				Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: x.Pos,
					Args: []parse.Node{parse.NewIdentifier(TickName).SetTree(c.tree).SetPos(x.Pos)}}}}}
		if x.List == nil {
			x.List = &parse.ListNode{NodeType: parse.NodeList, Pos: x.Pos}
		}
		x.List.Nodes = append([]parse.Node{tick}, x.List.Nodes...)
		if err := c.checkPipe(x.Pipe, depth); err != nil {
			return err
		}
		if err := c.check(x.List, depth+1); err != nil {
			return err
		}
		return c.check(x.ElseList, depth+1)
	}
	return nil
}

func (c *checker) checkBranch(b *parse.BranchNode, depth int) error {
	if err := c.checkPipe(b.Pipe, depth); err != nil {
		return err
	}
	if err := c.check(b.List, depth+1); err != nil {
		return err
	}
	if b.ElseList != nil {
		return c.check(b.ElseList, depth+1)
	}
	return nil
}

func (c *checker) checkPipe(p *parse.PipeNode, depth int) error {
	if p == nil {
		return nil
	}
	for _, cmd := range p.Cmds {
		for i, a := range cmd.Args {
			switch y := a.(type) {
			case *parse.IdentifierNode:
				switch y.Ident {
				case "call":
					return &Error{Line: c.line(p), Msg: "call is not allowed", Hint: GoSyntaxHint}
				case "printf":
					if err := c.checkPrintf(p, cmd.Args[i+1:]); err != nil {
						return err
					}
				}
			case *parse.PipeNode:
				if err := c.checkPipe(y, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkPrintf allows only literal formats with small widths, so a format
// cannot ask fmt to pad to gigabytes before the output cap sees a byte.
func (c *checker) checkPrintf(p *parse.PipeNode, args []parse.Node) error {
	bad := &Error{Line: c.line(p), Msg: "printf needs a literal format with widths under 100", Hint: `e.g. {{printf "%.2f" .avg}}`}
	if len(args) == 0 {
		return bad
	}
	s, ok := args[0].(*parse.StringNode)
	if !ok {
		return bad
	}
	if !smallVerbs(s.Text) {
		return bad
	}
	return nil
}

// line is the 1-based line of n in the template text.
func (c *checker) line(n parse.Node) int {
	if n == nil {
		return 1
	}
	p := int(n.Position())
	if p < 0 || p > len(c.src) {
		return 1
	}
	return strings.Count(c.src[:p], "\n") + 1
}

// smallVerbs reports whether every verb of a printf format has a width
// and precision of at most two digits and no * or [n] argument index.
func smallVerbs(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		for i < len(f) && strings.IndexByte("-+# 0", f[i]) >= 0 {
			i++
		}
		for _, part := range []bool{true, false} {
			if !part {
				if i >= len(f) || f[i] != '.' {
					break
				}
				i++
			}
			digits := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
				digits++
			}
			if digits > 2 {
				return false
			}
		}
		if i < len(f) && (f[i] == '*' || f[i] == '[') {
			return false
		}
	}
	return true
}
