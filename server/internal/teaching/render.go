package teaching

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Header is the TSV header line of the teaching table.
const Header = "plasm_expr\tMeaning"

// sep joins Meaning fragments; fragments are guidance, never syntax.
const sep = " · "

// Row is one teaching row: a program shape and what it means.
type Row struct {
	Expr    string
	Meaning string
}

// String renders the row as one TSV line (without newline).
func (r Row) String() string { return r.Expr + "\t" + r.Meaning }

// RenderFirst renders a session's first teaching text: the preamble, a
// blank line, the header and the wave's rows. Use it for the first wave and
// whenever a new symbol space replaces an old one.
func RenderFirst(m *symbol.Map, w Wave) string {
	var b strings.Builder
	b.WriteString(preamble)
	b.WriteString(moreForms(w))
	b.WriteString("\n")
	b.WriteString(Header)
	b.WriteString("\n")
	for _, r := range Rows(m, w) {
		b.WriteString(r.String())
		b.WriteString("\n")
	}
	return b.String()
}

// RenderDelta renders a later wave: its rows only, one per line. An
// unchanged wave renders as "".
func RenderDelta(m *symbol.Map, w Wave) string {
	var b strings.Builder
	for _, r := range Rows(m, w) {
		b.WriteString(r.String())
		b.WriteString("\n")
	}
	return b.String()
}

// Rows lists the teaching rows of a wave: new value domains, new slots, then
// one block per entity the wave touched, in symbol order. The first row of
// each block names the entity's catalog and wire name, so agents can tell
// colliding names (tracker:Issue, kanban:Issue) apart even in delta waves.
func Rows(m *symbol.Map, w Wave) []Row {
	if m == nil || w.Kind == Unchanged {
		return nil
	}
	r := &renderer{m: m, w: w, cats: w.catalogs, seen: map[string]bool{}}
	r.exposed = map[capKey]bool{}
	for _, c := range w.Exposure.Capabilities {
		r.exposed[capKey{c.EntryID, c.Capability}] = true
	}
	r.seeded = map[entityKey]bool{}
	for _, e := range w.Exposure.Entities {
		r.seeded[entityKey{e.EntryID, e.Entity}] = e.Seeded
	}
	for _, n := range w.Delta.Values {
		r.valueRow(n)
	}
	for _, n := range w.Delta.Slots {
		r.slotRow(n)
	}
	for _, k := range r.touched() {
		r.entityBlock(k)
	}
	return r.rows
}

type renderer struct {
	m       *symbol.Map
	w       Wave
	cats    map[string]*catalog.Catalog
	exposed map[capKey]bool
	seeded  map[entityKey]bool
	seen    map[string]bool
	rows    []Row
	// heading is prepended to the next row emitted, then cleared.
	heading string
}

func (r *renderer) emit(expr string, fragments ...string) {
	expr = oneLine(expr)
	if r.seen[expr] {
		return
	}
	r.seen[expr] = true
	var parts []string
	if r.heading != "" {
		parts = append(parts, r.heading)
		r.heading = ""
	}
	for _, f := range fragments {
		if f = oneLine(f); f != "" {
			parts = append(parts, f)
		}
	}
	r.rows = append(r.rows, Row{Expr: expr, Meaning: strings.Join(parts, sep)})
}

// touched lists the entities with something new in the wave, by e# number.
func (r *renderer) touched() []entityKey {
	set := map[entityKey]bool{}
	for _, e := range r.w.Added.Entities {
		set[entityKey{e.EntryID, e.Entity}] = true
	}
	for _, c := range r.w.Added.Capabilities {
		if cp := r.capability(c.EntryID, c.Capability); cp != nil {
			set[entityKey{c.EntryID, cp.Entity}] = true
		}
	}
	for _, rel := range r.w.Added.Relations {
		set[entityKey{rel.EntryID, rel.Entity}] = true
	}
	out := make([]entityKey, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b entityKey) int {
		return cmp.Or(cmp.Compare(r.entityNum(a), r.entityNum(b)), compareEntityKey(a, b))
	})
	return out
}

func (r *renderer) entityNum(k entityKey) int {
	_, n := symbol.Parse(r.m.EntitySym(k.entry, k.name))
	return n
}

func (r *renderer) capability(entry, name string) *catalog.Capability {
	if cat := r.cats[entry]; cat != nil {
		return cat.Capabilities[name]
	}
	return nil
}

