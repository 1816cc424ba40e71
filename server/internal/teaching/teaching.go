// Package teaching owns symbol exposure waves and the TSV teaching text.
//
// A session starts with an empty symbol.Map and an empty Exposure. Each
// plasm_context call runs Expose with the session's seeds and intent: it
// decides which entities, capabilities and relations become visible, appends
// their symbols to the map (existing symbols never change) and returns a Wave
// describing only what is new. RenderFirst turns the first wave into the full
// teaching text (preamble, header, rows); RenderDelta turns later waves into
// rows only. The map that rendered the rows is the map the guest uses to
// expand programs, so every row means exactly what it says.
//
// Exposure rules (seed 002, FocusSpec::SeedsExact): a wave exposes exactly
// its seeded entities. A seeded (entry, entity) always teaches its read
// surface (query, search, get) and its relations; its create/update/delete/
// action capabilities appear only when the intent's words overlap the
// capability or the caller ranked it. A relation's target is not exposed by
// the relation: its row names the target by wire name and still runs, and
// the target gets its e# when a later wave seeds it, leaving every earlier
// symbol as it was.
package teaching

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Seed names an entity the caller wants taught.
type Seed struct {
	EntryID string `json:"entry_id"`
	Entity  string `json:"entity"`
}

// Request is one plasm_context call as Expose sees it.
type Request struct {
	// Catalogs are the tenant's loaded catalogs by entry id; seeds and the
	// prior exposure must name catalogs found here.
	Catalogs map[string]*catalog.Catalog
	Seeds    []Seed
	// Intent is the session's intent sentence; its words gate mutators.
	Intent string
	// Ranked are capability names the caller wants exposed on seeded
	// entities regardless of intent overlap.
	Ranked []string
}

// Exposure is a session's cumulative exposure state. It is a plain value
// (no pointers) so a session store can serialise it next to the symbol map.
type Exposure struct {
	// Entities in symbol order (e1, e2, …).
	Entities []ExposedEntity `json:"entities,omitempty"`
	// Capabilities sorted by (entry_id, capability).
	Capabilities []ExposedCapability `json:"capabilities,omitempty"`
	// Relations in symbol order (r1, r2, …).
	Relations []symbol.Relation `json:"relations,omitempty"`
}

// ExposedEntity is one visible entity. Seeded entities teach mutators and
// relations; the others were reached through a relation and are read-only.
type ExposedEntity struct {
	EntryID string `json:"entry_id"`
	Entity  string `json:"entity"`
	Seeded  bool   `json:"seeded,omitempty"`
}

// ExposedCapability is one visible capability.
type ExposedCapability struct {
	EntryID    string `json:"entry_id"`
	Capability string `json:"capability"`
}

// Entries lists the exposure's catalogs in order of first exposure: the
// order a planner should use to resolve bare entity names.
func (x Exposure) Entries() []string {
	var out []string
	for _, e := range x.Entities {
		if !slices.Contains(out, e.EntryID) {
			out = append(out, e.EntryID)
		}
	}
	return out
}

// Clone returns a copy sharing no memory with x.
func (x Exposure) Clone() Exposure {
	return Exposure{
		Entities:     slices.Clone(x.Entities),
		Capabilities: slices.Clone(x.Capabilities),
		Relations:    slices.Clone(x.Relations),
	}
}

// WaveKind says how a wave relates to the session so far.
type WaveKind int

// Wave kinds.
const (
	// Unchanged: nothing new became visible; callers answer with one line.
	Unchanged WaveKind = iota
	// First: the session had no exposure before this wave.
	First
	// Expand: more of an already-loaded catalog became visible.
	Expand
	// Federate: a catalog new to the session became visible.
	Federate
)

func (k WaveKind) String() string {
	switch k {
	case First:
		return "first"
	case Expand:
		return "expand"
	case Federate:
		return "federate"
	}
	return "unchanged"
}

// Wave is the outcome of one Expose call.
type Wave struct {
	Kind WaveKind
	// Exposure is the session state after the wave; store it with the map.
	Exposure Exposure
	// Added is what this wave made visible: entities that are new or newly
	// seeded, capabilities and relations that are new.
	Added Exposure
	// Delta lists the symbols this wave allocated.
	Delta symbol.Delta

	catalogs map[string]*catalog.Catalog
}

