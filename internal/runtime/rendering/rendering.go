// Package rendering renders program row templates on the host, in the
// sandbox render describes: the template sees only its rows, every loop
// iteration spends one step of a budget, and the text written is capped.
package rendering

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"

	"github.com/plasmd/plasmd/internal/engine/render"
	"github.com/plasmd/plasmd/internal/model/decimal"
)

// Limits on one rendering.
const (
	MaxOutput = 1 << 20 // bytes of rendered text
	MaxSteps  = 100000  // loop iterations, all loops together
)

// Template is a checked, instrumented template. Render is not safe for
// concurrent use of one Template: parse one per rendering.
type Template struct {
	t     *template.Template
	steps *int
}

// Parse checks src (render.Check's rules) and prepares it for rendering.
func Parse(src string) (*Template, error) {
	if err := render.Check(src); err != nil {
		return nil, err
	}
	steps := new(int)
	funcs := template.FuncMap{render.TickName: func() (string, error) {
		*steps++
		if *steps > MaxSteps {
			return "", fmt.Errorf("loops ran more than %d times", MaxSteps)
		}
		return "", nil
	}}
	for name, fn := range comparisonFuncMap {
		funcs[name] = fn
	}
	t, err := template.New("t").Funcs(funcs).Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, render.ParseError(err)
	}
	if err := render.Prepare(t.Tree, src); err != nil {
		return nil, err
	}
	return &Template{t: t, steps: steps}, nil
}

// Render executes t over rows (each a column → value map) and returns the
// text. Integers reach the template as float64s (type integer) or, beyond
// ±2^53, as their digits (bigInt), so that no row value can drive a range
// loop; they print with all their digits and compare exactly (compare.go).
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
		line, msg := render.SplitMessage(err.Error())
		return "", &render.Error{Line: line, Msg: execMessage(msg)}
	}
	return b.String(), nil
}

func safeValue(v any, depth int) any {
	switch x := v.(type) {
	case int64:
		return integerValue(x)
	case int:
		return integerValue(int64(x))
	case json.Number:
		return numberValue(x)
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

// integer is an integer row value as the template sees it: a float64 kind,
// so it compares with lt/gt/eq as before and cannot drive a range loop,
// that prints as its exact decimal digits (a float64 prints 1000000 as
// 1e+06). Only integers a float64 holds exactly are integer values.
type integer float64

func (n integer) String() string { return strconv.FormatInt(int64(n), 10) }

// numberValue is a json.Number cell (the decoder carries an integer beyond
// int64 so, and a sum beyond int64 is one) for the template: an integer as
// integerValue gives it, however written, in the form decimal.Compact
// keeps it (1e4095 stays 1e4095 rather than 4096 digits for every row);
// another number as a float64, or its text when a float64 cannot hold it.
func numberValue(n json.Number) any {
	if d, integral, err := decimal.Compact(string(n)); integral && err == nil {
		if i, err := strconv.ParseInt(d, 10, 64); err == nil {
			return integerValue(i)
		}
		return bigInt(d)
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil {
		return f
	}
	return string(n)
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