// Symbol lookups fall back to wire names, which programs also accept, so a
// map that somehow lacks a name still yields runnable rows.

func (r *renderer) entSym(entry, name string) string {
	if s := r.m.EntitySym(entry, name); s != "" {
		return s
	}
	return name
}

func (r *renderer) slotSym(entry, name, valueRef string) string {
	if s := r.m.SlotSym(entry, name, valueRef); s != "" {
		return s
	}
	return name
}

func (r *renderer) paramSym(entry string, p catalog.Parameter) string {
	return r.slotSym(entry, p.Name, p.ValueRef)
}

func (r *renderer) valueRow(n int) {
	v, ok := r.m.ValueAt(n)
	if !ok {
		return
	}
	cat := r.cats[v.EntryID]
	if cat == nil || cat.Values[v.Key] == nil {
		return
	}
	val := cat.Values[v.Key]
	frags := []string{r.valueType(cat, val)}
	if len(val.AllowedValues) > 0 {
		frags = append(frags, allowedList(val.AllowedValues))
	}
	frags = append(frags, clean(val.Description))
	r.emit(symbol.Name(symbol.KindValue, n), frags...)
}

// maxAllowed caps how many select options a value row lists; enumerations
// of hundreds of codes would dominate the table.
const maxAllowed = 24

func allowedList(vals []string) string {
	if len(vals) <= maxAllowed {
		return strings.Join(vals, ", ")
	}
	return strings.Join(vals[:maxAllowed], ", ") + ", … (" + strconv.Itoa(len(vals)-maxAllowed) + " more)"
}

func (r *renderer) valueType(cat *catalog.Catalog, v *catalog.Value) string {
	switch v.Type {
	case "string":
		if v.StringSemantics != "" && v.StringSemantics != "short" {
			return "str (" + v.StringSemantics + ")"
		}
		return "str"
	case "integer":
		return "int"
	case "number":
		return "num"
	case "boolean":
		return "bool"
	case "date":
		if v.ValueFormat != "" {
			return "date (" + v.ValueFormat + ")"
		}
		return "date"
	case "array":
		if s := r.m.ValueSym(cat.EntryID, v.ItemsRef); s != "" {
			return "array of " + s
		}
		return "array"
	case "entity_ref":
		if s := r.m.EntitySym(cat.EntryID, v.Target); s != "" {
			return "ref " + s
		}
		if v.Target != "" {
			return "ref " + cat.EntryID + ":" + v.Target
		}
		return "ref"
	}
	return v.Type
}

func (r *renderer) slotRow(n int) {
	s, ok := r.m.Slot(n)
	if !ok {
		return
	}
	typ := s.ValueRef
	if vs := r.m.ValueSym(s.EntryID, s.ValueRef); vs != "" {
		typ = vs
	}
	r.emit(symbol.Name(symbol.KindSlot, n), typ, s.Name)
}

func (r *renderer) entityBlock(k entityKey) {
	cat := r.cats[k.entry]
	if cat == nil || cat.Entities[k.name] == nil {
		return
	}
	ent := cat.Entities[k.name]
	e := r.entSym(k.entry, k.name)
	r.heading = oneLine(k.entry + ":" + k.name)
	if !r.seeded[k] {
		r.heading += sep + "read only"
	}
	isNew := slices.Contains(r.w.Delta.Entities, r.entityNum(k))

	var added []*catalog.Capability
	for _, c := range r.w.Added.Capabilities {
		if cp := r.capability(c.EntryID, c.Capability); c.EntryID == k.entry && cp != nil && cp.Entity == k.name {
			added = append(added, cp)
		}
	}
	// Query-all first, then get, then scoped queries, then search: the
	// order an agent reaches for them.
	slices.SortStableFunc(added, func(a, b *catalog.Capability) int {
		return cmp.Or(cmp.Compare(capRank(a), capRank(b)), cmp.Compare(a.Name, b.Name))
	})
	var mutators []*catalog.Capability
	for _, cp := range added {
		switch {
		case cp.Kind == catalog.KindQuery:
			r.queryRow(cat, e, cp)
		case cp.Kind == catalog.KindGet:
			r.emit(r.receiver(cat, ent), "returns "+e, "get by id")
		case cp.Kind == catalog.KindSingleton && cat.FirstOfKind(cp.Entity, catalog.KindQuery) == nil:
			// A bare singleton entity reads its one row (no id).
			r.emit(e, "returns "+e, "the one row (no id)")
		case cp.Kind == catalog.KindSearch:
			r.searchRow(cat, e, cp)
		case isMutator(cp):
			mutators = append(mutators, cp)
		}
	}
	if isNew {
		r.projectionRow(cat, ent, e)
	}
	for _, rel := range r.w.Added.Relations {
		if rel.EntryID == k.entry && rel.Entity == k.name {
			r.relationRow(cat, ent, e, rel)
		}
	}
	slices.SortFunc(mutators, func(a, b *catalog.Capability) int {
		return cmp.Compare(r.methodNum(cat, a), r.methodNum(cat, b))
	})
	for _, cp := range mutators {
		r.mutatorRow(cat, ent, e, cp)
	}
	r.heading = ""
}