// Empty reports whether the wave teaches nothing new.
func (w Wave) Empty() bool { return w.Kind == Unchanged }

// Errors callers branch on. Seed problems come wrapped in *SeedError.
var (
	ErrNoSeeds        = errors.New("teaching: no seeds")
	ErrUnknownCatalog = errors.New("unknown catalog")
	ErrUnknownEntity  = errors.New("unknown entity")
	// ErrState means the stored exposure does not match the symbol map or
	// the loaded catalogs (a catalog was removed, or state was corrupted);
	// the session cannot grow and should be reopened.
	ErrState = errors.New("teaching: exposure state does not match symbol map or catalogs")
)

// SeedError reports a seed that names no exposable entity.
type SeedError struct {
	Seed Seed
	Err  error // ErrUnknownCatalog or ErrUnknownEntity
}

func (e *SeedError) Error() string {
	return fmt.Sprintf("teaching: seed %s:%s: %v", e.Seed.EntryID, e.Seed.Entity, e.Err)
}

func (e *SeedError) Unwrap() error { return e.Err }

type entityKey struct{ entry, name string }

type capKey struct{ entry, name string }

// Expose applies one wave of seeds to the session: it computes what becomes
// visible, appends the new symbols to m, and returns the wave. prev is the
// exposure returned by the previous wave (zero for a new session); it is not
// modified. On error m is left unchanged.
func Expose(m *symbol.Map, prev Exposure, req Request) (Wave, error) {
	if m == nil {
		return Wave{}, fmt.Errorf("%w: nil symbol map", ErrState)
	}
	if len(req.Seeds) == 0 {
		return Wave{}, ErrNoSeeds
	}
	for _, s := range req.Seeds {
		if err := checkSeed(req.Catalogs, s); err != nil {
			return Wave{}, err
		}
	}
	if err := checkState(m, prev, req.Catalogs); err != nil {
		return Wave{}, err
	}

	st := newExposureSet(prev)
	for _, s := range req.Seeds {
		st.seed(s.EntryID, s.Entity)
	}
	intent := wordSet(req.Intent)
	ranked := map[string]bool{}
	for _, r := range req.Ranked {
		ranked[r] = true
	}

	// Seeded entities first, in a fixed order, so that which entity
	// "reaches" another never depends on map iteration.
	seeded := st.keys(true)
	for _, k := range seeded {
		cat := req.Catalogs[k.entry]
		ent := cat.Entities[k.name]
		st.addReads(cat, ent)
		for _, cp := range cat.CapabilitiesOf(ent.Name) {
			if isMutator(cp) && (ranked[cp.Name] || overlaps(intent, cat, ent, cp)) {
				st.addCap(cat.EntryID, cp.Name)
			}
		}
		for _, rn := range relationNames(ent) {
			rel := ent.Relations[rn]
			if rel == nil {
				continue
			}
			target := cat.Entities[rel.Target]
			if target == nil || target.Abstract || !materializable(cat, ent, rel) {
				continue
			}
			// The target is not exposed (SeedsExact): the relation row
			// names it by its wire name, the hop runs on the catalog, and
			// the target gets an e# only when a later wave seeds it.
			st.addRel(symbol.Relation{EntryID: cat.EntryID, Entity: ent.Name, Name: rn})
		}
	}
	// Entities exposed unseeded by an older wave (before SeedsExact) keep
	// their read surface.
	for _, k := range st.keys(false) {
		cat := req.Catalogs[k.entry]
		st.addReads(cat, cat.Entities[k.name])
	}

	delta := m.Add(st.symbolWave(req.Catalogs))
	w := Wave{Delta: delta, catalogs: req.Catalogs}
	w.Exposure, w.Added = st.result(m, prev)
	w.Kind = waveKind(prev, w.Added)
	return w, nil
}

func checkSeed(cats map[string]*catalog.Catalog, s Seed) error {
	cat := cats[s.EntryID]
	if cat == nil {
		return &SeedError{Seed: s, Err: ErrUnknownCatalog}
	}
	ent := cat.Entities[s.Entity]
	if ent == nil || ent.Abstract {
		return &SeedError{Seed: s, Err: ErrUnknownEntity}
	}
	return nil
}

