package lang

import (
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Reads: the get, list, query and search steps of a plan, the arguments
// they bind, hydration of fields a list leaves out, and pushing predicates
// down to the backend.

// fetchGet plans the get a pending c stands for, and makes c its row.
func (p *planner) fetchGet(c *cur) *abi.Error {
	s := c.get
	gc := p.getCap(c.ent)
	if gc == nil {
		return errAt(s.p, abi.CodeUnknownMethod, c.ent.name+" cannot be read by id: it has no get capability", p.listHowTo(c.ent))
	}
	args, refs, supplied, err := p.keyArgs(c.ent, gc, gc, s)
	if err != nil {
		return err
	}
	if err := requireGet(c.ent, gc, supplied, s.p); err != nil {
		return err
	}
	if len(args) == 0 {
		args = nil
	}
	n := baseNode(plan.OpFetch, c.ent)
	n.Kind, n.Capability, n.Args, n.ArgRefs = gc.Kind, gc.Name, args, refs
	id, err := p.add(n, s.p)
	c.set(id, c.ent, false, true, nil)
	return err
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
		lit, isLit := args["id"]
		if isLit {
			// The id as it is sent (checkID: 42 for a text id is "42").
			id, err := p.checkID(x, lit, v.p)
			if err != nil {
				return err
			}
			args["id"] = id
		}
		if idf != "" && idf != "id" {
			supplied[idf] = true
			if usesVar(x.cat, run, idf) {
				if err := set(idf, v); err != nil {
					return err
				}
				if isLit {
					args[idf] = args["id"]
				}
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
	valid := validKeys(x, keys, compound, idf)
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

// validKeys lists the keys Entity(k=v, …) may name, in the order a hint
// offers them: the id (and the id field's own name) unless the key is
// compound, the entity's key vars, then the parameters of keys.
func validKeys(x ent, keys *catalog.Capability, compound bool, idf string) []string {
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
	return valid
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
	return exprVars(e, func(v string) bool { return v == name }, depth)
}

// exprVars reports whether e reads a variable match accepts: a var, an
// exists condition, or a format placeholder its own vars do not bind
// (cml's format falls back to the environment for those).
func exprVars(e *catalog.Expr, match func(string) bool, depth int) bool {
	if e == nil || depth > maxDepth {
		return false
	}
	if e.Type == catalog.ExprVar && match(e.Name) {
		return true
	}
	if e.Type == catalog.ExprFormat && slices.ContainsFunc(placeholders(e.Template), func(v string) bool { return e.Vars[v] == nil && match(v) }) {
		return true
	}
	if e.Cond != nil {
		if (e.Cond.Exists != "" && match(e.Cond.Exists)) || exprVars(e.Cond.Bool, match, depth+1) {
			return true
		}
		if eq := e.Cond.Equals; eq != nil && (exprVars(eq.Left, match, depth+1) || exprVars(eq.Right, match, depth+1)) {
			return true
		}
	}
	for _, kv := range e.Fields {
		if exprVars(kv.Value, match, depth+1) {
			return true
		}
	}
	for _, it := range e.Items {
		if exprVars(it, match, depth+1) {
			return true
		}
	}
	for _, v := range e.Vars {
		if exprVars(v, match, depth+1) {
			return true
		}
	}
	return exprVars(e.Then, match, depth+1) || exprVars(e.Else, match, depth+1) || exprVars(e.Expr, match, depth+1)
}

// placeholders are the names of a format template's "{name}" holes ("{{"
// and "}}" are literal braces), as cml's format reads them.
func placeholders(t string) []string {
	var out []string
	for i := 0; i < len(t); i++ {
		switch {
		case strings.HasPrefix(t[i:], "{{"), strings.HasPrefix(t[i:], "}}"):
			i++
		case t[i] == '{':
			end := strings.IndexByte(t[i+1:], '}')
			if end < 0 {
				return out
			}
			out = append(out, t[i+1:i+1+end])
			i += end + 1
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type evPred struct {
	pred
	lit any
	ref *plan.ArgRef
}

// read plans a query or search: it picks the capability that can run with
// the predicates given and pushes down as many equalities as possible; the
// rest are applied by the host. The read's rows become c.
func (p *planner) read(c *cur, x ent, kind string, preds []pred, phrase *value, at pos) *abi.Error {
	var caps []*catalog.Capability
	for _, cp := range x.cat.CapabilitiesOf(x.name) {
		if cp.Kind == kind {
			caps = append(caps, cp)
		}
	}
	if len(caps) == 0 {
		what := "query"
		if kind == catalog.KindSearch {
			what = "search"
		}
		return errAt(at, abi.CodeUnknownMethod, x.name+" has no "+what+" capability", p.listHowTo(x))
	}
	return p.readWith(c, x, caps, preds, phrase, at)
}

// readWith reads x through the best of caps for preds and phrase into c.
func (p *planner) readWith(c *cur, x ent, caps []*catalog.Capability, preds []pred, phrase *value, at pos) *abi.Error {
	ev := p.pa.evs.take(len(preds))
	for i, pr := range preds {
		lit, ref, err := p.val(pr.val)
		if err != nil {
			return err
		}
		ev[i] = evPred{pred: pr, lit: lit, ref: ref}
	}
	best, err := p.pickRead(x, caps, ev, len(preds) > 0, phrase, at)
	if err != nil {
		return err
	}
	n := baseNode(plan.OpFetch, x)
	n.Kind, n.Capability, n.Many = best.Kind, best.Name, true
	if err := p.readArgs(&n, x, best, ev, phrase); err != nil {
		return err
	}
	return p.finishRead(c, n, x, best, at)
}

// pickRead chooses the capability among caps that can take the most
// predicates as parameters and misses no required one, or explains what is
// missing.
func (p *planner) pickRead(x ent, caps []*catalog.Capability, ev []evPred, hasPreds bool, phrase *value, at pos) (*catalog.Capability, *abi.Error) {
	var best, fewest, phraseless *catalog.Capability
	bestScore, fewestMissing := -1, 0
	var fewestList []string
	// supplied is a set of parameter names; a capability has a handful, so
	// a slice scan beats a map (string hashing is slow in the Wasm guest).
	var supplied []string
	for _, c := range caps {
		supplied = supplied[:0]
		if phrase != nil {
			pp := c.PhraseParam()
			if pp == "" {
				// Nothing would carry the phrase, and running the search
				// without it would answer a different question.
				phraseless = c
				continue
			}
			supplied = append(supplied, pp)
		}
		score := 0
		for _, e := range ev {
			if pushable(e) && c.Param(e.field.text) != nil && !slices.Contains(supplied, e.field.text) {
				supplied = append(supplied, e.field.text)
				score++
			}
		}
		var missing []string
		for _, pr := range c.Parameters {
			if pr.Required && !slices.Contains(supplied, pr.Name) {
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
		return nil, errAt(phrase.p, abi.CodeCatalog, x.name+" search "+phraseless.Name+" declares no parameter to carry the search phrase",
			"the phrase cannot be sent; filter on the host instead, e.g. "+x.name+".filter{field~\"words\"}, or "+p.listHowTo(x))
	}
	if best == nil {
		if !hasPreds && phrase == nil {
			return nil, errAt(at, abi.CodeType, "listing every "+x.name+" needs "+strings.Join(fewestList, ", "),
				p.listHowTo(x))
		}
		return nil, errAt(at, abi.CodeType, x.name+" "+fewest.Kind+" needs "+strings.Join(fewestList, ", ")+" ("+fewest.Name+")",
			"add "+strings.Join(fewestList, "=…, ")+"=… to the braces; "+p.listHowTo(x))
	}
	return best, nil
}

// readArgs binds the search phrase and the pushable predicates as the
// chosen capability's arguments; the rest become host filters.
func (p *planner) readArgs(n *plan.Node, x ent, best *catalog.Capability, ev []evPred, phrase *value) *abi.Error {
	args := map[string]any{}
	if phrase != nil {
		lit, ref, err := p.val(phrase)
		if err != nil {
			return err
		}
		if ref != nil {
			return errAt(phrase.p, abi.CodeType, "a search phrase must be literal text", `write Entity~"words"`)
		}
		if text, ok := lit.(string); ok && strings.TrimSpace(text) == "" {
			return errAt(phrase.p, abi.CodeType, "a search needs words: "+x.name+`~""`+" names none",
				`write `+x.name+`~"some words", or `+p.listHowTo(x))
		}
		args[best.PhraseParam()] = lit
	}
	for _, e := range ev {
		prm := best.Param(e.field.text)
		_, taken := args[e.field.text]
		taken = taken || hasRef(n.ArgRefs, e.field.text)
		if pushable(e) && prm != nil && taken {
			return errAt(e.p, abi.CodeType, e.field.text+" is given twice", "pass one value, or a list if the API accepts several")
		}
		if pushable(e) && prm != nil {
			if e.ref != nil {
				r := *e.ref
				r.Var = e.field.text
				g, err := p.nonNullGuard(r, e.val.p)
				if err != nil {
					return err
				}
				r.Node = g
				n.ArgRefs = append(n.ArgRefs, r)
				continue
			}
			if err := p.checkValue(x.cat, prm.ValueRef, e.lit, e.val.p, e.field.text); err != nil {
				return err
			}
			args[e.field.text] = e.lit
			continue
		}
		if e.op == "=" && e.lit == nil && e.ref == nil && prm != nil && x.e.FieldNamed(e.field.text) == nil {
			return errAt(e.val.p, abi.CodeType, e.field.text+"=null cannot be sent: a parameter set to null is left out of the request, and "+
				e.field.text+" is not a field of "+x.name+" the host could filter on",
				"drop "+e.field.text+" to list without it, or give it a value")
		}
		pd, err := p.filterPred(x, e)
		if err != nil {
			return err
		}
		n.Filters = append(n.Filters, pd)
	}
	if len(args) > 0 {
		n.Args = args
	}
	return nil
}

// finishRead adds the read node; host predicates on fields the list does
// not carry wait for hydration and filter after it.
func (p *planner) finishRead(c *cur, n plan.Node, x ent, best *catalog.Capability, at pos) *abi.Error {
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
	c.set(id, x, true, true, have)
	if err != nil || len(late) == 0 {
		return err
	}
	var fs []string
	for _, pd := range late {
		fs = append(fs, pd.Field)
	}
	if err := p.hydrate(c, fs, at); err != nil {
		return err
	}
	last := &p.nodes[c.node]
	last.Transforms = append(last.Transforms, plan.Transform{Kind: plan.TFilter, Preds: late})
	return nil
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
	gc := p.getCap(c.ent)
	idf := idField(c.ent.e)
	if gc == nil || idf == "" || !containsStr(c.have, idf) {
		return nil
	}
	gets := provided(gc)
	var missing []string
	for _, f := range fields {
		if c.ent.e.FieldNamed(f) == nil || containsStr(c.have, f) || containsStr(missing, f) {
			continue
		}
		if gets == nil || containsStr(gets, f) {
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
	f := x.e.FieldNamed(e.field.text)
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
	if err := hostComparable(e.field, e.op, e.lit, e.val.p); err != nil {
		return plan.Pred{}, err
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
