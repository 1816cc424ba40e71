package lang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

type pendKind uint8

const (
	pendNone pendKind = iota
	pendAll           // bare Entity: a query-all, or the receiver of create
	pendGet           // Entity(id): a get, or the receiver row of a method
)

// cur is the value of a chain so far. Reads of a bare entity or of one row
// stay pending until the next step is known, because `Issue.create(…)` and
// `Issue("i1").close()` must not fetch anything first.
type cur struct {
	node int
	ent  ent
	many bool
	// own is true when this chain created node, so postfix transforms may be
	// appended to it; a label's node is shared and gets a transform node.
	own  bool
	pend pendKind
	get  *source
	// proj is the projection in force on node's rows, nil when none.
	proj []string
	// have are the fields node's rows are known to carry, nil when every
	// field is (see hydrate).
	have []string
	at   pos
	// cols, on rows a compute produced (ent is empty then), are their
	// columns.
	cols []string
}

// set makes c the chain value of node, field by field. In the Wasm guest a
// cur is too large to move in registers: a composite literal is zeroed in
// a temporary with memory.fill (which wazero runs as a loop of memmove
// calls) and then copied with memory.copy, and a cur returned by value
// costs both again in every caller. The planner's chain steps therefore
// update one cur in place through a pointer and write its fields one by
// one, each small enough to be plain stores.
func (c *cur) set(node int, x ent, many, own bool, have []string) {
	c.node, c.ent, c.many, c.own, c.pend, c.get = node, x, many, own, pendNone, nil
	c.proj, c.have, c.at, c.cols = nil, have, pos{}, nil
}

type bound struct {
	p pos
	c cur
}

type planner struct {
	req        *abi.PlanRequest
	src        string
	entries    []*catalog.Catalog
	nodes      []plan.Node
	pa         *planArena
	gets       []entGet // see getCap
	labels     *table[*bound]
	boundLater *table[pos]
	// guards are the non-null guard nodes already planned, by (node, field).
	guards map[guardKey]int
	// row is the input of the effect being planned (label => …), whose
	// current row `_.field` reads; ranEachRow records that a method ran
	// once per row of it.
	row        *cur
	ranEachRow bool
}

type guardKey struct {
	node  int
	field string
}

func (p *planner) program(lines []*line) (*plan.Plan, *abi.Error) {
	if p.labels == nil {
		p.labels, p.boundLater = &table[*bound]{}, &table[pos]{}
	}
	if p.pa == nil {
		p.pa = directPlan
	}
	for _, ln := range lines {
		if ln.label != nil {
			if _, dup := p.boundLater.get(ln.label.text); !dup {
				p.boundLater.set(ln.label.text, ln.p)
			}
		}
	}
	var roots []plan.Root
	var c cur // each root's chain; rhs overwrites it whole
	for _, ln := range lines {
		if ln.label != nil {
			if err := p.checkLabel(ln.label); err != nil {
				return nil, err
			}
			first := len(p.nodes)
			b := &p.pa.bounds.grab(1)[0] // every field is written below
			if err := p.rhs(ln.rhs[0], &b.c); err != nil {
				return nil, err
			}
			b.p = ln.label.p
			if b.c.node >= first {
				p.nodes[b.c.node].Label = ln.label.text
			}
			p.labels.set(ln.label.text, b)
			p.boundLater.del(ln.label.text)
			roots = append(p.pa.roots.slice(1), plan.Root{Label: ln.label.text, Node: b.c.node})
			continue
		}
		roots = p.pa.roots.slice(len(ln.rhs))
		for _, r := range ln.rhs {
			if err := p.rhs(r, &c); err != nil {
				return nil, err
			}
			roots = append(roots, plan.Root{Label: strings.TrimSpace(p.src[r.start:r.end]), Node: c.node})
		}
	}
	return p.finish(roots), nil
}

// reservedLabel reports a word a label cannot be (a switch for the reason
// postfixKeyword gives).
func reservedLabel(w string) bool {
	switch w {
	case "page", "wait", "cancel", "true", "false", "null", "_":
		return true
	}
	return false
}

func (p *planner) checkLabel(l *name) *abi.Error {
	if k, _ := symbol.Parse(l.raw); k != symbol.KindNone {
		return errAt(l.p, abi.CodeSyntax, "label "+l.raw+" looks like a session symbol", "pick a label that is not a letter followed by digits, e.g. open_issues")
	}
	if reservedLabel(l.text) {
		return errAt(l.p, abi.CodeSyntax, l.text+" is a reserved word and cannot be a label", "pick another label")
	}
	if p.isEntityName(l.text) {
		return errAt(l.p, abi.CodeSyntax, l.text+" is an entity name and cannot be a label", "pick a label that is not an entity name, e.g. "+strings.ToLower(l.text)+"s")
	}
	if b, _ := p.labels.get(l.text); b != nil {
		return errAt(l.p, abi.CodeSyntax, "label "+l.text+" is already bound at line "+fmt.Sprint(b.p.line), "use a new label; bindings cannot be reassigned")
	}
	return nil
}