func checkState(m *symbol.Map, prev Exposure, cats map[string]*catalog.Catalog) error {
	for _, e := range prev.Entities {
		cat := cats[e.EntryID]
		if cat == nil || cat.Entities[e.Entity] == nil {
			return fmt.Errorf("%w: %s:%s is no longer in the catalogs", ErrState, e.EntryID, e.Entity)
		}
		if m.EntitySym(e.EntryID, e.Entity) == "" {
			return fmt.Errorf("%w: %s:%s has no symbol", ErrState, e.EntryID, e.Entity)
		}
	}
	for _, c := range prev.Capabilities {
		cat := cats[c.EntryID]
		if cat == nil || cat.Capabilities[c.Capability] == nil {
			return fmt.Errorf("%w: capability %s:%s is no longer in the catalogs", ErrState, c.EntryID, c.Capability)
		}
	}
	for _, r := range prev.Relations {
		if m.RelationSym(r.EntryID, r.Entity, r.Name) == "" {
			return fmt.Errorf("%w: relation %s:%s.%s has no symbol", ErrState, r.EntryID, r.Entity, r.Name)
		}
	}
	return nil
}

func waveKind(prev, added Exposure) WaveKind {
	if len(added.Entities)+len(added.Capabilities)+len(added.Relations) == 0 {
		return Unchanged
	}
	if len(prev.Entities) == 0 {
		return First
	}
	old := prev.Entries()
	for _, e := range added.Entities {
		if !slices.Contains(old, e.EntryID) {
			return Federate
		}
	}
	return Expand
}

// materializable reports whether a relation can run at all: rows embedded
// in the parent's get need a get capability, scoped queries need their
// capability. Teaching a hop that can only fail would cost the agent a turn.
func materializable(cat *catalog.Catalog, ent *catalog.Entity, rel *catalog.Relation) bool {
	if len(readCaps(cat, ent)) == 0 {
		return false // no program can hold a row to follow it from
	}
	switch rel.Materialize.Kind {
	case catalog.FromParentGet:
		return getCap(cat, ent) != nil
	case catalog.QueryScoped, catalog.QueryScopedBindings:
		cp := cat.Capabilities[rel.Materialize.Capability]
		if cp == nil || cp.Unavailable != "" {
			return false
		}
		// The hop binds only the relation's parameters; one more required
		// input (a feed, a team) makes it unfollowable.
		for _, p := range cp.Parameters {
			if _, bound := rel.Materialize.Bindings[p.Name]; p.Required && p.Name != rel.Materialize.Param && !bound {
				return false
			}
		}
		return true
	case catalog.GetScopedBindings:
		cp := cat.Capabilities[rel.Materialize.Capability]
		return cp != nil && cp.Unavailable == ""
	case "":
		// Declared only, unless a view outputs it: then it is followed from
		// the view's rows (when the view can run here); or unless it is a
		// reference embedded in the parent's object (catalog.EmbeddedPath),
		// read like rows embedded in the parent's get.
		if _, embedded := cat.EmbeddedPath(ent.Name, rel.Name); embedded {
			return getCap(cat, ent) != nil
		}
		v, _ := cat.ViewRelation(ent.Name, rel.Name)
		return v != nil && len(readCaps(cat, ent)) > 0
	}
	return true
}

func isMutator(cp *catalog.Capability) bool {
	switch cp.Kind {
	case catalog.KindCreate, catalog.KindUpdate, catalog.KindDelete, catalog.KindAction:
		return true
	}
	return false
}

func wordSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range Words(text) {
		set[w] = true
	}
	return set
}

// overlaps reports whether the intent shares a word with the capability's
// name, label or description. Words of the entity name and the entry id are
// ignored on the capability side: the entity is already seeded, so "issue"
// in "close stale issues" says nothing about which issue mutator is wanted.
func overlaps(intent map[string]bool, cat *catalog.Catalog, ent *catalog.Entity, cp *catalog.Capability) bool {
	if len(intent) == 0 {
		return false
	}
	ignore := wordSet(ent.Name + " " + cat.EntryID)
	for _, text := range []string{cp.Name, catalog.MethodLabel(cp), cp.Description} {
		for _, w := range Words(text) {
			if intent[w] && !ignore[w] {
				return true
			}
		}
	}
	return false
}

