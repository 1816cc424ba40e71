// Package viewtemplate renders the computed values of catalog views
// (Plasm's `kind: computed` templates): a loop-free subset of Jinja —
// `{{ expr }}`, `{% if %}/{% elif %}/{% else %}/{% endif %}`, `{% set %}`,
// `{# comments #}` and `-` whitespace control — with the filters Plasm's
// view templates use.
//
// Why not a library: of the Go Jinja engines the module proxy serves, one
// cannot register filters (Plasm's urlencode, wire_time, … are filters)
// and the other brings file loaders (include/import/extends) and
// unbounded loops, which a catalog author's template must not reach. This
// subset has no loops, no calls other than a few string methods and no
// access to anything but the values it is given, so rendering takes time
// linear in the template and output is bounded by MaxOutput.
package viewtemplate

import (
	"errors"
	"fmt"
	"strings"
)

// Limits.
const (
	MaxSource = 32 << 10 // characters of template text (Plasm's bound)
	MaxOutput = 64 << 10 // bytes of rendered text
	maxDepth  = 64       // nesting of blocks and expressions
)

// ErrTemplate marks template syntax and evaluation errors.
var ErrTemplate = errors.New("view template")

// ErrUnsupported marks valid Jinja this subset does not run (a loop, an
// include, a macro): the catalog is not wrong, plasmd cannot run it.
var ErrUnsupported = errors.New("unsupported in view templates")

// Error is a template problem at a 1-based line and column of the source.
type Error struct {
	Line, Column int
	Msg          string
	Unsupported  bool
	undefined    bool // a missing name or key, which default may replace
}

// undefined is what the default filter receives for a missing name.
type undefined struct{}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %d:%d: %s", ErrTemplate, e.Line, e.Column, e.Msg)
}

// Is makes errors.Is(err, ErrTemplate) hold.
func (e *Error) Is(target error) bool {
	return target == ErrTemplate || e.Unsupported && target == ErrUnsupported
}

// Template is a parsed template; it is safe for concurrent use.
type Template struct {
	src   string
	nodes []node
}

// Parse parses src (trimmed, as Plasm does).
func Parse(src string) (*Template, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil, &Error{Line: 1, Column: 1, Msg: "a computed template must not be empty"}
	}
	if len(src) > MaxSource {
		return nil, &Error{Line: 1, Column: 1, Msg: fmt.Sprintf("template longer than %d characters", MaxSource)}
	}
	segs, err := scan(src)
	if err != nil {
		return nil, err
	}
	p := &blockParser{src: src, segs: segs}
	nodes, end, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if end != nil {
		return nil, p.errAt(end.pos, "{%% %s %%} without an open {%% if %%}", end.kw)
	}
	return &Template{src: src, nodes: nodes}, nil
}

// Filters returns the filters the template names, in order of first use.
func (t *Template) Filters() []string {
	var out []string
	seen := map[string]bool{}
	var walkExpr func(e expr)
	walkExpr = func(e expr) {
		switch x := e.(type) {
		case *filterExpr:
			if !seen[x.name] {
				seen[x.name] = true
				out = append(out, x.name)
			}
			walkExpr(x.arg)
			for _, a := range x.args {
				walkExpr(a)
			}
		case *binExpr:
			walkExpr(x.l)
			walkExpr(x.r)
		case *notExpr:
			walkExpr(x.e)
		case *attrExpr:
			walkExpr(x.obj)
		case *indexExpr:
			walkExpr(x.obj)
			walkExpr(x.idx)
		case *callExpr:
			walkExpr(x.obj)
			for _, a := range x.args {
				walkExpr(a)
			}
		}
	}
	var walk func(ns []node)
	walk = func(ns []node) {
		for _, n := range ns {
			switch x := n.(type) {
			case *outNode:
				walkExpr(x.e)
			case *setNode:
				walkExpr(x.e)
			case *ifNode:
				for _, b := range x.branches {
					if b.cond != nil {
						walkExpr(b.cond)
					}
					walk(b.body)
				}
			}
		}
	}
	walk(t.nodes)
	return out
}

// Unknown returns the first filter the template names that this package
// does not provide, or "".
func (t *Template) Unknown() string {
	for _, f := range t.Filters() {
		if _, ok := filters[f]; !ok {
			return f
		}
	}
	return ""
}

// Render renders the template with vars (JSON-like values: nil, bool,
// float64/int64/int, string, []any, map[string]any). A name the template
// reads that vars lacks is an error, as in Plasm (strict undefined).
func (t *Template) Render(vars map[string]any) (string, error) {
	r := &renderer{t: t, vars: map[string]any{}}
	for k, v := range vars {
		r.vars[k] = v
	}
	if err := r.nodes(t.nodes); err != nil {
		return "", err
	}
	return r.out.String(), nil
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(src string, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	col := off - strings.LastIndex(src[:off], "\n")
	return line, col
}
