package extract

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Embedded relation rows. A relation read from inside its parent's answer
// (from_parent_get, or a declared cardinality-one reference embedded
// under the relation's name) is a path into each parent item; a chain
// "summary.detail" joins the paths of its relations. Each relation's
// cardinality decides what its path may reach in one parent, as Plasm
// decodes it (crates/plasm-compile decoder: a relation whose path is
// missing or null is unspecified and yields no reference; a one-relation's
// value must be an object or a scalar id, never an array):
//
//   - cardinality one: null or a missing key is "no related row" for that
//     parent, the answer a hop gives for a parent whose key is null; an
//     object (or a scalar id) is one row; an array, or a path that reaches
//     several values, is a decode error naming the relation and the path,
//     never several rows of a relation declared to have one.
//   - cardinality many: every value reached is a row, and an array reached
//     at the end of the relation's path is its rows.

// Hop is one relation of an embedded chain: its name, how many steps of
// Relation.Path are its own, and whether it is declared cardinality one.
type Hop struct {
	Name  string `json:"name"`
	Steps int    `json:"steps"`
	One   bool   `json:"one,omitempty"`
}

// hops checks that r's hops cover its path exactly.
func (v *validator) hops(r *Relation) {
	if len(r.Hops) == 0 {
		return
	}
	if len(r.Hops) > MaxPath {
		v.fail("relation of %d hops, limit %d", len(r.Hops), MaxPath)
		return
	}
	n := 0
	for _, h := range r.Hops {
		v.text("relation hop", h.Name)
		if h.Steps < 0 || h.Steps > MaxPath {
			v.fail("relation hop %q of %d steps", h.Name, h.Steps)
			return
		}
		n += h.Steps
	}
	if n != len(r.Path) {
		v.fail("relation hops cover %d path steps, the path has %d", n, len(r.Path))
	}
}

// node is a value reached in the answer and the item (0-based) it is in,
// which an error names.
type node struct {
	v    any
	item int
}

// materialize finds the rows of rel in the parent items, hop by hop.
// Each step moves to distinct children of distinct nodes, so the work is
// bounded by the size of the document.
func materialize(parents []any, rel *Relation) ([]any, error) {
	hops := rel.Hops
	if len(hops) == 0 {
		hops = []Hop{{Name: rel.Name, Steps: len(rel.Path)}}
	}
	cur := make([]node, 0, len(parents))
	for i, p := range parents {
		cur = append(cur, node{p, i})
	}
	at := 0
	for _, h := range hops {
		steps := rel.Path[at : at+h.Steps]
		var next []node
		for _, p := range cur {
			got, err := walkSteps(p.v, steps, at)
			if err != nil {
				return nil, err
			}
			if h.One {
				one, err := oneValue(got, h, rel.Path[:at+h.Steps], p.item)
				if err != nil {
					return nil, err
				}
				if one != nil {
					next = append(next, node{one, p.item})
				}
				continue
			}
			for _, g := range got {
				if l, ok := g.([]any); ok {
					for _, e := range l {
						next = append(next, node{e, p.item})
					}
				} else {
					next = append(next, node{g, p.item})
				}
			}
		}
		cur = next
		at += h.Steps
	}
	out := make([]any, len(cur))
	for i, n := range cur {
		out[i] = n.v
	}
	return out, nil
}

// errNotOne marks a cardinality-one relation that reached more than one
// value, so the decode error's hint can say what to change.
var errNotOne = errors.New("not one value")

// hintNotOne is the hint of such an error.
const hintNotOne = "the backend answers a list where the catalog declares one related row: declare the relation cardinality many, or point its path at one object"

// oneValue is the row a cardinality-one relation reaches in one parent:
// nil when its value is null or missing (no related row), else the one
// value, which must not be an array.
func oneValue(got []any, h Hop, path []catalog.PathStep, item int) (any, error) {
	switch {
	case len(got) == 0:
		return nil, nil
	case len(got) > 1:
		return nil, fmt.Errorf("%s is declared cardinality one, but its path %s reaches %d values in item %d of the answer%w",
			h.Name, pathText(path), len(got), item+1, quiet{errNotOne})
	}
	if l, ok := got[0].([]any); ok {
		return nil, fmt.Errorf("%s is declared cardinality one, but item %d of the answer has an array of %d at %s where one object belongs%w",
			h.Name, item+1, len(l), pathText(path), quiet{errNotOne})
	}
	return got[0], nil
}

// walkSteps follows steps from v: key steps descend into objects,
// wildcard steps fan out over arrays. Missing or null values end that
// branch quietly (the parent has no such rows). at numbers the steps in
// the whole path for error messages.
func walkSteps(v any, steps []catalog.PathStep, at int) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	cur := []any{v}
	for i, st := range steps {
		var next []any
		for _, v := range cur {
			switch {
			case st.Wildcard:
				l, ok := v.([]any)
				if !ok {
					return nil, fmt.Errorf("step %d (wildcard) expected an array, got %s", at+i+1, kindOf(v))
				}
				for _, e := range l {
					if e != nil {
						next = append(next, e)
					}
				}
			case st.Key != "":
				obj, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("step %d (key %q) expected an object, got %s", at+i+1, st.Key, kindOf(v))
				}
				if e, ok := obj[st.Key]; ok && e != nil {
					next = append(next, e)
				}
			default:
				return nil, fmt.Errorf("step %d is neither a key nor a wildcard", at+i+1)
			}
		}
		cur = next
	}
	return cur, nil
}

// pathText writes a path as a catalog author reads it: keys joined by
// dots, a wildcard as *.
func pathText(path []catalog.PathStep) string {
	if len(path) == 0 {
		return "the item itself"
	}
	parts := make([]string, len(path))
	for i, st := range path {
		parts[i] = st.Key
		if st.Wildcard {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, ".")
}

// quiet wraps a sentinel that adds nothing to the message.
type quiet struct{ error }

func (quiet) Error() string   { return "" }
func (q quiet) Unwrap() error { return q.error }