// exposureSet is the working copy of an exposure while a wave is computed.
type exposureSet struct {
	entities map[entityKey]bool // value: seeded
	caps     map[capKey]bool
	rels     map[symbol.Relation]bool
}

func newExposureSet(prev Exposure) *exposureSet {
	st := &exposureSet{
		entities: map[entityKey]bool{},
		caps:     map[capKey]bool{},
		rels:     map[symbol.Relation]bool{},
	}
	for _, e := range prev.Entities {
		k := entityKey{e.EntryID, e.Entity}
		st.entities[k] = st.entities[k] || e.Seeded
	}
	for _, c := range prev.Capabilities {
		st.caps[capKey{c.EntryID, c.Capability}] = true
	}
	for _, r := range prev.Relations {
		st.rels[r] = true
	}
	return st
}

func (st *exposureSet) seed(entry, name string) { st.entities[entityKey{entry, name}] = true }

func (st *exposureSet) addCap(entry, name string) { st.caps[capKey{entry, name}] = true }

func (st *exposureSet) addRel(r symbol.Relation) { st.rels[r] = true }

// keys returns the entities with the given seeded status, sorted.
func (st *exposureSet) keys(seeded bool) []entityKey {
	var out []entityKey
	for k, s := range st.entities {
		if s == seeded {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, compareEntityKey)
	return out
}

func compareEntityKey(a, b entityKey) int {
	return cmp.Or(cmp.Compare(a.entry, b.entry), cmp.Compare(a.name, b.name))
}

// addReads exposes an entity's read surface: every query and search, and the
// capability used to get one row.
func (st *exposureSet) addReads(cat *catalog.Catalog, ent *catalog.Entity) {
	for _, cp := range readCaps(cat, ent) {
		st.addCap(cat.EntryID, cp.Name)
	}
}

func readCaps(cat *catalog.Catalog, ent *catalog.Entity) []*catalog.Capability {
	var out []*catalog.Capability
	hasQuery := false
	for _, cp := range cat.CapabilitiesOf(ent.Name) {
		if cp.Kind == catalog.KindSearch && cp.PhraseParam() == "" {
			continue // nothing would carry the phrase; the planner refuses it too
		}
		if cp.Kind == catalog.KindQuery || cp.Kind == catalog.KindSearch {
			out = append(out, cp)
			hasQuery = hasQuery || cp.Kind == catalog.KindQuery
		}
	}
	// A singleton is what a bare Entity reads when there is no query.
	if s := cat.FirstOfKind(ent.Name, catalog.KindSingleton); s != nil && !hasQuery {
		out = append(out, s)
	}
	if g := getCap(cat, ent); g != nil {
		out = append(out, g)
	}
	return out
}

// getCap is the capability behind Entity(id): primary_read when it is a get,
// else the first get by name.
func getCap(cat *catalog.Catalog, ent *catalog.Entity) *catalog.Capability {
	if g := cat.GetCapability(ent.Name); g != nil && g.Kind == catalog.KindGet {
		return g
	}
	return cat.FirstOfKind(ent.Name, catalog.KindGet)
}

// maxValueDepth bounds the items_ref chain followed from a slot's value
// domain; catalogs are validated by the loader, but a cycle must not hang.
const maxValueDepth = 8

// symbolWave lists every name the exposure needs; symbol.Map.Add keeps the
// ones it already has and numbers the rest.
func (st *exposureSet) symbolWave(cats map[string]*catalog.Catalog) symbol.Wave {
	var w symbol.Wave
	slotSeen := map[symbol.Slot]bool{}
	addSlot := func(cat *catalog.Catalog, name, valueRef string) {
		s := symbol.Slot{EntryID: cat.EntryID, Name: name, ValueRef: valueRef}
		if slotSeen[s] {
			return
		}
		slotSeen[s] = true
		w.Slots = append(w.Slots, s)
		ref := valueRef
		for depth := 0; depth < maxValueDepth && ref != ""; depth++ {
			v := cat.Values[ref]
			if v == nil {
				break
			}
			w.Values = append(w.Values, symbol.Value{EntryID: cat.EntryID, Key: ref})
			ref = v.ItemsRef
		}
	}
	for k := range st.entities {
		cat := cats[k.entry]
		ent := cat.Entities[k.name]
		w.Entities = append(w.Entities, symbol.Entity{EntryID: k.entry, Name: k.name})
		for _, fn := range fieldNames(ent) {
			if f := ent.Fields[fn]; f != nil {
				addSlot(cat, fn, f.ValueRef)
			}
		}
	}
	for k := range st.caps {
		cat := cats[k.entry]
		cp := cat.Capabilities[k.name]
		if isMutator(cp) {
			w.Methods = append(w.Methods, symbol.Method{
				EntryID: k.entry, Entity: cp.Entity, Label: catalog.MethodLabel(cp), Capability: cp.Name,
			})
		}
		for _, p := range cp.Parameters {
			addSlot(cat, p.Name, p.ValueRef)
		}
	}
	for r := range st.rels {
		w.Relations = append(w.Relations, r)
	}
	return w
}

// result builds the new cumulative exposure and what this wave added, both
// in symbol order so that rendering and storage are deterministic.
func (st *exposureSet) result(m *symbol.Map, prev Exposure) (all, added Exposure) {
	had := map[entityKey]bool{} // value: seeded before
	for _, e := range prev.Entities {
		k := entityKey{e.EntryID, e.Entity}
		had[k] = had[k] || e.Seeded
	}
	num := func(sym string) int { _, n := symbol.Parse(sym); return n }
	for k, seeded := range st.entities {
		e := ExposedEntity{EntryID: k.entry, Entity: k.name, Seeded: seeded}
		all.Entities = append(all.Entities, e)
		if before, ok := had[k]; !ok || (seeded && !before) {
			added.Entities = append(added.Entities, e)
		}
	}
	byEntitySym := func(a, b ExposedEntity) int {
		return cmp.Compare(num(m.EntitySym(a.EntryID, a.Entity)), num(m.EntitySym(b.EntryID, b.Entity)))
	}
	slices.SortFunc(all.Entities, byEntitySym)
	slices.SortFunc(added.Entities, byEntitySym)

	hadCap := map[capKey]bool{}
	for _, c := range prev.Capabilities {
		hadCap[capKey{c.EntryID, c.Capability}] = true
	}
	for k := range st.caps {
		c := ExposedCapability{EntryID: k.entry, Capability: k.name}
		all.Capabilities = append(all.Capabilities, c)
		if !hadCap[k] {
			added.Capabilities = append(added.Capabilities, c)
		}
	}
	byCap := func(a, b ExposedCapability) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), cmp.Compare(a.Capability, b.Capability))
	}
	slices.SortFunc(all.Capabilities, byCap)
	slices.SortFunc(added.Capabilities, byCap)

	hadRel := map[symbol.Relation]bool{}
	for _, r := range prev.Relations {
		hadRel[r] = true
	}
	for r := range st.rels {
		all.Relations = append(all.Relations, r)
		if !hadRel[r] {
			added.Relations = append(added.Relations, r)
		}
	}
	byRelSym := func(a, b symbol.Relation) int {
		return cmp.Compare(num(m.RelationSym(a.EntryID, a.Entity, a.Name)), num(m.RelationSym(b.EntryID, b.Entity, b.Name)))
	}
	slices.SortFunc(all.Relations, byRelSym)
	slices.SortFunc(added.Relations, byRelSym)
	return all, added
}

// fieldNames lists an entity's fields in declaration order, then any field
// missing from field_order by name, so hand-built catalogs still render.
func fieldNames(ent *catalog.Entity) []string {
	return orderedKeys(ent.FieldOrder, ent.Fields)
}

func relationNames(ent *catalog.Entity) []string {
	return orderedKeys(ent.RelOrder, ent.Relations)
}

func orderedKeys[V any](order []string, m map[string]V) []string {
	out := make([]string, 0, len(m))
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}
