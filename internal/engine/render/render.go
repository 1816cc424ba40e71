// Package render turns rows into text with Go's text/template, sandboxed
// for programs written by agents: a template sees only its rows, cannot
// define, include or call other templates or functions, runs a bounded
// number of loop iterations and writes a bounded amount of text.
//
// Go's own template language was chosen over a Jinja-like library: it has
// no file, include or import machinery to disable, its parse tree is public
// so the sandbox can be checked and instrumented before anything runs, and
// it adds no dependency to the engine. Templates written for Jinja
// ({% for %}, | length) are refused with the Go spelling in the hint.
//
// The engine parses a template at plan time (so errors carry the program's
// line) and the host renders it over the rows it holds.
package render

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// Limits on one rendering.
const (
	MaxOutput = 1 << 20 // bytes of rendered text
	MaxSteps  = 100000  // loop iterations, all loops together
	MaxSource = 16 << 10
)

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

// Template is a checked template. Render is not safe for concurrent use
// of one Template: parse one per rendering.
type Template struct {
	t     *template.Template
	steps *int
}

// tickName is the function the sandbox calls at the top of every loop
// body. A template may call it too; that only spends its own budget.
const tickName = "plasmdTick"

var lineRE = regexp.MustCompile(`^template: t:(\d+):(?:\d+:)? ?(.*)$`)

// Parse checks src and prepares it for rendering.
func Parse(src string) (*Template, error) {
	if len(src) > MaxSource {
		return nil, &Error{Line: 1, Msg: fmt.Sprintf("template is %d bytes; the limit is %d", len(src), MaxSource)}
	}
	if l, ok := jinja(src); ok {
		return nil, &Error{Line: l, Msg: "this looks like a Jinja template", Hint: GoSyntaxHint}
	}
	steps := new(int)
	funcs := template.FuncMap{tickName: func() (string, error) {
		*steps++
		if *steps > MaxSteps {
			return "", fmt.Errorf("loops ran more than %d times", MaxSteps)
		}
		return "", nil
	}}
	t, err := template.New("t").Funcs(funcs).Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, parseError(err)
	}
	if len(t.Templates()) > 1 {
		return nil, &Error{Line: 1, Msg: "define and block are not allowed", Hint: "write one template; repeat text with range"}
	}
	if t.Tree == nil || t.Tree.Root == nil {
		t, _ = template.New("t").Parse("")
		return &Template{t: t, steps: steps}, nil
	}
	c := &checker{tree: t.Tree, src: src}
	if err := c.check(t.Tree.Root, 0); err != nil {
		return nil, err
	}
	return &Template{t: t, steps: steps}, nil
}

func parseError(err error) *Error {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Line: max(n, 1), Msg: m[2], Hint: GoSyntaxHint}
	}
	return &Error{Line: 1, Msg: msg, Hint: GoSyntaxHint}
}

// jinja reports the line of a Jinja-only construct.
func jinja(src string) (int, bool) {
	for i, ln := range strings.Split(src, "\n") {
		if strings.Contains(ln, "{%") || strings.Contains(ln, "{#") || jinjaFilter.MatchString(ln) {
			return i + 1, true
		}
	}
	return 0, false
}

// jinjaFilter matches {{ x | filter }}; a Go pipeline has no space-free
// reading of that which starts with an identifier after the bar, so the
// only Go templates it catches are ones that pipe into a function, which
// this sandbox offers none of beyond the builtins.
var jinjaFilter = regexp.MustCompile(`\{\{[^}]*\|\s*(length|join|upper|lower|default|first|last|count|e|safe|trim|title)\b`)

// checker walks a parsed template.
type checker struct {
	tree *parse.Tree
	src  string
}

var printfVerb = regexp.MustCompile(`%[-+# 0]*(\d*)(?:\.(\d*))?([a-zA-Z%*\[])`)

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
		tick := &parse.ActionNode{NodeType: parse.NodeAction, Pos: x.Pos, Line: x.Line,
			Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: x.Pos, Line: x.Line,
				Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: x.Pos,
					Args: []parse.Node{parse.NewIdentifier(tickName).SetTree(c.tree).SetPos(x.Pos)}}}}}
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
	for _, m := range printfVerb.FindAllStringSubmatch(s.Text, -1) {
		if len(m[1]) > 2 || len(m[2]) > 2 || m[3] == "*" || m[3] == "[" {
			return bad
		}
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

// Render executes t over rows (each a column → value map) and returns the
// text. Integers reach the template as float64 so that no row value can
// drive a range loop; they print the same.
func (t *Template) Render(rows []map[string]any) (string, error) {
	data := make([]any, len(rows))
	for i, r := range rows {
		m := make(map[string]any, len(r))
		for k, v := range r {
			m[k] = safeValue(v, 0)
		}
		data[i] = m
	}
	*t.steps = 0
	var b limitWriter
	if err := t.t.Execute(&b, map[string]any{"rows": data}); err != nil {
		msg := err.Error()
		if m := lineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return "", &Error{Line: max(n, 1), Msg: m[2]}
		}
		return "", &Error{Line: 1, Msg: msg}
	}
	return b.String(), nil
}

func safeValue(v any, depth int) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case []any:
		if depth > 32 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = safeValue(e, depth+1)
		}
		return out
	case map[string]any:
		if depth > 32 {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = safeValue(e, depth+1)
		}
		return out
	case fmt.Stringer:
		return x.String()
	}
	return v
}

// limitWriter fails the rendering once MaxOutput bytes are written.
type limitWriter struct{ strings.Builder }

var errTooLong = fmt.Errorf("rendered text exceeds %d bytes", MaxOutput)

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > MaxOutput {
		return 0, errTooLong
	}
	return w.Builder.Write(p)
}

var _ io.Writer = (*limitWriter)(nil)