// rhs plans one right-hand side into c, which it overwrites whole.
func (p *planner) rhs(r *rhs, c *cur) *abi.Error {
	if r.kind == rhsPage {
		return p.page(r, c)
	}
	if ok, err := p.rhsExtra(r, c); ok {
		return err
	}
	if err := p.source(r.src, c); err != nil {
		return err
	}
	for _, st := range r.steps {
		var err *abi.Error
		switch st.kind {
		case stRel:
			if p.isMethodStep(c, st) {
				err = p.call(c, st)
			} else if err = p.materialize(c); err == nil {
				err = p.hop(c, st)
			}
		case stCall:
			err = p.call(c, st)
		default:
			if err = p.materialize(c); err == nil {
				err = p.transform(c, st)
			}
		}
		if err != nil {
			return err
		}
	}
	err := p.materialize(c)
	if err == nil && r.render != nil {
		err = p.renderStep(c, r)
	}
	return err
}

// add appends a node, filling id, position and dependencies.
func (p *planner) add(n plan.Node, at pos) (int, *abi.Error) {
	if len(p.nodes) >= maxNodes {
		return -1, errAt(at, abi.CodeBadRequest, fmt.Sprintf("program plans more than %d nodes", maxNodes), "split the work into several programs")
	}
	if err := p.eachRow(&n, at); err != nil {
		return -1, err
	}
	if err := p.viewNode(&n, at); err != nil {
		return -1, err
	}
	n.ID = len(p.nodes)
	n.Line, n.Column = at.line, at.col
	if n.Deps == nil && (n.Input >= 0 || len(n.ArgRefs) > 0) {
		n.Deps = p.pa.ints.slice(1 + len(n.ArgRefs))
	}
	if n.Input >= 0 {
		n.Deps = append(n.Deps, n.Input)
	}
	for _, r := range n.ArgRefs {
		n.Deps = append(n.Deps, r.Node)
	}
	slices.Sort(n.Deps)
	n.Deps = slices.Compact(n.Deps)
	p.nodes = append(p.nodes, n)
	return n.ID, nil
}

func baseNode(op string, x ent) plan.Node {
	n := plan.Node{Op: op, Effect: plan.EffectRead, Input: -1}
	if x.cat != nil {
		n.EntryID, n.Entity, n.Columns = x.cat.EntryID, x.name, fieldNames(x.e)
	}
	return n
}

func (p *planner) page(r *rhs, c *cur) *abi.Error {
	h := r.handle
	if !isHandle(h.raw, "pg") {
		hint := "continuation handles look like s0_pg1 and come from an earlier response"
		if isHandle(h.raw, "o") {
			hint = h.raw + " is an operation handle, not a page handle"
		}
		return errAt(h.p, abi.CodeBadRequest, "invalid page handle "+h.raw, hint)
	}
	n := baseNode(plan.OpPage, ent{})
	n.Many = true
	n.Page = &plan.PageRef{Handle: h.raw}
	if r.hasLimit {
		n.Page.Limit = r.limit
	}
	id, err := p.add(n, r.p)
	c.set(id, ent{}, true, true, nil)
	return err
}

