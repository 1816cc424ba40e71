package decode

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// decodeTape is decode's second half for a tape body. It reads the tape
// through tape.View so that only the fields the entity declares become Go
// values; building the whole document first dominated guest decode time
// (map hashing and string allocation for members no column reads). Its
// results and errors are those of the JSON path, which the tests check.
func (d *decoder) decodeTape(out *abi.DecodeResponse, ent *catalog.Entity, cols []string, rel *catalog.Relation, body []byte) (*abi.DecodeResponse, *abi.Error) {
	root, err := tape.Root(body)
	if err != nil {
		return nil, d.fail("", "%v", err)
	}
	if d.m.Transport == cml.TransportGraphQL {
		if ev, ok := root.Get("errors"); ok {
			errs, _ := ev.Value()
			if msg, ok := graphQLError(map[string]any{"errors": errs}); ok {
				return nil, d.fail("", "graphql error: %s", msg)
			}
		}
	}
	items, err := selectViews(root, d.m.Response)
	if err != nil {
		return nil, d.fail("check the mapping's response shape", "%v", err)
	}
	if rel != nil {
		// Embedded relation rows are rare and small: build the parents and
		// share the JSON path's materialisation.
		parents := make([]any, len(items))
		for i, it := range items {
			if parents[i], err = it.Value(); err != nil {
				return nil, d.fail("", "%v", err)
			}
		}
		rows, err := materialize(parents, rel.Materialize.Path)
		if err != nil {
			return nil, d.fail("check the relation's materialize path", "relation %s: %v", rel.Name, err)
		}
		for i, it := range rows {
			if it == nil {
				continue
			}
			obj, ok := it.(map[string]any)
			if !ok {
				return nil, d.fail("check the mapping's response shape", "row %d is %s, not an object", i, kindOf(it))
			}
			out.Table.Rows = append(out.Table.Rows, d.row(ent, cols, obj))
		}
		return out, nil
	}
	rp := d.rowPlan(ent, cols)
	for i, it := range items {
		switch it.Kind() {
		case tape.KindNull:
			continue
		case tape.KindObject:
		default:
			if v, err := it.Value(); err == nil {
				if obj, ok := scalarRow(ent, v); ok {
					out.Table.Rows = append(out.Table.Rows, d.row(ent, cols, obj))
					continue
				}
			}
			return nil, d.fail("check the mapping's response shape", "row %d is %s, not an object", i, viewKind(it))
		}
		row, err := rp.row(it, i+1)
		if err != nil {
			return nil, d.fail("", "%v", err)
		}
		out.Table.Rows = append(out.Table.Rows, row)
	}
	if d.m.Pagination != nil {
		get := func(path []string) (any, bool) {
			v, ok := walkView(root, path)
			if !ok {
				return nil, false
			}
			x, _ := v.Value() // the tape was validated by tape.Root
			return x, true
		}
		next, aerr := d.next(get, len(items))
		if aerr != nil {
			return nil, aerr
		}
		out.Next = next
	}
	return out, nil
}

// rowPlan resolves, once per response, which member of a row object feeds
// which column, so a row costs one pass over its members plus one map
// probe per member.
type rowPlan struct {
	cols  []colPlan
	first map[string]int // first wire-path segment -> slot
	vals  []tape.View    // per slot: the member's value in the current row
	seen  []int          // per slot: the row stamp that set vals
}

type colPlan struct {
	slot int // -1: the path is empty and the column is the whole object
	rest []string
	typ  string
}

func (d *decoder) rowPlan(ent *catalog.Entity, cols []string) *rowPlan {
	rp := &rowPlan{cols: make([]colPlan, len(cols)), first: make(map[string]int, len(cols))}
	for i, name := range cols {
		f := ent.Fields[name]
		path := []string{name}
		typ := ""
		if f != nil {
			path = f.WirePath()
			if val := d.cat.Values[f.ValueRef]; val != nil {
				typ = val.Type
			}
		}
		c := colPlan{slot: -1, typ: typ}
		if len(path) > 0 {
			s, ok := rp.first[path[0]]
			if !ok {
				s = len(rp.first)
				rp.first[path[0]] = s
			}
			c.slot, c.rest = s, path[1:]
		}
		rp.cols[i] = c
	}
	rp.vals = make([]tape.View, len(rp.first))
	rp.seen = make([]int, len(rp.first))
	return rp
}

