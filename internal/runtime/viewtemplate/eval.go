package viewtemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

type renderer struct {
	t    *Template
	vars map[string]any
	out  strings.Builder
}

func (r *renderer) errAt(pos int, format string, args ...any) error {
	l, c := lineCol(r.t.src, pos)
	return &Error{Line: l, Column: c, Msg: fmt.Sprintf(format, args...)}
}

// tooLong refuses a string result of n bytes before it is built: every
// string a template makes is bounded by MaxOutput, so no operation can
// allocate more than a small multiple of it (`a.replace('x', a)` would
// otherwise square the text).
func (r *renderer) tooLong(pos int, n int64) error {
	if n > MaxOutput {
		return r.errAt(pos, "text longer than %d bytes", MaxOutput)
	}
	return nil
}

// undefinedAt is the error for reading a name or key that is not there,
// which the default filter turns into its fallback.
func (r *renderer) undefinedAt(pos int, format string, args ...any) error {
	err := r.errAt(pos, format, args...)
	err.(*Error).undefined = true
	return err
}

// queryEscapedLen is len(url.QueryEscape(s)), computed without building it.
func queryEscapedLen(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~', c == ' ':
		default:
			n += 2 // %XX
		}
	}
	return n
}

func (r *renderer) write(s string) error {
	if r.out.Len()+len(s) > MaxOutput {
		return &Error{Line: 1, Column: 1, Msg: fmt.Sprintf("rendered text longer than %d bytes", MaxOutput)}
	}
	r.out.WriteString(s)
	return nil
}

func (r *renderer) nodes(ns []node) error {
	for _, n := range ns {
		switch x := n.(type) {
		case *textNode:
			if err := r.write(x.text); err != nil {
				return err
			}
		case *outNode:
			v, err := r.eval(x.e)
			if err != nil {
				return err
			}
			if err := r.write(Text(v)); err != nil {
				return err
			}
		case *setNode:
			v, err := r.eval(x.e)
			if err != nil {
				return err
			}
			r.vars[x.name] = v
		case *ifNode:
			for _, b := range x.branches {
				ok := true
				if b.cond != nil {
					v, err := r.eval(b.cond)
					if err != nil {
						return err
					}
					ok = truthy(v)
				}
				if ok {
					if err := r.nodes(b.body); err != nil {
						return err
					}
					break
				}
			}
		}
	}
	return nil
}

