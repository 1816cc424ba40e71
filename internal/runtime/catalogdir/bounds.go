package catalogdir

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// The engine holds every catalog to the bounds of its extraction specs
// (catalog.Check, checklimits.go: names and strings of at most
// catalog.MaxText bytes, wire paths of at most catalog.MaxWirePath steps,
// at most catalog.MaxFields fields an entity, …). Check runs on the wire
// catalog, which has no positions, so the loader checks each bound where
// it reads the value and reports the node that breaks it; Check stays the
// guard on what the engine receives (checkpos.go places what it still
// finds). Only values Check bounds are bounded here, so the loader refuses
// no catalog the engine would take.

// checkBounds is turned off only by tests of that guard, to see what
// Check alone would report.
var checkBounds = true

// stepsWhy says why wire paths are bounded.
const stepsWhy = " (the deepest JSON the decoder reads)"

// The helpers below run on every name and path the loader reads, so they
// build a message's path (o.sub, index) only for a broken bound.

// textBound refuses s, read at n, when it is longer than catalog.MaxText.
func (p *parser) textBound(ctx string, n *yaml.Node, s string) {
	if checkBounds && n != nil && len(s) > catalog.MaxText {
		p.boundf(n, "%s: %d bytes long, over the limit of %d", ctx, len(s), catalog.MaxText)
	}
}

// scalarBound is textBound for the value of key k of o, when it is a
// string.
func (p *parser) scalarBound(o *object, k string) {
	if n := o.val(k); n != nil && n.Kind == yaml.ScalarNode && len(n.Value) > catalog.MaxText {
		p.textBound(o.sub(k), n, n.Value)
	}
}

// nameBound refuses a key of the map at key k of o (a field, relation,
// capability or parameter name; o nil for the top level) longer than
// catalog.MaxText. The message leaves the name out: it would be the
// whole message.
func (p *parser) nameBound(o *object, k, what string, key *yaml.Node) {
	if checkBounds && len(key.Value) > catalog.MaxText {
		ctx := k
		if o != nil {
			ctx = o.sub(k)
		}
		p.boundf(key, "%s: %s name of %d bytes, over the limit of %d", ctx, what, len(key.Value), catalog.MaxText)
	}
}

// wirePathBound refuses a wire path, read at the value n of key k of o,
// of more than catalog.MaxWirePath steps or with a step longer than
// catalog.MaxText (reported at the step when n lists one node per step).
func (p *parser) wirePathBound(o *object, k string, n *yaml.Node, steps []string) {
	if !checkBounds || n == nil {
		return
	}
	if len(steps) > catalog.MaxWirePath {
		p.boundf(n, "%s: %d steps, over the limit of %d%s", o.sub(k), len(steps), catalog.MaxWirePath, stepsWhy)
	}
	perStep := n.Kind == yaml.SequenceNode && len(n.Content) == len(steps)
	for i, s := range steps {
		switch {
		case len(s) <= catalog.MaxText:
		case perStep:
			p.textBound(index(o.sub(k), i), n.Content[i], s)
		default:
			p.textBound(o.sub(k), n, s)
		}
	}
}

// listBound refuses a derive rule's string list (key k of o) of more than
// catalog.MaxRuleStrings strings or with one longer than catalog.MaxText.
func (p *parser) listBound(o *object, k string) {
	n := o.val(k)
	if !checkBounds || n == nil || n.Kind != yaml.SequenceNode {
		return
	}
	if len(n.Content) > catalog.MaxRuleStrings {
		p.boundf(n, "%s: %d strings, over the limit of %d", o.sub(k), len(n.Content), catalog.MaxRuleStrings)
	}
	for i, c := range n.Content {
		if c.Kind == yaml.ScalarNode && len(c.Value) > catalog.MaxText {
			p.textBound(index(o.sub(k), i), c, c.Value)
		}
	}
}

