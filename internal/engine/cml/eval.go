package cml

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Limits that keep a hostile or mistaken catalog (or a huge argument) from
// exhausting the guest: evaluation depth, and bytes of evaluated output.
const (
	maxDepth  = 64
	maxOutput = 1 << 20
)

var (
	errTooDeep  = fmt.Errorf("expression nested deeper than %d levels", maxDepth)
	errTooLarge = fmt.Errorf("evaluated request exceeds %d bytes", maxOutput)
)

// evaluator evaluates CML expressions against one environment. It charges
// every value it produces against a shared byte budget, so an expression
// that references a large variable many times fails instead of growing
// without bound.
type evaluator struct {
	env   map[string]any
	used  int
	sizes map[string]int // size of each variable's value, measured once
}

func newEvaluator(env map[string]any) *evaluator {
	return &evaluator{env: env, sizes: map[string]int{}}
}

func (ev *evaluator) charge(n int) error {
	ev.used += n
	if ev.used > maxOutput {
		return errTooLarge
	}
	return nil
}

func (ev *evaluator) eval(e *catalog.Expr, depth int) (any, error) {
	if e == nil {
		return nil, nil
	}
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch e.Type {
	case catalog.ExprVar:
		v, ok := ev.env[e.Name]
		if !ok || v == nil {
			return nil, nil
		}
		n, seen := ev.sizes[e.Name]
		if !seen {
			var err error
			if n, err = sizeOf(v, 0); err != nil {
				return nil, fmt.Errorf("variable %q: %w", e.Name, err)
			}
			ev.sizes[e.Name] = n
		}
		return v, ev.charge(n)
	case catalog.ExprConst:
		n, err := sizeOf(e.Value, 0)
		if err != nil {
			return nil, fmt.Errorf("const: %w", err)
		}
		return e.Value, ev.charge(n)
	case catalog.ExprObject:
		out := make(object, 0, len(e.Fields))
		for _, f := range e.Fields {
			v, err := ev.eval(f.Value, depth+1)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", f.Key, err)
			}
			if v == nil {
				continue
			}
			if err := ev.charge(len(f.Key) + 4); err != nil {
				return nil, err
			}
			out = out.with(f.Key, v)
		}
		return out, nil
	case catalog.ExprArray:
		out := make([]any, 0, len(e.Items))
		for i, it := range e.Items {
			v, err := ev.eval(it, depth+1)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			if err := ev.charge(1); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case catalog.ExprIf:
		ok, err := ev.cond(e.Cond, depth+1)
		if err != nil {
			return nil, err
		}
		if ok {
			return ev.eval(e.Then, depth+1)
		}
		return ev.eval(e.Else, depth+1)
	case catalog.ExprJoin:
		return ev.join(e, depth)
	case catalog.ExprFormat:
		return ev.format(e, depth)
	case "":
		return nil, errors.New("expression has no type")
	}
	return nil, fmt.Errorf("unknown expression type %q", e.Type)
}

func (ev *evaluator) cond(c *catalog.Cond, depth int) (bool, error) {
	if c == nil {
		return false, errors.New("if expression has no condition")
	}
	if depth > maxDepth {
		return false, errTooDeep
	}
	switch {
	case c.Exists != "":
		v, ok := ev.env[c.Exists]
		return ok && v != nil, nil
	case c.Equals != nil:
		l, err := ev.eval(c.Equals.Left, depth+1)
		if err != nil {
			return false, fmt.Errorf("equals left: %w", err)
		}
		r, err := ev.eval(c.Equals.Right, depth+1)
		if err != nil {
			return false, fmt.Errorf("equals right: %w", err)
		}
		return Equal(l, r), nil
	case c.Bool != nil:
		v, err := ev.eval(c.Bool, depth+1)
		if err != nil {
			return false, err
		}
		return truthy(v), nil
	}
	return false, errors.New("condition has none of exists, equals, bool")
}