func (r *renderer) eval(e expr) (any, error) {
	switch x := e.(type) {
	case *litExpr:
		return x.v, nil
	case *listExpr:
		out := make([]any, 0, len(x.items))
		for _, it := range x.items {
			v, err := r.eval(it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *nameExpr:
		v, ok := r.vars[x.name]
		if !ok {
			return nil, r.undefinedAt(x.pos, "%s is undefined", x.name)
		}
		return v, nil
	case *attrExpr:
		o, err := r.eval(x.obj)
		if err != nil {
			return nil, err
		}
		m, ok := o.(map[string]any)
		if !ok {
			return nil, r.errAt(x.pos, "cannot read .%s of %s", x.name, kind(o))
		}
		v, ok := m[x.name]
		if !ok {
			return nil, r.undefinedAt(x.pos, ".%s is undefined", x.name)
		}
		return v, nil
	case *indexExpr:
		return r.index(x)
	case *notExpr:
		v, err := r.eval(x.e)
		return !truthy(v), err
	case *binExpr:
		return r.binary(x)
	case *callExpr:
		return r.call(x)
	case *filterExpr:
		v, err := r.eval(x.arg)
		var te *Error
		if err != nil && (x.name == "default" || x.name == "d") && errors.As(err, &te) && te.undefined {
			// As in Jinja, default is the one way to read an undefined
			// name under strict undefined.
			v, err = undefined{}, nil
		}
		if err != nil {
			return nil, err
		}
		args := make([]any, len(x.args))
		for i, a := range x.args {
			if args[i], err = r.eval(a); err != nil {
				return nil, err
			}
		}
		f, ok := filters[x.name]
		if !ok {
			return nil, r.errAt(x.pos, "unknown filter %q", x.name)
		}
		if s, ok := v.(string); ok && x.name == "urlencode" {
			if err := r.tooLong(x.pos, queryEscapedLen(s)); err != nil {
				return nil, err
			}
		}
		out, ferr := f(v, args)
		if ferr != nil {
			return nil, r.errAt(x.pos, "%s: %v", x.name, ferr)
		}
		if s, ok := out.(string); ok {
			// The other filters grow text by a small factor at most
			// (json escapes, case mapping): bound what they return.
			if err := r.tooLong(x.pos, int64(len(s))); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrTemplate, e)
}

func (r *renderer) index(x *indexExpr) (any, error) {
	o, err := r.eval(x.obj)
	if err != nil {
		return nil, err
	}
	i, err := r.eval(x.idx)
	if err != nil {
		return nil, err
	}
	switch c := o.(type) {
	case []any:
		n, ok := toInt(i)
		if ok && n < 0 {
			n += int64(len(c))
		}
		if !ok || n < 0 || n >= int64(len(c)) {
			return nil, r.errAt(x.pos, "index %v out of range (%d items)", i, len(c))
		}
		return c[n], nil
	case map[string]any:
		v, ok := c[Text(i)]
		if !ok {
			return nil, r.undefinedAt(x.pos, "[%q] is undefined", Text(i))
		}
		return v, nil
	}
	return nil, r.errAt(x.pos, "cannot index %s", kind(o))
}

func (r *renderer) binary(x *binExpr) (any, error) {
	l, err := r.eval(x.l)
	if err != nil {
		return nil, err
	}
	switch x.op { // short-circuit, returning the deciding operand as Jinja does
	case "and":
		if !truthy(l) {
			return l, nil
		}
		return r.eval(x.r)
	case "or":
		if truthy(l) {
			return l, nil
		}
		return r.eval(x.r)
	}
	rv, err := r.eval(x.r)
	if err != nil {
		return nil, err
	}
	switch x.op {
	case "~":
		ls, rs := Text(l), Text(rv)
		if err := r.tooLong(x.pos, int64(len(ls))+int64(len(rs))); err != nil {
			return nil, err
		}
		return ls + rs, nil
	case "==":
		return equal(l, rv), nil
	case "!=":
		return !equal(l, rv), nil
	case "in", "not in":
		in := contains(rv, l)
		return in == (x.op == "in"), nil
	case "<", ">", "<=", ">=":
		c, ok := compare(l, rv)
		if !ok {
			return nil, r.errAt(x.pos, "cannot compare %s with %s", kind(l), kind(rv))
		}
		return map[string]bool{"<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[x.op], nil
	case "+", "-":
		a, aok := toFloat(l)
		b, bok := toFloat(rv)
		if !aok || !bok {
			if x.op == "+" {
				if ls, ok := l.(string); ok {
					if rs, ok := rv.(string); ok {
						if err := r.tooLong(x.pos, int64(len(ls))+int64(len(rs))); err != nil {
							return nil, err
						}
						return ls + rs, nil
					}
				}
			}
			return nil, r.errAt(x.pos, "cannot apply %s to %s and %s", x.op, kind(l), kind(rv))
		}
		if x.op == "-" {
			b = -b
		}
		return number(a + b), nil
	}
	return nil, r.errAt(x.pos, "unknown operator %s", x.op)
}

// call runs one of the string methods Plasm's templates use.
func (r *renderer) call(x *callExpr) (any, error) {
	o, err := r.eval(x.obj)
	if err != nil {
		return nil, err
	}
	args := make([]any, len(x.args))
	for i, a := range x.args {
		if args[i], err = r.eval(a); err != nil {
			return nil, err
		}
	}
	s, ok := o.(string)
	if !ok {
		return nil, r.errAt(x.pos, "cannot call .%s() on %s", x.method, kind(o))
	}
	arg := func(i int) string {
		if i < len(args) {
			return Text(args[i])
		}
		return ""
	}
	switch x.method {
	case "split":
		if len(args) == 0 {
			return toList(strings.Fields(s)), nil
		}
		if arg(0) == "" {
			return nil, r.errAt(x.pos, "split: separator must not be empty")
		}
		return toList(strings.Split(s, arg(0))), nil
	case "strip":
		return strings.TrimSpace(s), nil
	case "lower":
		return strings.ToLower(s), nil
	case "upper":
		return strings.ToUpper(s), nil
	case "startswith":
		return strings.HasPrefix(s, arg(0)), nil
	case "endswith":
		return strings.HasSuffix(s, arg(0)), nil
	case "replace":
		old, repl := arg(0), arg(1)
		n := int64(strings.Count(s, old)) // for old == "": runes + 1, as ReplaceAll inserts
		if err := r.tooLong(x.pos, int64(len(s))+n*(int64(len(repl))-int64(len(old)))); err != nil {
			return nil, err
		}
		return strings.ReplaceAll(s, old, repl), nil
	}
	return nil, r.errAt(x.pos, "unknown method .%s()", x.method)
}

// filters are Plasm's view template filters plus a few of Jinja's own.
var filters = map[string]func(v any, args []any) (any, error){
	"urlencode":            func(v any, _ []any) (any, error) { return url.QueryEscape(Text(v)), nil },
	"strip_trailing_slash": func(v any, _ []any) (any, error) { return strings.TrimRight(Text(v), "/"), nil },
	"json_encode":          jsonEncode,
	"tojson":               jsonEncode,
	"lower":                func(v any, _ []any) (any, error) { return strings.ToLower(Text(v)), nil },
	"upper":                func(v any, _ []any) (any, error) { return strings.ToUpper(Text(v)), nil },
	"trim":                 func(v any, _ []any) (any, error) { return strings.TrimSpace(Text(v)), nil },
	"string":               func(v any, _ []any) (any, error) { return Text(v), nil },
	"length": func(v any, _ []any) (any, error) {
		switch c := v.(type) {
		case []any:
			return int64(len(c)), nil
		case map[string]any:
			return int64(len(c)), nil
		}
		return int64(utf8.RuneCountInString(Text(v))), nil
	},
	"default": defaultFilter,
	"d":       defaultFilter,
	"split": func(v any, args []any) (any, error) {
		if len(args) != 1 || Text(args[0]) == "" {
			return nil, fmt.Errorf("needs one non-empty separator")
		}
		return toList(strings.Split(Text(v), Text(args[0]))), nil
	},
	"split_part": func(v any, args []any) (any, error) {
		if len(args) != 2 || Text(args[0]) == "" {
			return nil, fmt.Errorf("needs a non-empty separator and an index")
		}
		n, _ := toInt(args[1])
		parts := strings.Split(Text(v), Text(args[0]))
		if n < 0 || n >= int64(len(parts)) {
			return "", nil
		}
		return parts[n], nil
	},
	"wire_time":         wireTime,
	"wire_query_suffix": wireQuerySuffix,
}

// defaultFilter gives its argument (or "") for an undefined or none value.
func defaultFilter(v any, args []any) (any, error) {
	_, undef := v.(undefined)
	if v == nil || undef {
		if len(args) > 0 {
			return args[0], nil
		}
		if undef {
			return "", nil
		}
	}
	return v, nil
}

func jsonEncode(v any, _ []any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// wireTime writes a time for the wire in format (unix_ms, unix, rfc3339):
// an RFC 3339 or unix time converts; anything else (Plasm's relative
// `now-1h`) passes through unchanged.
func wireTime(v any, args []any) (any, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("needs a format (unix_ms, unix or rfc3339)")
	}
	format := Text(args[0])
	switch format {
	case "unix_ms", "unix", "unix_s", "rfc3339", "iso8601":
	default:
		return nil, fmt.Errorf("unknown format %q (unix_ms, unix or rfc3339)", format)
	}
	var t time.Time
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		p, err := time.Parse(time.RFC3339, x)
		if err != nil {
			return x, nil
		}
		t = p
	default:
		f, ok := toFloat(x)
		if !ok {
			return Text(v), nil
		}
		sec := int64(f)
		if math.Abs(f) > 1e11 { // milliseconds
			t = time.UnixMilli(int64(f))
		} else {
			t = time.Unix(sec, 0)
		}
	}
	switch format {
	case "unix_ms":
		return strconv.FormatInt(t.UnixMilli(), 10), nil
	case "unix", "unix_s":
		return strconv.FormatInt(t.Unix(), 10), nil
	}
	return t.UTC().Format(time.RFC3339), nil
}

// wireQuerySuffix turns a JSON object's text into "&k=v&…" (keys sorted,
// nulls left out), or "" for empty input.
func wireQuerySuffix(v any, _ []any) (any, error) {
	s := strings.TrimSpace(Text(v))
	if s == "" || s == "null" {
		return "", nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("expected a JSON object: %v", err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if m[k] == nil {
			continue
		}
		val := Text(m[k])
		if _, isStr := m[k].(string); !isStr {
			j, _ := json.Marshal(m[k])
			val = string(j)
		}
		b.WriteString("&" + url.QueryEscape(k) + "=" + url.QueryEscape(val))
	}
	return b.String(), nil
}
