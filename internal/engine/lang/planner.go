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

type bound struct {
	p pos
	c cur
}

type planner struct {
	req        *abi.PlanRequest
	src        string
	entries    []*catalog.Catalog
	nodes      []plan.Node
	labels     map[string]*bound
	boundLater map[string]pos
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
	p.labels = map[string]*bound{}
	p.boundLater = map[string]pos{}
	for _, ln := range lines {
		if ln.label != nil {
			if _, dup := p.boundLater[ln.label.text]; !dup {
				p.boundLater[ln.label.text] = ln.p
			}
		}
	}
	var roots []plan.Root
	for _, ln := range lines {
		if ln.label != nil {
			if err := p.checkLabel(ln.label); err != nil {
				return nil, err
			}
			first := len(p.nodes)
			c, err := p.rhs(ln.rhs[0])
			if err != nil {
				return nil, err
			}
			if c.node >= first {
				p.nodes[c.node].Label = ln.label.text
			}
			p.labels[ln.label.text] = &bound{p: ln.label.p, c: c}
			delete(p.boundLater, ln.label.text)
			roots = []plan.Root{{Label: ln.label.text, Node: c.node}}
			continue
		}
		roots = roots[:0]
		for _, r := range ln.rhs {
			c, err := p.rhs(r)
			if err != nil {
				return nil, err
			}
			roots = append(roots, plan.Root{Label: strings.TrimSpace(p.src[r.start:r.end]), Node: c.node})
		}
	}
	return p.finish(roots), nil
}

var reservedLabels = map[string]bool{"page": true, "wait": true, "cancel": true, "true": true, "false": true, "null": true, "_": true}

func (p *planner) checkLabel(l *name) *abi.Error {
	if k, _ := symbol.Parse(l.raw); k != symbol.KindNone {
		return errAt(l.p, abi.CodeSyntax, "label "+l.raw+" looks like a session symbol", "pick a label that is not a letter followed by digits, e.g. open_issues")
	}
	if reservedLabels[l.text] {
		return errAt(l.p, abi.CodeSyntax, l.text+" is a reserved word and cannot be a label", "pick another label")
	}
	if p.isEntityName(l.text) {
		return errAt(l.p, abi.CodeSyntax, l.text+" is an entity name and cannot be a label", "pick a label that is not an entity name, e.g. "+strings.ToLower(l.text)+"s")
	}
	if b := p.labels[l.text]; b != nil {
		return errAt(l.p, abi.CodeSyntax, "label "+l.text+" is already bound at line "+fmt.Sprint(b.p.line), "use a new label; bindings cannot be reassigned")
	}
	return nil
}

func (p *planner) rhs(r *rhs) (cur, *abi.Error) {
	if r.kind == rhsPage {
		return p.page(r)
	}
	if c, ok, err := p.rhsExtra(r); ok {
		return c, err
	}
	c, err := p.source(r.src)
	if err != nil {
		return c, err
	}
	for _, st := range r.steps {
		switch st.kind {
		case stRel:
			if p.isMethodStep(c, st) {
				c, err = p.call(c, st)
			} else if c, err = p.materialize(c); err == nil {
				c, err = p.hop(c, st)
			}
		case stCall:
			c, err = p.call(c, st)
		default:
			if c, err = p.materialize(c); err == nil {
				err = p.transform(&c, st)
			}
		}
		if err != nil {
			return c, err
		}
	}
	c, err = p.materialize(c)
	if err == nil && r.render != nil {
		c, err = p.renderStep(c, r)
	}
	return c, err
}