func capRank(cp *catalog.Capability) int {
	switch cp.Kind {
	case catalog.KindQuery:
		if len(requiredParams(cp)) == 0 {
			return 0
		}
		return 2
	case catalog.KindGet, catalog.KindSingleton:
		return 1
	case catalog.KindSearch:
		return 3
	}
	return 4
}

func (r *renderer) methodNum(cat *catalog.Catalog, cp *catalog.Capability) int {
	_, n := symbol.Parse(r.m.MethodSym(cat.EntryID, cp.Entity, cp.Name))
	return n
}

func requiredParams(cp *catalog.Capability) []catalog.Parameter {
	var out []catalog.Parameter
	for _, p := range cp.Parameters {
		if p.Required {
			out = append(out, p)
		}
	}
	return out
}

// fills renders required parameters as "p1=$, p2=$".
func (r *renderer) fills(entry string, ps []catalog.Parameter) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = r.paramSym(entry, p) + "=$"
	}
	return strings.Join(parts, ", ")
}

// optional renders the "optional params: …" fragment, or "".
func (r *renderer) optional(entry string, ps []catalog.Parameter) string {
	if len(ps) == 0 {
		return ""
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = r.paramSym(entry, p)
	}
	return "optional params: " + strings.Join(parts, ", ")
}

func splitParams(cp *catalog.Capability, skip func(catalog.Parameter) bool) (req, opt []catalog.Parameter) {
	for _, p := range cp.Parameters {
		if skip != nil && skip(p) {
			continue
		}
		if p.Required {
			req = append(req, p)
		} else {
			opt = append(opt, p)
		}
	}
	return req, opt
}

func (r *renderer) queryRow(cat *catalog.Catalog, e string, cp *catalog.Capability) {
	req, opt := splitParams(cp, nil)
	if cat.ViewServing(cp.Name) != nil {
		// A view composes one row from its scope, however it is read.
		expr := e
		if len(req) > 0 {
			expr += "{" + r.fills(cat.EntryID, req) + "}"
		}
		r.emit(expr, "returns "+e, "view", r.optional(cat.EntryID, opt))
		return
	}
	if len(req) == 0 {
		r.emit(e, "returns ["+e+"]", "query all", r.optional(cat.EntryID, opt))
		return
	}
	r.emit(e+"{"+r.fills(cat.EntryID, req)+"}", "returns ["+e+"]", r.optional(cat.EntryID, opt))
}

// searchExpr writes a search with the phrase in the parameter the planner
// places it in (Capability.PhraseParam) and the other required ones filled.
func (r *renderer) searchExpr(cat *catalog.Catalog, e string, cp *catalog.Capability) (string, []catalog.Parameter) {
	sp := cp.PhraseParam()
	req, opt := splitParams(cp, func(p catalog.Parameter) bool { return p.Name == sp })
	expr := e + `~"text"`
	if len(req) > 0 {
		expr += "{" + r.fills(cat.EntryID, req) + "}"
	}
	return expr, opt
}

func (r *renderer) searchRow(cat *catalog.Catalog, e string, cp *catalog.Capability) {
	expr, opt := r.searchExpr(cat, e, cp)
	r.emit(expr, "returns ["+e+"]", "search", r.optional(cat.EntryID, opt))
}