// deriveBounds bounds the strings a derive rule of type t carries into
// the engine (those its type reads; the others are not kept).
func (p *parser) deriveBounds(do *object, t string) {
	var texts []string
	switch t {
	case catalog.DeriveSegmentsAfterPrefix:
		texts = []string{"prefix"}
		p.listBound(do, "alternate_prefixes")
	case catalog.DeriveNameValueLookup:
		texts = []string{"equals", "match_key_field", "value_field"}
	case catalog.DeriveObjectKeyLookup:
		texts = []string{"key"}
	case catalog.DeriveColonPair:
		texts = []string{"blocks_key", "ref_field", "segment"}
		p.listBound(do, "prefer_keys")
	}
	for _, k := range texts {
		p.scalarBound(do, k)
	}
}

// fieldsBound refuses an entity with more than catalog.MaxFields fields,
// counting the id field id_from adds, at its fields: key.
func (p *parser) fieldsBound(o *object, key *yaml.Node, e *catalog.Entity) {
	if !checkBounds || len(e.Fields) <= catalog.MaxFields {
		return
	}
	at, fn := o.key("fields"), o.val("fields")
	if at == nil {
		at = key
	}
	added := ""
	if e.IDFrom != nil && (fn == nil || !hasKey(fn, e.IDField)) {
		added = " (counting " + e.IDField + ", which id_from adds)"
	}
	p.boundf(at, "%s: %d fields%s, over the limit of %d", o.sub("fields"), len(e.Fields), added, catalog.MaxFields)
}

// envBound bounds the name of the auth secret (the engine's catalog
// carries it as Auth.Env): env, or hosted_kv in its place.
func (p *parser) envBound(o *object) {
	for _, k := range []string{"env", "hosted_kv"} {
		if o.has(k) {
			p.scalarBound(o, k)
			return
		}
	}
}

// preprocessBounds bounds a response_preprocess rule's path and strings.
func (p *parser) preprocessBounds(o *object, pp *catalog.Preprocess) {
	p.wirePathBound(o, "path", o.val("path"), pp.Path)
	for _, k := range preprocessKeys[pp.Kind] {
		if k != "kind" && k != "path" {
			p.scalarBound(o, k)
		}
	}
}

// paramsBound refuses pagination with more than catalog.MaxPageParams
// parameters, at its params: key.
func (p *parser) paramsBound(o *object, pg *catalog.Pagination) {
	if checkBounds && len(pg.Params) > catalog.MaxPageParams {
		p.boundf(o.key("params"), "%s: %d parameters, over the limit of %d", o.sub("params"), len(pg.Params), catalog.MaxPageParams)
	}
}

// heldBound is a bound problem of a mapping, reported once the mapping is
// known to be kept.
type heldBound struct {
	n   *yaml.Node
	msg string
}

// boundf reports a broken bound, or holds it while a mapping is read.
func (p *parser) boundf(n *yaml.Node, format string, args ...any) {
	if p.holding {
		// Held problems are capped like reported ones (maxErrors): a
		// hostile list of aliases breaks one bound per step.
		if len(p.held) < maxErrors {
			p.held = append(p.held, heldBound{n, fmt.Sprintf(format, args...)})
		}
		return
	}
	p.errorf(n, format, args...)
}

// holdBounds starts holding bound problems: a mapping for no capability is
// dropped (with a warning), and Check never sees what it holds.
func (p *parser) holdBounds() { p.holding, p.held = true, nil }

// releaseBounds stops holding and reports what was held, once every file
// is read, if mapping m of name is still in the catalog.
func (l *loader) releaseBounds(p *parser, name string, m *catalog.Mapping) {
	held := p.held
	p.holding, p.held = false, nil
	if len(held) == 0 {
		return
	}
	l.later(func() {
		if l.cat.Mappings[name] != m {
			return
		}
		for _, h := range held {
			p.errorf(h.n, "%s", h.msg)
		}
	})
}