// row builds one row from an object view; stamp must differ between rows
// of one response and be non-zero.
func (rp *rowPlan) row(obj tape.View, stamp int) ([]any, error) {
	it := obj.Members()
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		// Later duplicates overwrite earlier ones: last wins, as in JSON.
		if s, ok := rp.first[string(k)]; ok {
			rp.vals[s], rp.seen[s] = v, stamp
		}
	}
	row := make([]any, len(rp.cols))
	for i := range rp.cols {
		c := &rp.cols[i]
		v := obj
		if c.slot >= 0 {
			if rp.seen[c.slot] != stamp {
				continue
			}
			v = rp.vals[c.slot]
			ok := true
			for _, k := range c.rest {
				if v, ok = v.Get(k); !ok {
					break
				}
			}
			if !ok {
				continue
			}
		}
		if v.Kind() == tape.KindNull {
			continue
		}
		x, err := v.Value()
		if err != nil {
			return nil, err
		}
		switch c.typ {
		case "integer":
			row[i] = asInteger(x)
		case "number":
			row[i] = asFloat(x)
		default:
			row[i] = plain(x)
		}
	}
	return row, nil
}

// selectViews is selectItems over a view; see there for the rules.
func selectViews(doc tape.View, r *catalog.Response) ([]tape.View, error) {
	if r == nil {
		return eitherView(doc, "the response")
	}
	node := doc
	for i, k := range r.ItemsPath {
		switch node.Kind() {
		case tape.KindNull:
			return nil, nil
		case tape.KindObject:
		default:
			return nil, fmt.Errorf("expected an object at %s, got %s", where(r.ItemsPath[:i]), viewKind(node))
		}
		node, _ = node.Get(k)
	}
	at := where(r.ItemsPath)
	var items []tape.View
	switch {
	case r.Single:
		switch node.Kind() {
		case tape.KindNull:
		case tape.KindObject:
			items = []tape.View{node}
		default:
			return nil, fmt.Errorf("expected one object at %s, got %s", at, viewKind(node))
		}
	case r.Items || len(r.ItemsPath) > 0:
		switch node.Kind() {
		case tape.KindNull:
		case tape.KindArray:
			items = node.Items(nil)
		default:
			return nil, fmt.Errorf("expected an array at %s, got %s", at, viewKind(node))
		}
	default:
		var err error
		if items, err = eitherView(node, at); err != nil {
			return nil, err
		}
	}
	if r.ItemInnerKey == "" {
		return items, nil
	}
	inner := make([]tape.View, 0, len(items))
	for i, it := range items {
		switch it.Kind() {
		case tape.KindNull:
		case tape.KindObject:
			v, _ := it.Get(r.ItemInnerKey)
			inner = append(inner, v)
		default:
			return nil, fmt.Errorf("item %d at %s is %s, expected an object holding %q", i, at, viewKind(it), r.ItemInnerKey)
		}
	}
	return inner, nil
}

func eitherView(node tape.View, at string) ([]tape.View, error) {
	switch node.Kind() {
	case tape.KindNull:
		return nil, nil
	case tape.KindArray:
		return node.Items(nil), nil
	case tape.KindObject:
		return []tape.View{node}, nil
	}
	return nil, fmt.Errorf("expected an object or an array at %s, got %s", at, viewKind(node))
}

// walkView is walk over a view.
func walkView(v tape.View, path []string) (tape.View, bool) {
	for _, k := range path {
		var ok bool
		if v, ok = v.Get(k); !ok {
			return tape.View{}, false
		}
	}
	return v, true
}

func viewKind(v tape.View) string {
	switch v.Kind() {
	case tape.KindNull:
		return "null"
	case tape.KindString:
		return "a string"
	case tape.KindBool:
		return "a boolean"
	case tape.KindNumber:
		return "a number"
	case tape.KindObject:
		return "an object"
	case tape.KindArray:
		return "an array"
	}
	return "malformed"
}