// receiver is the one-row form used for get and as the receiver of update,
// delete and action. It is written keyed, e1(p6=$), rather than e1(p6):
// the planner reads a bare slot symbol in value position as a mistake, and
// the keyed form tells the agent both which slot is the id and where the
// value goes. Compound keys spell each key the same way.
func (r *renderer) receiver(cat *catalog.Catalog, ent *catalog.Entity) string {
	e := r.entSym(cat.EntryID, ent.Name)
	g := getCap(cat, ent)
	if g == nil && cat.FirstOfKind(ent.Name, catalog.KindQuery) == nil && cat.FirstOfKind(ent.Name, catalog.KindSingleton) != nil {
		return e // the one row of a singleton entity is the bare entity
	}
	var parts []string
	switch {
	// A compound key is named in full even when id_field is also set
	// (Plasm catalogs declare both): the planner needs every key var.
	case ent.IDField != "" && len(ent.KeyVars) < 2:
		f := ent.Fields[ent.IDField]
		if f == nil {
			return e + "($)"
		}
		parts = append(parts, r.slotSym(cat.EntryID, f.Name, f.ValueRef)+"=$")
	case len(ent.KeyVars) > 0:
		for _, kv := range ent.KeyVars {
			parts = append(parts, r.keySlot(cat, ent, kv)+"=$")
		}
	default:
		return e + "($)"
	}
	// Required inputs of the get beyond the row's identity (a parent scope
	// such as teamId) are keys too.
	if g != nil {
		for _, p := range g.Parameters {
			if receiverKeys(cat, ent)[p.Name] {
				parts = append(parts, r.paramSym(cat.EntryID, p)+"=$")
			}
		}
	}
	return e + "(" + strings.Join(parts, ", ") + ")"
}

// receiverKeys are the get's required parameters that the receiver names
// besides the row's identity; a method called on the receiver gets them
// from there, so its row does not ask for them again.
func receiverKeys(cat *catalog.Catalog, ent *catalog.Entity) map[string]bool {
	g := getCap(cat, ent)
	if g == nil {
		return nil
	}
	var idVar string
	if m := cat.Mappings[g.Name]; m != nil {
		idVar = m.IDVar
	}
	keys := map[string]bool{}
	for _, p := range g.Parameters {
		if p.Required && !identity(ent, p) && p.Name != idVar {
			keys[p.Name] = true
		}
	}
	return keys
}

// keySlot finds the slot a key variable is taught under: the field of that
// name, else the get capability's parameter of that name.
func (r *renderer) keySlot(cat *catalog.Catalog, ent *catalog.Entity, kv string) string {
	if f := ent.Fields[kv]; f != nil {
		return r.slotSym(cat.EntryID, f.Name, f.ValueRef)
	}
	if g := getCap(cat, ent); g != nil {
		if p := g.Param(kv); p != nil {
			return r.paramSym(cat.EntryID, *p)
		}
	}
	return kv
}

// source is the simplest exposed read of an entity, used before a hop or a
// projection: get when exposed (one row), else query all, a scoped query or
// a search (many rows). ok is false when the entity has no exposed read.
func (r *renderer) source(cat *catalog.Catalog, ent *catalog.Entity) (expr string, many, ok bool) {
	e := r.entSym(cat.EntryID, ent.Name)
	if g := getCap(cat, ent); g != nil && r.exposed[capKey{cat.EntryID, g.Name}] {
		return r.receiver(cat, ent), false, true
	}
	var scoped, search string
	for _, cp := range cat.CapabilitiesOf(ent.Name) {
		if !r.exposed[capKey{cat.EntryID, cp.Name}] {
			continue
		}
		switch cp.Kind {
		case catalog.KindQuery:
			req := requiredParams(cp)
			if len(req) == 0 {
				return e, true, true
			}
			if cat.ViewServing(cp.Name) != nil {
				return e + "{" + r.fills(cat.EntryID, req) + "}", false, true
			}
			if scoped == "" {
				scoped = e + "{" + r.fills(cat.EntryID, req) + "}"
			}
		case catalog.KindSearch:
			if search == "" {
				search, _ = r.searchExpr(cat, e, cp)
			}
		}
	}
	if scoped != "" {
		return scoped, true, true
	}
	if search != "" {
		return search, true, true
	}
	return "", false, false
}