// join renders an array as its elements' text separated by Sep; null
// elements are skipped, and a scalar joins as itself so a single value and a
// one-element list mean the same thing.
func (ev *evaluator) join(e *catalog.Expr, depth int) (any, error) {
	v, err := ev.eval(e.Expr, depth+1)
	if err != nil || v == nil {
		return nil, err
	}
	list, ok := asList(v)
	if !ok {
		s, scalar, err := scalarText(v)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		if !scalar {
			return nil, fmt.Errorf("join: cannot join %s", kindOf(v))
		}
		return s, nil
	}
	var b strings.Builder
	n := 0
	for i, it := range list {
		if it == nil {
			continue
		}
		s, scalar, err := scalarText(it)
		if err != nil {
			return nil, fmt.Errorf("join item %d: %w", i, err)
		}
		if !scalar {
			return nil, fmt.Errorf("join item %d is %s, not a scalar", i, kindOf(it))
		}
		if n > 0 {
			b.WriteString(e.Sep)
		}
		b.WriteString(s)
		n++
		if b.Len() > maxOutput {
			return nil, errTooLarge
		}
	}
	out := b.String()
	return out, ev.charge(len(out))
}

// format fills "{name}" placeholders from the expression's Vars, falling
// back to the environment for names it does not bind. "{{" and "}}" stand
// for literal braces. A placeholder whose value is null makes the whole
// result null, so an object key built from a missing argument is omitted
// rather than sent half-filled.
func (ev *evaluator) format(e *catalog.Expr, depth int) (any, error) {
	t := e.Template
	var b strings.Builder
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '{' && i+1 < len(t) && t[i+1] == '{':
			b.WriteByte('{')
			i += 2
		case c == '}' && i+1 < len(t) && t[i+1] == '}':
			b.WriteByte('}')
			i += 2
		case c == '{':
			end := strings.IndexByte(t[i+1:], '}')
			if end < 0 {
				return nil, fmt.Errorf("format: unterminated placeholder at byte %d of %q", i, t)
			}
			name := t[i+1 : i+1+end]
			if name == "" {
				return nil, fmt.Errorf("format: empty placeholder at byte %d of %q", i, t)
			}
			var v any
			if x, ok := e.Vars[name]; ok {
				var err error
				if v, err = ev.eval(x, depth+1); err != nil {
					return nil, fmt.Errorf("format placeholder %q: %w", name, err)
				}
			} else {
				v = ev.env[name]
			}
			if v == nil {
				return nil, nil
			}
			s, scalar, err := scalarText(v)
			if err != nil {
				return nil, fmt.Errorf("format placeholder %q: %w", name, err)
			}
			if !scalar {
				return nil, fmt.Errorf("format placeholder %q is %s, not a scalar", name, kindOf(v))
			}
			b.WriteString(s)
			i += end + 2
		case c == '}':
			return nil, fmt.Errorf("format: unmatched '}' at byte %d of %q", i, t)
		default:
			b.WriteByte(c)
			i++
		}
		if b.Len() > maxOutput {
			return nil, errTooLarge
		}
	}
	out := b.String()
	return out, ev.charge(len(out))
}

// sizeOf approximates the encoded size of a value, failing on values nested
// beyond the depth cap or larger than the output budget.
func sizeOf(v any, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errTooDeep
	}
	switch t := v.(type) {
	case nil:
		return 4, nil
	case string:
		return len(t) + 2, nil
	case bool:
		return 5, nil
	case object:
		n := 2
		for _, e := range t {
			m, err := sizeOf(e.val, depth+1)
			if err != nil {
				return 0, err
			}
			if n += m + len(e.key) + 4; n > maxOutput {
				return 0, errTooLarge
			}
		}
		return n, nil
	case map[string]any:
		n := 2
		for k, e := range t {
			m, err := sizeOf(e, depth+1)
			if err != nil {
				return 0, err
			}
			if n += m + len(k) + 4; n > maxOutput {
				return 0, errTooLarge
			}
		}
		return n, nil
	case []string:
		n := 2
		for _, s := range t {
			if n += len(s) + 3; n > maxOutput {
				return 0, errTooLarge
			}
		}
		return n, nil
	case []any:
		n := 2
		for _, e := range t {
			m, err := sizeOf(e, depth+1)
			if err != nil {
				return 0, err
			}
			if n += m + 1; n > maxOutput {
				return 0, errTooLarge
			}
		}
		return n, nil
	}
	if n, ok, err := asNumber(v); ok {
		return 24 + len(n.big), err
	}
	return 0, fmt.Errorf("unsupported value of type %T", v)
}
