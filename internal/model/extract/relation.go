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

// node is a value reached in the answer, the item (0-based) it is in,
// which an error names, and the node it was reached from at the start of
// the current hop.
type node struct {
	v any
	// int32 keeps a node at three words: a body is at most MaxBodyBytes,
	// so it holds fewer values than that.
	item, src int32
}

// materialize finds the rows of rel in the parent items, hop by hop, a
// step at a time over all nodes at once. A step keeps the nodes' order,
// so the values one parent reaches in a hop stay next to each other,
// which is how a cardinality-one hop tells one value from several. Each
// step moves to distinct children of distinct nodes, so the work is
// bounded by the size of the document.
func materialize(parents []any, rel *Relation) ([]any, error) {
	hops := rel.Hops
	if len(hops) == 0 {
		hops = []Hop{{Name: rel.Name, Steps: len(rel.Path)}}
	}
	cur := make([]node, 0, len(parents))
	for i, p := range parents {
		if p != nil {
			cur = append(cur, node{v: p, item: int32(i)})
		}
	}
	at := 0
	for _, h := range hops {
		for i := range cur {
			cur[i].src = int32(i)
		}
		for i, st := range rel.Path[at : at+h.Steps] {
			next, err := step(cur, st, at+i+1)
			if err != nil {
				return nil, err
			}
			cur = next
		}
		at += h.Steps
		var err error
		if h.One {
			err = oneEach(cur, h, rel.Path[:at])
		} else {
			cur = flatten(cur)
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]any, len(cur))
	for i, n := range cur {
		out[i] = n.v
	}
	return out, nil
}

// step moves every node by st (numbered n in the whole path for error
// messages): a key descends into an object, a wildcard fans out over an
// array. Missing or null values end that branch quietly (the parent has
// no such rows).
func step(cur []node, st catalog.PathStep, n int) ([]node, error) {
	next := make([]node, 0, len(cur))
	for _, c := range cur {
		switch {
		case st.Wildcard:
			l, ok := c.v.([]any)
			if !ok {
				return nil, fmt.Errorf("step %d (wildcard) expected an array, got %s", n, kindOf(c.v))
			}
			for _, e := range l {
				if e != nil {
					next = append(next, node{e, c.item, c.src})
				}
			}
		case st.Key != "":
			obj, ok := c.v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("step %d (key %q) expected an object, got %s", n, st.Key, kindOf(c.v))
			}
			if e, ok := obj[st.Key]; ok && e != nil {
				next = append(next, node{e, c.item, c.src})
			}
		default:
			return nil, fmt.Errorf("step %d is neither a key nor a wildcard", n)
		}
	}
	return next, nil
}

// flatten makes each array a cardinality-many hop reached into its
// elements, the relation's rows.
func flatten(cur []node) []node {
	arrays := false
	for _, c := range cur {
		if _, ok := c.v.([]any); ok {
			arrays = true
			break
		}
	}
	if !arrays {
		return cur
	}
	out := make([]node, 0, len(cur))
	for _, c := range cur {
		if l, ok := c.v.([]any); ok {
			for _, e := range l {
				out = append(out, node{e, c.item, c.src})
			}
		} else {
			out = append(out, c)
		}
	}
	return out
}

// errNotOne marks a cardinality-one relation that reached more than one
// value, so the decode error's hint can say what to change.
var errNotOne = errors.New("not one value")

// hintNotOne is the hint of such an error.
const hintNotOne = "the backend answers a list where the catalog declares one related row: declare the relation cardinality many, or point its path at one object"

// oneEach checks what a cardinality-one hop reached: at most one value
// per parent (a parent with none, its value null or missing, has no
// related row), and that value not an array.
func oneEach(cur []node, h Hop, path []catalog.PathStep) error {
	for i, c := range cur {
		if i > 0 && cur[i-1].src == c.src {
			n := 2
			for j := i + 1; j < len(cur) && cur[j].src == c.src; j++ {
				n++
			}
			return fmt.Errorf("%s is declared cardinality one, but its path %s reaches %d values in item %d of the answer%w",
				h.Name, pathText(path), n, c.item+1, quiet{errNotOne})
		}
		if l, ok := c.v.([]any); ok {
			return fmt.Errorf("%s is declared cardinality one, but item %d of the answer has an array of %d at %s where one object belongs%w",
				h.Name, c.item+1, len(l), pathText(path), quiet{errNotOne})
		}
	}
	return nil
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