func (r *renderer) projectionRow(cat *catalog.Catalog, ent *catalog.Entity, e string) {
	var slots []string
	for _, fn := range fieldNames(ent) {
		if f := ent.Fields[fn]; f != nil {
			slots = append(slots, r.slotSym(cat.EntryID, fn, f.ValueRef))
		}
	}
	if len(slots) == 0 {
		return
	}
	src, many, ok := r.source(cat, ent)
	if !ok {
		// An entity without reads of its own is reachable only through a
		// relation of a seeded entity; teach the projection on that hop.
		src, many, ok = r.viaRelation(cat, ent)
		if !ok {
			return
		}
	}
	ret := e
	if many {
		ret = "[" + e + "]"
	}
	r.emit(src+"["+strings.Join(slots, ",")+"]", "returns "+ret, "projection", clean(ent.Description))
}

func (r *renderer) viaRelation(cat *catalog.Catalog, ent *catalog.Entity) (string, bool, bool) {
	for _, rel := range r.w.Exposure.Relations {
		if rel.EntryID != cat.EntryID {
			continue
		}
		parent := cat.Entities[rel.Entity]
		if parent == nil || parent.Relations[rel.Name] == nil || parent.Relations[rel.Name].Target != ent.Name {
			continue
		}
		src, many, ok := r.source(cat, parent)
		if !ok {
			continue
		}
		rs := r.m.RelationSym(rel.EntryID, rel.Entity, rel.Name)
		if rs == "" {
			rs = rel.Name
		}
		return src + "." + rs, many || parent.Relations[rel.Name].Cardinality == "many", true
	}
	return "", false, false
}

func (r *renderer) relationRow(cat *catalog.Catalog, ent *catalog.Entity, e string, rel symbol.Relation) {
	cr := ent.Relations[rel.Name]
	if cr == nil {
		return
	}
	src, _, ok := r.source(cat, ent)
	if !ok {
		src = r.receiver(cat, ent)
	}
	rs := r.m.RelationSym(rel.EntryID, rel.Entity, rel.Name)
	if rs == "" {
		rs = rel.Name
	}
	target := r.entSym(cat.EntryID, cr.Target)
	if cr.Cardinality == "many" {
		target = "[" + target + "]"
	}
	r.emit(src+"."+rs, "relation "+e+" → "+target, clean(cr.Description))
}

// identity reports whether a parameter is filled by the receiver row (its id
// or key) rather than by an argument.
func identity(ent *catalog.Entity, p catalog.Parameter) bool {
	return p.Name == "id" || p.Name == ent.IDField || slices.Contains(ent.KeyVars, p.Name)
}

func (r *renderer) mutatorRow(cat *catalog.Catalog, ent *catalog.Entity, e string, cp *catalog.Capability) {
	ms := r.m.MethodSym(cat.EntryID, cp.Entity, cp.Name)
	if ms == "" {
		ms = catalog.MethodLabel(cp)
	}
	var recv string
	var req, opt []catalog.Parameter
	if cp.Kind == catalog.KindCreate {
		recv = e
		req, opt = splitParams(cp, nil)
	} else {
		recv = r.receiver(cat, ent)
		keys := receiverKeys(cat, ent)
		req, opt = splitParams(cp, func(p catalog.Parameter) bool { return identity(ent, p) || keys[p.Name] })
	}
	args := r.fills(cat.EntryID, req)
	if len(opt) > 0 {
		if args != "" {
			args += ", "
		}
		args += ".."
	}
	var frags []string
	switch {
	case cp.Output != nil:
		frags = append(frags, "returns no rows")
	case cp.Kind == catalog.KindDelete:
		frags = append(frags, "returns nothing")
	default:
		frags = append(frags, "returns "+e)
	}
	kind := cp.Kind
	if cp.Kind == catalog.KindAction {
		kind = "action " + catalog.MethodLabel(cp)
	}
	frags = append(frags, kind, r.optional(cat.EntryID, opt), clean(cp.Description))
	if cp.Output != nil {
		frags = append(frags, clean(cp.Output.Description))
	}
	r.emit(recv+"."+ms+"("+args+")", frags...)
}

// maxDescription bounds one description fragment, in runes; catalog
// descriptions can be paragraphs and the table is paid for in tokens.
const maxDescription = 160

// clean makes catalog prose fit one Meaning fragment.
func clean(s string) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= maxDescription {
		return s
	}
	rs := []rune(s)[:maxDescription]
	cut := string(rs)
	if i := strings.LastIndexByte(cut, ' '); i > maxDescription/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.") + "…"
}

// oneLine collapses all whitespace (tabs and newlines included) to single
// spaces: a row must hold exactly one tab.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
