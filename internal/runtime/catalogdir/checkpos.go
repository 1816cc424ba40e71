package catalogdir

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// The loader runs catalog.Check on every catalog it builds, as the engine
// does when an instance loads one. The loader's own checks (bounds.go and
// the rest) should leave Check nothing to find; when it still finds
// something (an invariant added to Check and not yet mirrored here), the
// problem is placed at the declaration of the element it names, found
// again in the parsed documents, so that even then the user gets a
// file:line:column. This runs only on that failure: loading a good
// catalog keeps no positions for it.

// doc is one parsed document of a catalog.
type doc struct {
	p    *parser
	root *yaml.Node
	ctx  string // prefix of the paths in it ("mappings" for a combined file's mappings)
}

// placeCheckError records err, a catalog.Check failure, as a problem at
// the declaration of the element it names.
func (l *loader) placeCheckError(err error) {
	d := l.domainDoc
	if d.p == nil { // not reached: Check runs only on parsed catalogs
		l.errs = append(l.errs, &Error{File: l.entryID, Msg: err.Error()})
		return
	}
	var ce *catalog.CheckError
	if !errors.As(err, &ce) {
		d.p.errorf(d.root, "%v", err)
		return
	}
	if p, n, ctx := l.locate(ce.Where); n != nil {
		p.errorf(n, "%s: %s", ctx, ce.Problem)
		return
	}
	d.p.errorf(d.root, "%s: %s", ce.Where, ce.Problem)
}

// locate finds the node that declares the element a CheckError's Where
// names ("entity Issue, field title", "mapping issue_get", "catalog"),
// and its path for the message; a nil node when there is none.
func (l *loader) locate(where string) (*parser, *yaml.Node, string) {
	d := l.domainDoc
	switch where {
	case "catalog":
		return d.p, d.root, "top level"
	case "capability": // a problem with a capability's name, which it leaves out
		k, _ := lookup(d.root, "capabilities")
		return d.p, k, "capabilities"
	}
	sections := []struct {
		prefix, key string
		d           doc
	}{
		{"value ", "values", d},
		{"entity ", "entities", d},
		{"capability ", "capabilities", d},
		{"view ", "views", d},
		{"mapping ", "", l.mappingsDoc},
	}
	for _, s := range sections {
		rest, ok := strings.CutPrefix(where, s.prefix)
		if !ok || s.d.p == nil {
			continue
		}
		sec, ctx := s.d.root, s.d.ctx
		if s.key != "" {
			_, sec = lookup(sec, s.key)
			ctx = join(ctx, s.key)
		}
		k, v, sub := member(sec, rest)
		if k == nil {
			return nil, nil, ""
		}
		ctx = join(ctx, shortName(k.Value))
		var n *yaml.Node
		switch {
		case sub == "":
		case s.prefix == "entity ":
			n, ctx = entityPart(v, sub, ctx)
		case s.prefix == "view ":
			n, ctx = viewPart(v, sub, ctx)
		}
		if n == nil {
			n = k
		}
		return s.d.p, n, ctx
	}
	return nil, nil, ""
}

// entityPart finds a field or relation of an entity (sub is "field x" or
// "relation y"); an id field the entity does not declare is the one its
// id_from adds.
func entityPart(ent *yaml.Node, sub, ctx string) (*yaml.Node, string) {
	for _, part := range []struct{ prefix, key string }{{"field ", "fields"}, {"relation ", "relations"}} {
		name, ok := strings.CutPrefix(sub, part.prefix)
		if !ok {
			continue
		}
		_, sec := lookup(ent, part.key)
		if k, _ := lookup(sec, name); k != nil {
			return k, ctx + "." + part.key + "." + shortName(name)
		}
		if k, _ := lookup(ent, "id_from"); k != nil && part.key == "fields" {
			return k, ctx + ".id_from"
		}
	}
	return nil, ctx
}

// viewPart finds a node, relation output or output of a view (sub is
// "node a", "relation r" or "output f").
func viewPart(view *yaml.Node, sub, ctx string) (*yaml.Node, string) {
	parts := []struct{ prefix, key, id string }{{"node ", "nodes", "id"}, {"relation ", "relation_outputs", "relation"}, {"output ", "output", ""}}
	for _, part := range parts {
		name, ok := strings.CutPrefix(sub, part.prefix)
		if !ok {
			continue
		}
		_, sec := lookup(view, part.key)
		if k, _ := lookup(sec, name); k != nil {
			return k, ctx + "." + part.key + "." + shortName(name)
		}
		// The list form: [{id: a, …}], [{relation: r, …}].
		if sec != nil && sec.Kind == yaml.SequenceNode && part.id != "" {
			for i, c := range sec.Content {
				if _, v := lookup(c, part.id); v != nil && v.Value == name {
					return v, index(ctx+"."+part.key, i) + "." + part.id
				}
			}
		}
	}
	return nil, ctx
}

// lookup returns the key and value nodes of key k of mapping n, the last
// when it is written twice (the one the loader reads); nil when n is not
// a mapping or lacks k.
func lookup(n *yaml.Node, k string) (key, val *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == k {
			key, val = n.Content[i], n.Content[i+1]
		}
	}
	return key, val
}

// member finds the key of mapping n that rest names: rest is the key, or
// the key, ", " and a part of the element. Of keys that fit, the longest
// wins, so a name that itself holds ", " is still found.
func member(n *yaml.Node, rest string) (key, val *yaml.Node, sub string) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil, ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || (key != nil && len(k.Value) < len(key.Value)) {
			continue
		}
		switch {
		case rest == k.Value:
			key, val, sub = k, n.Content[i+1], ""
		case strings.HasPrefix(rest, k.Value+", "):
			key, val, sub = k, n.Content[i+1], rest[len(k.Value)+2:]
		}
	}
	return key, val, sub
}

// shortName keeps a path readable when a name in it is huge (a name over
// a bound is the very problem being reported).
func shortName(s string) string {
	const keep = 64
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