// isHandle matches s<digits>_<kind><digits>.
func isHandle(s, kind string) bool {
	rest, ok := strings.CutPrefix(s, "s")
	if !ok {
		return false
	}
	sess, tail, ok := strings.Cut(rest, "_"+kind)
	return ok && allDigits(sess) && allDigits(tail)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// source plans the start of a chain into c, which it overwrites whole.
func (p *planner) source(s *source, c *cur) *abi.Error {
	if s.name.qual == "" && s.name.sym == nil {
		if b, _ := p.labels.get(s.name.text); b != nil {
			if s.form != srcAll {
				return errAt(s.p, abi.CodeSyntax, "label "+s.name.text+" is not an entity: it cannot take (…), {…} or ~",
					"filter a label's rows with "+s.name.text+".filter{…}")
			}
			*c = b.c
			c.own = false
			return nil
		}
	}
	x, err := p.entity(s.name)
	if err != nil {
		return err
	}
	switch s.form {
	case srcAll:
		c.set(-1, x, true, false, nil)
		c.pend, c.at = pendAll, s.p
		return nil
	case srcGet, srcKeys:
		c.set(-1, x, false, false, nil)
		c.pend, c.get, c.at = pendGet, s, s.p
		return nil
	case srcQuery:
		return p.readPreds(c, x, catalog.KindQuery, s.preds, nil, s.p)
	}
	return p.readPreds(c, x, catalog.KindSearch, s.preds, s.phrase, s.p)
}

// materialize turns a pending bare entity or get into its fetch node, in
// place.
func (p *planner) materialize(c *cur) *abi.Error {
	switch c.pend {
	case pendAll:
		if sc := singletonRead(c.ent); sc != nil {
			return p.fetchSingleton(c, sc)
		}
		return p.read(c, c.ent, catalog.KindQuery, nil, nil, c.at)
	case pendGet:
		return p.fetchGet(c)
	}
	return nil
}

// val evaluates a value: a literal, or a reference to a field of a bound
// label's single row (returned as an ArgRef without Var).
func (p *planner) val(v *value) (any, *plan.ArgRef, *abi.Error) {
	switch v.kind {
	case vLit:
		return v.lit, nil, noInterpolation(v)
	case vList:
		out := make([]any, 0, len(v.list))
		for _, it := range v.list {
			lit, ref, err := p.val(it)
			if err != nil {
				return nil, nil, err
			}
			if ref != nil {
				return nil, nil, errAt(it.p, abi.CodeType, "a list cannot hold label references", "pass literal values in lists")
			}
			out = append(out, lit)
		}
		return out, nil, nil
	case vUnderscore:
		return p.rowRef(v)
	case vUnion:
		return nil, nil, errAt(v.p, abi.CodeType, "a union constructor "+v.ident.raw+"{…} needs a parameter typed as a union, and this catalog declares none",
			"pass the fields as named parameters: method(k=v, …)")
	case vEntity:
		if v.get.form == srcKeys {
			lit, err := p.keyedValue(v)
			return lit, nil, err
		}
		if v.get.form != srcGet {
			return nil, nil, errAt(v.p, abi.CodeType, "only Entity(id) or Entity(key=…, …) can be used as a value", "write the row's id: Entity(\"id\")")
		}
		x, err := p.entity(v.get.name)
		if err != nil {
			return nil, nil, err
		}
		lit, ref, err := p.val(v.get.id)
		if err == nil && ref == nil {
			// As for a read: no row has an empty id, and the backend
			// would be asked for one; the id has the id field's type.
			lit, err = p.checkID(x, lit, v.get.id.p)
		}
		return lit, ref, err
	}
	id := v.ident
	if s := id.sym; s != nil {
		what := map[symbol.Kind]string{symbol.KindEntity: "an entity", symbol.KindMethod: "a method", symbol.KindSlot: "a field or parameter", symbol.KindRelation: "a relation"}[s.kind]
		return nil, nil, errAt(v.p, abi.CodeType, id.raw+" is a session symbol for "+what+" ("+id.text+"), not a value",
			`write the value itself; quote it if it is literal text: "`+id.raw+`"`)
	}
	b, _ := p.labels.get(id.text)
	if b == nil {
		if v.field != nil {
			if at, ok := p.boundLater.get(id.text); ok {
				return nil, nil, errAt(v.p, abi.CodeUnknownEntity, "label "+id.text+" is used before it is bound (line "+fmt.Sprint(at.line)+")", "move the binding above its first use")
			}
			return nil, nil, errAt(v.p, abi.CodeUnknownEntity, "unknown label "+id.raw, listHint(id.text, "labels", p.labelNames())+`; quote literal text such as "`+id.raw+"."+v.field.raw+`"`)
		}
		// A bare word is literal text, so ids like open or i-42 need no quotes.
		return id.raw, nil, nil
	}
	c := b.c
	if v.field == nil {
		return p.labelRef(v, c)
	}
	if c.cols != nil {
		return p.colsRef(v, c)
	}
	if c.ent.cat == nil {
		return nil, nil, errAt(v.p, abi.CodeType, "page(…) rows have no known fields", "")
	}
	f := v.field.text
	if c.ent.e.FieldNamed(f) == nil {
		return nil, nil, errAt(v.field.p, abi.CodeUnknownField, c.ent.name+" has no field "+v.field.raw, listHint(f, "fields of "+c.ent.name, fieldNames(c.ent.e)))
	}
	if err := p.needField(c, f, v.field.p, id.text+"."+f); err != nil {
		return nil, nil, err
	}
	if err := p.hydrate(&c, []string{f}, v.field.p); err != nil {
		return nil, nil, err
	}
	if !p.single(c.node) {
		return nil, nil, errAt(v.p, abi.CodeType, id.text+" is a list; "+id.text+"."+f+" needs a single row",
			"bind one row, e.g. "+id.text+" = Entity(\"id\") or "+id.text+" = Entity{…}.limit(1)")
	}
	return nil, &plan.ArgRef{Node: c.node, Field: f}, nil
}

// single reports whether a node yields at most one row. A hydrate node
// yields as many rows as its input.
func (p *planner) single(id int) bool {
	for {
		n := &p.nodes[id]
		if !n.Many {
			return true
		}
		for _, t := range n.Transforms {
			if t.Kind == plan.TLimit && t.N <= 1 || t.Kind == plan.TSingleton {
				return true
			}
		}
		if n.Op != plan.OpHydrate {
			return false
		}
		id = n.Input // earlier than n, so the walk ends
	}
}