// add appends a node, filling id, position and dependencies.
func (p *planner) add(n plan.Node, at pos) (int, *abi.Error) {
	if len(p.nodes) >= maxNodes {
		return -1, errAt(at, abi.CodeBadRequest, fmt.Sprintf("program plans more than %d nodes", maxNodes), "split the work into several programs")
	}
	if err := p.eachRow(&n, at); err != nil {
		return -1, err
	}
	n.ID = len(p.nodes)
	n.Line, n.Column = at.line, at.col
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

func (p *planner) page(r *rhs) (cur, *abi.Error) {
	h := r.handle
	if !isHandle(h.raw, "pg") {
		hint := "continuation handles look like s0_pg1 and come from an earlier response"
		if isHandle(h.raw, "o") {
			hint = h.raw + " is an operation handle, not a page handle"
		}
		return cur{}, errAt(h.p, abi.CodeBadRequest, "invalid page handle "+h.raw, hint)
	}
	n := baseNode(plan.OpPage, ent{})
	n.Many = true
	n.Page = &plan.PageRef{Handle: h.raw}
	if r.hasLimit {
		n.Page.Limit = r.limit
	}
	id, err := p.add(n, r.p)
	return cur{node: id, many: true, own: true}, err
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

func (p *planner) source(s *source) (cur, *abi.Error) {
	if s.name.qual == "" && s.name.sym == nil {
		if b := p.labels[s.name.text]; b != nil {
			if s.form != srcAll {
				return cur{}, errAt(s.p, abi.CodeSyntax, "label "+s.name.text+" is not an entity: it cannot take (…), {…} or ~",
					"filter a label's rows with "+s.name.text+".filter{…}")
			}
			c := b.c
			c.own = false
			return c, nil
		}
	}
	x, err := p.entity(s.name)
	if err != nil {
		return cur{}, err
	}
	c := cur{node: -1, ent: x, at: s.p}
	switch s.form {
	case srcAll:
		c.pend, c.many = pendAll, true
		return c, nil
	case srcGet, srcKeys:
		c.pend, c.get = pendGet, s
		return c, nil
	case srcQuery:
		return p.readPreds(x, catalog.KindQuery, s.preds, nil, s.p)
	}
	return p.readPreds(x, catalog.KindSearch, s.preds, s.phrase, s.p)
}

// materialize turns a pending bare entity or get into its fetch node.
func (p *planner) materialize(c cur) (cur, *abi.Error) {
	switch c.pend {
	case pendAll:
		if sc := singletonRead(c.ent); sc != nil {
			return p.fetchSingleton(c, sc)
		}
		return p.read(c.ent, catalog.KindQuery, nil, nil, c.at)
	case pendGet:
		return p.fetchGet(c)
	}
	return c, nil
}

func (p *planner) fetchGet(c cur) (cur, *abi.Error) {
	s := c.get
	gc := c.ent.cat.GetCapability(c.ent.name)
	if gc == nil {
		return c, errAt(s.p, abi.CodeUnknownMethod, c.ent.name+" cannot be read by id: it has no get capability", p.listHowTo(c.ent))
	}
	args, refs, supplied, err := p.keyArgs(c.ent, gc, gc, s)
	if err != nil {
		return c, err
	}
	if err := requireGet(c.ent, gc, supplied, s.p); err != nil {
		return c, err
	}
	if len(args) == 0 {
		args = nil
	}
	n := baseNode(plan.OpFetch, c.ent)
	n.Kind, n.Capability, n.Args, n.ArgRefs = gc.Kind, gc.Name, args, refs
	id, err := p.add(n, s.p)
	return cur{node: id, ent: c.ent, own: true}, err
}

// listHowTo says how an entity's rows can be listed, for hints.
func (p *planner) listHowTo(x ent) string {
	var ways []string
	for _, qc := range x.cat.CapabilitiesOf(x.name) {
		switch qc.Kind {
		case catalog.KindQuery:
			var req []string
			for _, pr := range qc.Parameters {
				if pr.Required {
					req = append(req, pr.Name+"=…")
				}
			}
			if len(req) == 0 {
				ways = append(ways, x.name)
			} else {
				ways = append(ways, x.name+"{"+strings.Join(req, ", ")+"}")
			}
		case catalog.KindSearch:
			ways = append(ways, x.name+`~"text"`)
		case catalog.KindGet:
			ways = append(ways, x.name+`("id")`)
		}
	}
	ways = slices.Compact(ways)
	if len(ways) == 0 {
		return x.name + " has no read capability; reach it through a relation of another entity"
	}
	return "read it with " + strings.Join(ways, " or ")
}

// keyArgs turns Entity(id) or Entity(k=v, …) into the variables of run, the
// capability that consumes the row's identity (its get, or a method called
// on the row). Keys may name the id, the entity's key vars, or parameters of
// keys. The id always travels as "id" and, when run's mapping names the id
// field instead (users/{login}), under that name too.
func (p *planner) keyArgs(x ent, keys, run *catalog.Capability, s *source) (map[string]any, []plan.ArgRef, map[string]bool, *abi.Error) {
	args := map[string]any{}
	var refs []plan.ArgRef
	supplied := map[string]bool{}
	set := func(k string, v *value) *abi.Error {
		lit, ref, err := p.val(v)
		if err != nil {
			return err
		}
		if ref != nil {
			ref.Var = k
			refs = append(refs, *ref)
		} else {
			args[k] = lit
		}
		supplied[k] = true
		return nil
	}
	idf := idField(x.e)
	setID := func(v *value) *abi.Error {
		if err := set("id", v); err != nil {
			return err
		}
		if err := p.checkID(x, args["id"], v.p); err != nil {
			return err
		}
		if idf != "" && idf != "id" {
			supplied[idf] = true
			if usesVar(x.cat, run, idf) {
				return set(idf, v)
			}
		}
		return nil
	}
	compound := len(x.e.KeyVars) > 1
	if s.form == srcGet {
		if compound {
			return nil, nil, nil, errAt(s.p, abi.CodeType, x.name+" has a compound key ("+strings.Join(x.e.KeyVars, ", ")+")",
				"name every key: "+x.name+"("+strings.Join(x.e.KeyVars, "=…, ")+"=…)")
		}
		if err := setID(s.id); err != nil {
			return nil, nil, nil, err
		}
		return args, refs, supplied, nil
	}
	var valid []string
	if !compound {
		valid = append(valid, "id")
		if idf != "" && idf != "id" {
			valid = append(valid, idf)
		}
	}
	for _, k := range x.e.KeyVars {
		if !slices.Contains(valid, k) {
			valid = append(valid, k)
		}
	}
	for _, pr := range keys.Parameters {
		if !slices.Contains(valid, pr.Name) {
			valid = append(valid, pr.Name)
		}
	}
	for _, a := range s.keys {
		k := a.key.text
		if !slices.Contains(valid, k) {
			return nil, nil, nil, errAt(a.key.p, abi.CodeUnknownField, x.name+" has no key "+a.key.raw, listHint(k, "keys", valid))
		}
		isID := !compound && (k == "id" || k == idf)
		if supplied[k] || isID && supplied["id"] {
			return nil, nil, nil, errAt(a.key.p, abi.CodeType, "key "+a.key.raw+" given twice", "")
		}
		var err *abi.Error
		if isID {
			err = setID(a.val)
		} else {
			err = set(k, a.val)
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	var missing []string
	if compound {
		for _, k := range x.e.KeyVars {
			if !supplied[k] {
				missing = append(missing, k)
			}
		}
	} else if !supplied["id"] {
		missing = append(missing, cmpOr(idf, "id"))
	}
	if len(missing) > 0 {
		return nil, nil, nil, errAt(s.p, abi.CodeType, x.name+"(…) is missing its key "+strings.Join(missing, ", "),
			"write "+x.name+"("+strings.Join(missing, "=…, ")+"=…)")
	}
	return args, refs, supplied, nil
}

// requireGet checks that a get has every required parameter.
func requireGet(x ent, gc *catalog.Capability, supplied map[string]bool, at pos) *abi.Error {
	var missing []string
	for _, pr := range gc.Parameters {
		if pr.Required && !supplied[pr.Name] && !idBound(x.cat, gc, pr.Name, supplied) {
			missing = append(missing, pr.Name)
		}
	}
	if len(missing) > 0 {
		return errAt(at, abi.CodeType, gc.Name+" needs "+strings.Join(missing, ", "),
			"pass them as keys: "+x.name+"(id=…, "+strings.Join(missing, "=…, ")+"=…)")
	}
	return nil
}

// idVar is the variable a capability reads a row's id from: "id" unless its
// mapping only knows the id field's own name.
func idVar(x ent, cp *catalog.Capability, idf string) string {
	if idf == "" || idf == "id" || usesVar(x.cat, cp, "id") || !usesVar(x.cat, cp, idf) {
		return "id"
	}
	return idf
}

// usesVar reports whether a capability declares or its mapping reads name.
func usesVar(cat *catalog.Catalog, cp *catalog.Capability, name string) bool {
	if cp == nil {
		return false
	}
	if cp.Param(name) != nil {
		return true
	}
	m := cat.Mappings[cp.Name]
	if m == nil {
		return false
	}
	for _, sg := range m.Path {
		if sg.Type == "var" && sg.Name == name {
			return true
		}
	}
	return exprUses(m.Query, name, 0) || exprUses(m.Body, name, 0) || exprUses(m.Headers, name, 0)
}

func exprUses(e *catalog.Expr, name string, depth int) bool {
	if e == nil || depth > maxDepth {
		return false
	}
	if e.Type == catalog.ExprVar && e.Name == name {
		return true
	}
	if e.Cond != nil {
		if e.Cond.Exists == name || exprUses(e.Cond.Bool, name, depth+1) {
			return true
		}
		if eq := e.Cond.Equals; eq != nil && (exprUses(eq.Left, name, depth+1) || exprUses(eq.Right, name, depth+1)) {
			return true
		}
	}
	for _, kv := range e.Fields {
		if exprUses(kv.Value, name, depth+1) {
			return true
		}
	}
	for _, it := range e.Items {
		if exprUses(it, name, depth+1) {
			return true
		}
	}
	for _, v := range e.Vars {
		if exprUses(v, name, depth+1) {
			return true
		}
	}
	return exprUses(e.Then, name, depth+1) || exprUses(e.Else, name, depth+1) || exprUses(e.Expr, name, depth+1)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// phraseParam is where a search phrase goes: the search-role parameter, or
// the first parameter when none declares the role.
func phraseParam(c *catalog.Capability) string {
	for _, pr := range c.Parameters {
		if pr.Role == catalog.RoleSearch {
			return pr.Name
		}
	}
	if len(c.Parameters) > 0 {
		return c.Parameters[0].Name
	}
	return ""
}

type evPred struct {
	pred
	lit any
	ref *plan.ArgRef
}

// read plans a query or search: it picks the capability that can run with
// the predicates given and pushes down as many equalities as possible; the
// rest are applied by the host.
func (p *planner) read(x ent, kind string, preds []pred, phrase *value, at pos) (cur, *abi.Error) {
	var caps []*catalog.Capability
	for _, c := range x.cat.CapabilitiesOf(x.name) {
		if c.Kind == kind {
			caps = append(caps, c)
		}
	}
	if len(caps) == 0 {
		what := "query"
		if kind == catalog.KindSearch {
			what = "search"
		}
		return cur{}, errAt(at, abi.CodeUnknownMethod, x.name+" has no "+what+" capability", p.listHowTo(x))
	}
	ev := make([]evPred, len(preds))
	for i, pr := range preds {
		lit, ref, err := p.val(pr.val)
		if err != nil {
			return cur{}, err
		}
		ev[i] = evPred{pred: pr, lit: lit, ref: ref}
	}
	var best, fewest, phraseless *catalog.Capability
	bestScore, fewestMissing := -1, 0
	var fewestList []string
	for _, c := range caps {
		supplied := map[string]bool{}
		if phrase != nil {
			pp := phraseParam(c)
			if pp == "" {
				// Nothing would carry the phrase, and running the search
				// without it would answer a different question.
				phraseless = c
				continue
			}
			supplied[pp] = true
		}
		score := 0
		for _, e := range ev {
			if pushable(e) && c.Param(e.field.text) != nil && !supplied[e.field.text] {
				supplied[e.field.text] = true
				score++
			}
		}
		var missing []string
		for _, pr := range c.Parameters {
			if pr.Required && !supplied[pr.Name] {
				missing = append(missing, pr.Name)
			}
		}
		if len(missing) > 0 {
			if fewest == nil || len(missing) < fewestMissing {
				fewest, fewestMissing, fewestList = c, len(missing), missing
			}
			continue
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	if best == nil && fewest == nil && phraseless != nil {
		return cur{}, errAt(phrase.p, abi.CodeCatalog, x.name+" search "+phraseless.Name+" declares no parameter to carry the search phrase",
			"the phrase cannot be sent; filter on the host instead, e.g. "+x.name+".filter{field~\"words\"}, or "+p.listHowTo(x))
	}
	if best == nil {
		if len(preds) == 0 && phrase == nil {
			return cur{}, errAt(at, abi.CodeType, "listing every "+x.name+" needs "+strings.Join(fewestList, ", "),
				p.listHowTo(x))
		}
		return cur{}, errAt(at, abi.CodeType, x.name+" "+fewest.Kind+" needs "+strings.Join(fewestList, ", ")+" ("+fewest.Name+")",
			"add "+strings.Join(fewestList, "=…, ")+"=… to the braces; "+p.listHowTo(x))
	}
	n := baseNode(plan.OpFetch, x)
	n.Kind, n.Capability, n.Many = best.Kind, best.Name, true
	args := map[string]any{}
	if phrase != nil {
		lit, ref, err := p.val(phrase)
		if err != nil {
			return cur{}, err
		}
		if ref != nil {
			return cur{}, errAt(phrase.p, abi.CodeType, "a search phrase must be literal text", `write Entity~"words"`)
		}
		if text, ok := lit.(string); ok && strings.TrimSpace(text) == "" {
			return cur{}, errAt(phrase.p, abi.CodeType, "a search needs words: "+x.name+`~""`+" names none",
				`write `+x.name+`~"some words", or `+p.listHowTo(x))
		}
		args[phraseParam(best)] = lit
	}
	for _, e := range ev {
		prm := best.Param(e.field.text)
		_, taken := args[e.field.text]
		taken = taken || hasRef(n.ArgRefs, e.field.text)
		if pushable(e) && prm != nil && taken {
			return cur{}, errAt(e.p, abi.CodeType, e.field.text+" is given twice", "pass one value, or a list if the API accepts several")
		}
		if pushable(e) && prm != nil {
			if e.ref != nil {
				r := *e.ref
				r.Var = e.field.text
				g, err := p.nonNullGuard(r, e.val.p)
				if err != nil {
					return cur{}, err
				}
				r.Node = g
				n.ArgRefs = append(n.ArgRefs, r)
				continue
			}
			if err := p.checkValue(x.cat, prm.ValueRef, e.lit, e.val.p, e.field.text); err != nil {
				return cur{}, err
			}
			args[e.field.text] = e.lit
			continue
		}
		if e.op == "=" && e.lit == nil && e.ref == nil && prm != nil && x.e.Fields[e.field.text] == nil {
			return cur{}, errAt(e.val.p, abi.CodeType, e.field.text+"=null cannot be sent: a parameter set to null is left out of the request, and "+
				e.field.text+" is not a field of "+x.name+" the host could filter on",
				"drop "+e.field.text+" to list without it, or give it a value")
		}
		pd, err := p.filterPred(x, e)
		if err != nil {
			return cur{}, err
		}
		n.Filters = append(n.Filters, pd)
	}
	if len(args) > 0 {
		n.Args = args
	}
	// A host-side predicate on a field the list does not carry would test
	// null and drop every row: such predicates wait for the rows to be
	// hydrated and filter after.
	have := provided(best)
	var late []plan.Pred
	if have != nil {
		early := n.Filters[:0:0]
		for _, pd := range n.Filters {
			if slices.Contains(have, pd.Field) {
				early = append(early, pd)
			} else {
				late = append(late, pd)
			}
		}
		n.Filters = early
	}
	id, err := p.add(n, at)
	c := cur{node: id, ent: x, many: true, own: true, have: have}
	if err != nil || len(late) == 0 {
		return c, err
	}
	var fs []string
	for _, pd := range late {
		fs = append(fs, pd.Field)
	}
	if err := p.hydrate(&c, fs, at); err != nil {
		return cur{}, err
	}
	last := &p.nodes[c.node]
	last.Transforms = append(last.Transforms, plan.Transform{Kind: plan.TFilter, Preds: late})
	return c, nil
}

// provided is what a capability's rows carry: nil (every field) when it
// declares no provides, since an undeclared list is no evidence of a gap.
func provided(cp *catalog.Capability) []string {
	if cp == nil || len(cp.Provides) == 0 {
		return nil
	}
	return cp.Provides
}

// hydrate makes c's rows carry fields the program explicitly reads (a
// projection, a sort or filter field, a relation's binding, a label
// reference) when the capability that produced them does not provide those
// fields: it appends an OpHydrate node that reads each row again through
// the entity's get. Rows nobody asks about are never hydrated, so a plain
// list costs one call, not one per row. When the entity has no usable get,
// or the get does not provide the field either, the rows stay as they are.
func (p *planner) hydrate(c *cur, fields []string, at pos) *abi.Error {
	if c.have == nil || c.ent.cat == nil || c.proj != nil {
		// A projection in force was itself hydrated before it was applied.
		return nil
	}
	gc := c.ent.cat.GetCapability(c.ent.name)
	idf := idField(c.ent.e)
	if gc == nil || idf == "" || !slices.Contains(c.have, idf) {
		return nil
	}
	gets := provided(gc)
	var missing []string
	for _, f := range fields {
		if c.ent.e.Fields[f] == nil || slices.Contains(c.have, f) || slices.Contains(missing, f) {
			continue
		}
		if gets == nil || slices.Contains(gets, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	binds := []plan.Bind{{Var: "id", Field: idf}}
	if idf != "id" && usesVar(c.ent.cat, gc, idf) {
		binds = append(binds, plan.Bind{Var: idf, Field: idf})
	}
	for _, pr := range gc.Parameters {
		if pr.Required && !slices.ContainsFunc(binds, func(b plan.Bind) bool { return b.Var == pr.Name }) {
			return nil // the get needs more than the row's id
		}
	}
	n := baseNode(plan.OpHydrate, c.ent)
	n.Kind, n.Capability, n.Input, n.Many = gc.Kind, gc.Name, c.node, c.many
	n.Hydrate = &plan.Hydrate{Binds: binds, Fields: missing}
	id, err := p.add(n, at)
	if err != nil {
		return err
	}
	c.node, c.own = id, true
	c.have = slices.Concat(c.have, missing)
	return nil
}

// pushable reports whether a predicate may be sent to the backend as a
// parameter. Only equalities can, and not with a literal null: the request
// builder leaves null variables out, so `status=null` would come back as the
// unfiltered list. A null equality stays a host-side filter instead.
func pushable(e evPred) bool {
	return e.op == "=" && (e.ref != nil || e.lit != nil)
}

// nonNullGuard returns a node that yields the referenced row only when its
// field is not null, so a predicate fed from a label fails closed. Without
// it `Issue{assignee_id=top.assignee_id}` with a null assignee would send no
// assignee_id at all and return every issue; with it the reference finds no
// row and the executor refuses the run. Guards are shared per (node, field).
func (p *planner) nonNullGuard(r plan.ArgRef, at pos) (int, *abi.Error) {
	if r.Node < 0 {
		return -1, errAt(at, abi.CodeType, "_."+r.Field+" can only fill a method's arguments inside an effect",
			"label => Entity(_.id).method(field=_.other); to read related rows per row, follow a relation")
	}
	key := guardKey{r.Node, r.Field}
	if id, ok := p.guards[key]; ok {
		return id, nil
	}
	src := &p.nodes[r.Node]
	n := plan.Node{Op: plan.OpTransform, Effect: plan.EffectRead, Input: r.Node,
		EntryID: src.EntryID, Entity: src.Entity, Columns: src.Columns,
		Filters: []plan.Pred{{Field: r.Field, Op: "!=", Value: nil}}}
	id, err := p.add(n, at)
	if err != nil {
		return -1, err
	}
	if p.guards == nil {
		p.guards = map[guardKey]int{}
	}
	p.guards[key] = id
	return id, nil
}

func hasRef(refs []plan.ArgRef, v string) bool {
	for _, r := range refs {
		if r.Var == v {
			return true
		}
	}
	return false
}

// filterPred checks a host-side predicate against the entity's fields.
func (p *planner) filterPred(x ent, e evPred) (plan.Pred, *abi.Error) {
	f := x.e.Fields[e.field.text]
	if err := symbolMixup(e.field, true); err != nil && f == nil {
		return plan.Pred{}, err
	}
	if f == nil {
		return plan.Pred{}, errAt(e.field.p, abi.CodeUnknownField, x.name+" has no field "+e.field.raw, listHint(e.field.text, "fields of "+x.name, fieldNames(x.e)))
	}
	if e.ref != nil {
		return plan.Pred{}, errAt(e.val.p, abi.CodeType, "only a parameter equality can take a value from a label",
			e.field.text+" is filtered by the host after fetching; compare it with a literal value")
	}
	if e.op != "~" {
		if err := p.checkValue(x.cat, f.ValueRef, e.lit, e.val.p, e.field.text); err != nil {
			return plan.Pred{}, err
		}
	} else if _, ok := e.lit.(string); !ok {
		return plan.Pred{}, errAt(e.val.p, abi.CodeType, "~ matches text; give it a string", e.field.text+`~"words"`)
	}
	return plan.Pred{Field: e.field.text, Op: e.op, Value: e.lit}, nil
}

func (p *planner) hop(c cur, st *step) (cur, *abi.Error) {
	if c.ent.cat == nil {
		return c, errAt(st.p, abi.CodeType, "page(…) rows cannot be followed by ."+st.name.raw, "follow relations in the original program instead")
	}
	rn := st.name.text
	if s := st.name.sym; s != nil {
		switch s.kind {
		case symbol.KindRelation:
			r := s.relation
			if r.EntryID != c.ent.cat.EntryID || r.Entity != c.ent.name {
				return c, errAt(st.p, abi.CodeUnknownField, st.name.raw+" is a relation of "+r.EntryID+":"+r.Entity+", not of "+c.ent.qualified(),
					"follow it from "+p.entitySym(r.EntryID, r.Entity)+" rows")
			}
		case symbol.KindMethod:
			return c, errAt(st.p, abi.CodeUnknownField, st.name.raw+" is a method ("+s.method.Label+"); call it with parentheses", "."+st.name.raw+"(…)")
		case symbol.KindSlot:
			return c, symbolMixup(st.name, false)
		case symbol.KindEntity:
			return c, errAt(st.p, abi.CodeUnknownField, st.name.raw+" is an entity, not a relation of "+c.ent.name, listHint("", "relations of "+c.ent.name, relationNames(c.ent.e)))
		}
	}
	rel := c.ent.e.Relations[rn]
	if rel == nil {
		switch {
		case c.ent.e.Fields[rn] != nil && refTarget(c.ent.cat, c.ent.e.Fields[rn].ValueRef) != "":
			return p.followRef(c, st, rn)
		case c.ent.e.Fields[rn] != nil:
			return c, errAt(st.p, abi.CodeUnknownField, rn+" is a field of "+c.ent.name+", not a relation", "project fields with ["+rn+"]")
		case c.ent.cat.MethodByLabel(c.ent.name, rn) != nil:
			return c, errAt(st.p, abi.CodeUnknownField, rn+" is a method of "+c.ent.name+"; call it with parentheses", "."+rn+"(…)")
		}
		return c, errAt(st.p, abi.CodeUnknownField, c.ent.name+" has no relation "+st.name.raw, listHint(rn, "relations of "+c.ent.name, relationNames(c.ent.e)))
	}
	target := c.ent.cat.Entities[rel.Target]
	if target == nil {
		return c, errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" targets unknown entity "+rel.Target, "the catalog is inconsistent; report it to its maintainer")
	}
	h := &plan.Hop{Relation: rn, Materialize: rel.Materialize.Kind, Target: rel.Target, Binds: []plan.Bind{}}
	pid := idField(c.ent.e)
	needID := func() *abi.Error {
		if pid == "" {
			return errAt(st.p, abi.CodeCatalog, c.ent.name+" has no single id field to follow "+rn+" from", "")
		}
		return p.needField(c, pid, st.p, rn)
	}
	switch rel.Materialize.Kind {
	case catalog.QueryScoped:
		if c.ent.cat.Capabilities[rel.Materialize.Capability] == nil {
			return c, errAt(st.p, abi.CodeCatalog, "relation "+rn+" names unknown capability "+rel.Materialize.Capability, "")
		}
		if err := needID(); err != nil {
			return c, err
		}
		h.Capability = rel.Materialize.Capability
		h.Binds = append(h.Binds, plan.Bind{Var: rel.Materialize.Param, Field: pid})
	case catalog.QueryScopedBindings:
		if c.ent.cat.Capabilities[rel.Materialize.Capability] == nil {
			return c, errAt(st.p, abi.CodeCatalog, "relation "+rn+" names unknown capability "+rel.Materialize.Capability, "")
		}
		h.Capability = rel.Materialize.Capability
		vars := make([]string, 0, len(rel.Materialize.Bindings))
		for v := range rel.Materialize.Bindings {
			vars = append(vars, v)
		}
		slices.Sort(vars)
		for _, v := range vars {
			f := rel.Materialize.Bindings[v]
			if err := p.needField(c, f, st.p, rn); err != nil {
				return c, err
			}
			h.Binds = append(h.Binds, plan.Bind{Var: v, Field: f})
		}
	case catalog.FromParentGet:
		gc := c.ent.cat.GetCapability(c.ent.name)
		if gc == nil {
			return c, errAt(st.p, abi.CodeCatalog, "relation "+rn+" is embedded in "+c.ent.name+"'s get, but "+c.ent.name+" has no get capability", "")
		}
		if err := needID(); err != nil {
			return c, err
		}
		h.Capability = gc.Name
		h.Binds = append(h.Binds, plan.Bind{Var: idVar(c.ent, gc, pid), Field: pid})
	case "":
		// Declared for documentation (Plasm's unavailable relation): the
		// catalog says what it links to, not how to fetch it.
		return c, errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" is declared but not traversable: the catalog gives no materialize for it",
			"query "+rel.Target+" directly instead: "+p.listHowTo(ent{cat: c.ent.cat, e: target, name: rel.Target}))
	default:
		return c, errAt(st.p, abi.CodeCatalog, "relation "+rn+" has materialization "+rel.Materialize.Kind+", which plasmd does not traverse", "")
	}
	var bindFields []string
	for _, b := range h.Binds {
		bindFields = append(bindFields, b.Field)
	}
	if err := p.hydrate(&c, bindFields, st.p); err != nil {
		return c, err
	}
	if hc := c.ent.cat.Capabilities[h.Capability]; hc != nil && rel.Materialize.Kind != catalog.FromParentGet {
		var missing []string
		for _, pr := range hc.Parameters {
			if pr.Required && !slices.ContainsFunc(h.Binds, func(b plan.Bind) bool { return b.Var == pr.Name }) {
				missing = append(missing, pr.Name)
			}
		}
		if len(missing) > 0 {
			return c, errAt(st.p, abi.CodeCatalog, "relation "+c.ent.name+"."+rn+" cannot be followed: "+h.Capability+" also needs "+strings.Join(missing, ", "),
				"query "+rel.Target+" directly instead: "+p.listHowTo(ent{cat: c.ent.cat, e: target, name: rel.Target}))
		}
	}
	tx := ent{cat: c.ent.cat, e: target, name: rel.Target}
	tid := idField(target)
	if rel.Cardinality == "one" {
		h.DistinctBy = tid
	}
	// What the target rows carry: the target capability's provides, or, for
	// objects embedded in the parent's get, whatever the parent happened to
	// embed, which the catalog does not declare. Only the id is certain
	// there; the hydrate node skips rows that turn out complete.
	var have []string
	if rel.Materialize.Kind == catalog.FromParentGet {
		if tid != "" {
			have = []string{tid}
		}
	} else {
		have = provided(c.ent.cat.Capabilities[h.Capability])
	}
	n := baseNode(plan.OpHop, tx)
	n.Kind, n.Hop, n.Input = "relation", h, c.node
	n.Many = c.many || rel.Cardinality != "one"
	id, err := p.add(n, st.p)
	return cur{node: id, ent: tx, many: n.Many, own: true, have: have}, err
}

// needField checks that rows still carry a field a later step reads from.
func (p *planner) needField(c cur, f string, at pos, user string) *abi.Error {
	if c.proj != nil && !slices.Contains(c.proj, f) {
		return errAt(at, abi.CodeType, user+" needs "+f+" from each row, but the projection ["+strings.Join(c.proj, ", ")+"] dropped it",
			"add "+f+" to the projection or project after ."+user)
	}
	return nil
}

func (p *planner) call(c cur, st *step) (cur, *abi.Error) {
	if c.ent.cat == nil {
		return c, errAt(st.p, abi.CodeType, "page(…) rows cannot take ."+st.name.raw+"(…)", "")
	}
	var mc *catalog.Capability
	if s := st.name.sym; s != nil {
		switch s.kind {
		case symbol.KindMethod:
			m := s.method
			if m.EntryID != c.ent.cat.EntryID || m.Entity != c.ent.name {
				owner := m.EntryID + ":" + m.Entity
				if s := p.symbols().EntitySym(m.EntryID, m.Entity); s != "" {
					owner += " (" + s + ")"
				}
				return c, errAt(st.p, abi.CodeUnknownMethod, st.name.raw+" ("+m.Label+") is a method of "+m.EntryID+":"+m.Entity+", not of "+c.ent.qualified(),
					st.name.raw+" belongs to "+owner+"; call it on a row of that entity, or use a method of "+c.ent.name+": "+strings.Join(methodLabels(c.ent), ", "))
			}
			mc = c.ent.cat.Capabilities[m.Capability]
		case symbol.KindRelation:
			return c, errAt(st.p, abi.CodeUnknownMethod, st.name.raw+" is a relation ("+s.relation.Name+"); drop the parentheses", "."+st.name.raw)
		case symbol.KindEntity:
			return c, errAt(st.p, abi.CodeUnknownMethod, st.name.raw+" is an entity, not a method of "+c.ent.name, listHint("", "methods of "+c.ent.name, methodLabels(c.ent)))
		}
	}
	if mc == nil {
		mc = c.ent.cat.MethodByLabel(c.ent.name, st.name.text)
	}
	if mc == nil {
		if c.ent.e.Relations[st.name.text] != nil {
			return c, errAt(st.p, abi.CodeUnknownMethod, st.name.text+" is a relation of "+c.ent.name+"; drop the parentheses", "."+st.name.text)
		}
		return c, errAt(st.p, abi.CodeUnknownMethod, c.ent.name+" has no method "+st.name.raw, listHint(st.name.text, "methods of "+c.ent.name, methodLabels(c.ent)))
	}
	label := catalog.MethodLabel(mc)
	switch mc.Kind {
	case catalog.KindQuery, catalog.KindSearch, catalog.KindGet:
		return c, errAt(st.p, abi.CodeUnknownMethod, label+" is a "+mc.Kind+"; reads are written as expressions, not method calls", p.listHowTo(c.ent))
	}
	n := baseNode(plan.OpMutate, c.ent)
	n.Effect, n.Kind, n.Capability = plan.EffectWrite, mc.Kind, mc.Name
	if mc.Output != nil {
		n.Columns = nil
	}
	args := map[string]any{}
	supplied := map[string]bool{}
	switch {
	case mc.Kind == catalog.KindCreate:
		if c.pend != pendAll {
			return c, errAt(st.p, abi.CodeType, label+" creates a new "+c.ent.name+"; call it on the entity itself", c.ent.name+"."+label+"(…)")
		}
	case c.pend == pendAll:
		return c, errAt(st.p, abi.CodeType, label+" needs a receiver row",
			c.ent.name+`("id").`+label+"(…) for one row, or "+c.ent.name+"{…}."+label+"(…) for each matching row")
	case c.pend == pendGet:
		gc := c.ent.cat.GetCapability(c.ent.name)
		if gc == nil {
			gc = &catalog.Capability{}
		}
		ka, refs, sup, err := p.keyArgs(c.ent, gc, mc, c.get)
		if err != nil {
			return c, err
		}
		if n.ArgRefs, err = p.preflight(c, mc, ka, refs, st.p); err != nil {
			return c, err
		}
		args, supplied = ka, sup
	default:
		f := idField(c.ent.e)
		if f == "" {
			return c, errAt(st.p, abi.CodeType, c.ent.name+" has a compound key; "+label+" cannot run once per row", "call it on one row: "+c.ent.name+"(k=…, …)."+label+"(…)")
		}
		if err := p.needField(c, f, st.p, label); err != nil {
			return c, err
		}
		if len(mc.Preflight) > 0 {
			return c, errAt(st.p, abi.CodeType, label+" reads its target row first (a preflight get), so it runs on one row at a time", c.ent.name+`("id").`+label+"(…)")
		}
		v := idVar(c.ent, mc, f)
		n.Input, n.ForEach, n.Many = c.node, &plan.Bind{Var: v, Field: f}, c.many
		supplied[v], supplied[f] = true, true
	}
	for _, a := range st.args {
		if a.val.kind == vUnion {
			_, _, err := p.val(a.val)
			return c, err
		}
		k := a.key.text
		prm := mc.Param(k)
		if prm == nil && !mc.OpenInput {
			return c, errAt(a.key.p, abi.CodeUnknownField, c.ent.name+"."+label+" has no parameter "+a.key.raw, listHint(k, "parameters of "+label, paramNames(mc)))
		}
		if supplied[k] {
			return c, errAt(a.key.p, abi.CodeType, "parameter "+k+" given twice", "")
		}
		supplied[k] = true
		if t, ok, err := p.interpolation(a.val, k); ok || err != nil {
			addTemplate(&n, t)
			if err != nil {
				return c, err
			}
			continue
		}
		lit, ref, err := p.val(a.val)
		if err != nil {
			return c, err
		}
		if ref != nil {
			ref.Var = k
			n.ArgRefs = append(n.ArgRefs, *ref)
			continue
		}
		if prm != nil {
			if err := p.checkValue(c.ent.cat, prm.ValueRef, lit, a.val.p, k); err != nil {
				return c, err
			}
		}
		args[k] = lit // an undeclared name is an open input's extra field
	}
	var missing, optional []string
	for _, pr := range mc.Parameters {
		switch {
		case pr.Required && !supplied[pr.Name] && !idBound(c.ent.cat, mc, pr.Name, supplied):
			missing = append(missing, pr.Name)
		case !pr.Required:
			optional = append(optional, pr.Name)
		}
	}
	if len(missing) > 0 {
		hint := "required: " + strings.Join(missing, ", ")
		if len(optional) > 0 {
			hint += "; optional: " + strings.Join(optional, ", ")
		}
		return c, errAt(st.p, abi.CodeType, c.ent.name+"."+label+" is missing "+strings.Join(missing, ", "), hint)
	}
	if len(args) > 0 {
		n.Args = args
	}
	id, err := p.add(n, st.p)
	return cur{node: id, ent: c.ent, many: n.Many, own: true}, err
}

func (p *planner) transform(c *cur, st *step) *abi.Error {
	if c.cols != nil {
		return p.colsTransform(c, st)
	}
	if c.ent.cat == nil {
		return errAt(st.p, abi.CodeType, "page(…) rows cannot take further steps", "")
	}
	var t plan.Transform
	x := c.ent
	checkField := func(f name) *abi.Error {
		if err := symbolMixup(f, true); err != nil && x.e.Fields[f.text] == nil {
			return err
		}
		if x.e.Fields[f.text] == nil {
			return errAt(f.p, abi.CodeUnknownField, x.name+" has no field "+f.raw, listHint(f.text, "fields of "+x.name, fieldNames(x.e)))
		}
		if c.proj != nil && !slices.Contains(c.proj, f.text) {
			return errAt(f.p, abi.CodeUnknownField, f.text+" was dropped by the projection ["+strings.Join(c.proj, ", ")+"]", "project after sorting and filtering")
		}
		return nil
	}
	switch st.kind {
	case stLimit:
		t = plan.Transform{Kind: plan.TLimit, N: st.n}
	case stSort:
		if err := checkField(*st.field); err != nil {
			return err
		}
		if err := p.hydrate(c, []string{st.field.text}, st.p); err != nil {
			return err
		}
		t = plan.Transform{Kind: plan.TSort, Field: st.field.text, Desc: st.desc}
	case stFilter:
		t = plan.Transform{Kind: plan.TFilter}
		for _, pr := range st.preds {
			if err := checkField(pr.field); err != nil {
				return err
			}
			lit, ref, err := p.val(pr.val)
			if err != nil {
				return err
			}
			pd, err := p.filterPred(x, evPred{pred: pr, lit: lit, ref: ref})
			if err != nil {
				return err
			}
			t.Preds = append(t.Preds, pd)
		}
		var fs []string
		for _, pd := range t.Preds {
			fs = append(fs, pd.Field)
		}
		if err := p.hydrate(c, fs, st.p); err != nil {
			return err
		}
	case stProject:
		for _, f := range st.fields {
			if err := checkField(f); err != nil {
				return err
			}
			if slices.Contains(t.Fields, f.text) {
				return errAt(f.p, abi.CodeType, f.text+" is listed twice in the projection", "")
			}
			t.Fields = append(t.Fields, f.text)
		}
		if err := p.hydrate(c, t.Fields, st.p); err != nil {
			return err
		}
		t.Kind = plan.TProject
		c.proj = t.Fields
	default:
		return p.computeStep(c, st)
	}
	if !c.own {
		n := baseNode(plan.OpTransform, x)
		n.Input, n.Many = c.node, c.many
		id, err := p.add(n, st.p)
		if err != nil {
			return err
		}
		c.node, c.own = id, true
	}
	n := &p.nodes[c.node]
	n.Transforms = append(n.Transforms, t)
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
		if v.get.form != srcGet {
			return nil, nil, errAt(v.p, abi.CodeType, "only Entity(id) can be used as a value", "pass the key fields as separate parameters")
		}
		if _, err := p.entity(v.get.name); err != nil {
			return nil, nil, err
		}
		return p.val(v.get.id)
	}
	id := v.ident
	if s := id.sym; s != nil {
		what := map[symbol.Kind]string{symbol.KindEntity: "an entity", symbol.KindMethod: "a method", symbol.KindSlot: "a field or parameter", symbol.KindRelation: "a relation"}[s.kind]
		return nil, nil, errAt(v.p, abi.CodeType, id.raw+" is a session symbol for "+what+" ("+id.text+"), not a value",
			`write the value itself; quote it if it is literal text: "`+id.raw+`"`)
	}
	b := p.labels[id.text]
	if b == nil {
		if v.field != nil {
			if at, ok := p.boundLater[id.text]; ok {
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
	if c.ent.e.Fields[f] == nil {
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

// checkValue type-checks a literal against a value domain, when declared.
func (p *planner) checkValue(cat *catalog.Catalog, ref string, v any, at pos, what string) *abi.Error {
	dom := cat.Values[ref]
	if dom == nil || v == nil {
		return nil
	}
	if err := p.checkTyped(cat, dom, v, at, what); err != nil {
		return err
	}
	if l, ok := v.([]any); ok {
		switch dom.Type {
		case "array", "multi_select":
		default:
			for _, it := range l {
				if err := p.checkScalar(dom, it, at, what); err != nil {
					return err
				}
			}
			return nil
		}
		if dom.Type == "multi_select" {
			for _, it := range l {
				if err := p.checkScalar(dom, it, at, what); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return p.checkScalar(dom, v, at, what)
}

func (p *planner) checkScalar(dom *catalog.Value, v any, at pos, what string) *abi.Error {
	if v == nil {
		return nil
	}
	bad := func(want, hint string) *abi.Error {
		return errAt(at, abi.CodeType, fmt.Sprintf("%s expects %s, got %s", what, want, describe(v)), hint)
	}
	switch dom.Type {
	case "integer":
		switch x := v.(type) {
		case int64:
		case float64:
			return bad("a whole number", "")
		case string:
			if !isInteger(x) {
				return bad("a whole number", "")
			}
		default:
			return bad("a whole number", "")
		}
	case "number":
		switch x := v.(type) {
		case int64, float64:
		case string:
			if !isNumber(x) {
				return bad("a number", "")
			}
		default:
			return bad("a number", "")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("true or false", "")
		}
	case "select", "multi_select":
		s, ok := v.(string)
		if len(dom.AllowedValues) > 0 && (!ok || !slices.Contains(dom.AllowedValues, s)) {
			return bad("one of its allowed values", listHint(fmt.Sprint(v), "allowed values", dom.AllowedValues))
		}
	}
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return allDigits(s)
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	a, b, ok := strings.Cut(s, ".")
	return allDigits(a) && (!ok || allDigits(b))
}
