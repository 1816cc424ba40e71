// Package symbol owns the session symbol map: the append-only assignment of
// e#/m#/p#/r#/v# to catalog names. The same Map value renders teaching tables
// on the host and expands programs in the guest, so what an agent was taught
// is exactly what its programs mean.
package symbol

import (
	"cmp"
	"slices"
	"strconv"
)

// Kind is a symbol family.
type Kind byte

// Symbol families, by prefix letter.
const (
	KindNone     Kind = 0
	KindEntity   Kind = 'e'
	KindMethod   Kind = 'm'
	KindSlot     Kind = 'p'
	KindRelation Kind = 'r'
	KindValue    Kind = 'v'
)

// Entity is an entity of one catalog.
type Entity struct {
	EntryID string `json:"entry_id"`
	Name    string `json:"name"`
}

// Method is a capability of an entity, named by its method label.
type Method struct {
	EntryID    string `json:"entry_id"`
	Entity     string `json:"entity"`
	Label      string `json:"label"`
	Capability string `json:"capability"`
}

// Slot is a field or parameter slot: a wire name with its value domain.
type Slot struct {
	EntryID  string `json:"entry_id"`
	Name     string `json:"name"`
	ValueRef string `json:"value_ref,omitempty"`
}

// Relation is a relation of an entity.
type Relation struct {
	EntryID string `json:"entry_id"`
	Entity  string `json:"entity"`
	Name    string `json:"name"`
}

// Value is a value domain (metadata only; never in programs).
type Value struct {
	EntryID string `json:"entry_id"`
	Key     string `json:"key"`
}

// Map is an append-only symbol table: element i of each list is symbol i+1.
// It is a plain value that serialises to JSON, so it can live in any store.
type Map struct {
	Entities  []Entity   `json:"e,omitempty"`
	Methods   []Method   `json:"m,omitempty"`
	Slots     []Slot     `json:"p,omitempty"`
	Relations []Relation `json:"r,omitempty"`
	Values    []Value    `json:"v,omitempty"`
}

// Wave is a batch of names to expose. Names already in the map are skipped;
// new ones are sorted within their family and numbered after the last.
type Wave struct {
	Entities  []Entity
	Methods   []Method
	Slots     []Slot
	Relations []Relation
	Values    []Value
}

// Delta lists the 1-based symbol numbers a wave added, per family.
type Delta struct {
	Entities, Methods, Slots, Relations, Values []int
}

// Empty reports whether the wave added nothing.
func (d Delta) Empty() bool {
	return len(d.Entities)+len(d.Methods)+len(d.Slots)+len(d.Relations)+len(d.Values) == 0
}

// Add appends the wave's new names. Existing assignments never change.
func (m *Map) Add(w Wave) Delta {
	var d Delta
	m.Entities, d.Entities = appendNew(m.Entities, w.Entities, func(a, b Entity) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), cmp.Compare(a.Name, b.Name))
	})
	m.Methods, d.Methods = appendNew(m.Methods, w.Methods, func(a, b Method) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), cmp.Compare(a.Entity, b.Entity), cmp.Compare(a.Label, b.Label), cmp.Compare(a.Capability, b.Capability))
	})
	m.Slots, d.Slots = appendNew(m.Slots, w.Slots, func(a, b Slot) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ValueRef, b.ValueRef))
	})
	m.Relations, d.Relations = appendNew(m.Relations, w.Relations, func(a, b Relation) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), cmp.Compare(a.Entity, b.Entity), cmp.Compare(a.Name, b.Name))
	})
	m.Values, d.Values = appendNew(m.Values, w.Values, func(a, b Value) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), cmp.Compare(a.Key, b.Key))
	})
	return d
}

func appendNew[T comparable](have, add []T, compare func(a, b T) int) ([]T, []int) {
	seen := make(map[T]bool, len(have))
	for _, h := range have {
		seen[h] = true
	}
	var fresh []T
	for _, a := range add {
		if !seen[a] {
			seen[a] = true
			fresh = append(fresh, a)
		}
	}
	slices.SortFunc(fresh, compare)
	var nums []int
	for _, f := range fresh {
		have = append(have, f)
		nums = append(nums, len(have))
	}
	return have, nums
}

// Parse splits a token such as "e12" into its family and 1-based number.
// It returns KindNone for anything that is not a well-formed symbol.
func Parse(tok string) (Kind, int) {
	if len(tok) < 2 || len(tok) > 8 {
		return KindNone, 0
	}
	k := Kind(tok[0])
	switch k {
	case KindEntity, KindMethod, KindSlot, KindRelation, KindValue:
	default:
		return KindNone, 0
	}
	// Digits only, no leading zero: strconv.Atoi alone would also take a
	// sign ("e+5"), and a symbol must have exactly one spelling so that
	// Name(Parse(tok)) == tok.
	if tok[1] == '0' {
		return KindNone, 0
	}
	n := 0
	for i := 1; i < len(tok); i++ {
		c := tok[i]
		if c < '0' || c > '9' {
			return KindNone, 0
		}
		n = n*10 + int(c-'0')
	}
	return k, n
}

// Name formats a symbol.
func Name(k Kind, n int) string { return string(rune(k)) + strconv.Itoa(n) }

// Entity returns entity symbol n (1-based).
func (m *Map) Entity(n int) (Entity, bool) { return at(m.Entities, n) }

// Method returns method symbol n.
func (m *Map) Method(n int) (Method, bool) { return at(m.Methods, n) }

// Slot returns slot symbol n.
func (m *Map) Slot(n int) (Slot, bool) { return at(m.Slots, n) }

// Relation returns relation symbol n.
func (m *Map) Relation(n int) (Relation, bool) { return at(m.Relations, n) }

// ValueAt returns value symbol n.
func (m *Map) ValueAt(n int) (Value, bool) { return at(m.Values, n) }

func at[T any](s []T, n int) (T, bool) {
	var zero T
	if n < 1 || n > len(s) {
		return zero, false
	}
	return s[n-1], true
}

// EntitySym returns the symbol of (entryID, name), or "".
func (m *Map) EntitySym(entryID, name string) string {
	return find(m.Entities, KindEntity, func(e Entity) bool { return e.EntryID == entryID && e.Name == name })
}

// MethodSym returns the symbol of a capability, or "".
func (m *Map) MethodSym(entryID, entity, capability string) string {
	return find(m.Methods, KindMethod, func(x Method) bool {
		return x.EntryID == entryID && x.Entity == entity && x.Capability == capability
	})
}

// SlotSym returns the symbol of a slot, or "".
func (m *Map) SlotSym(entryID, name, valueRef string) string {
	return find(m.Slots, KindSlot, func(x Slot) bool {
		return x.EntryID == entryID && x.Name == name && x.ValueRef == valueRef
	})
}

// RelationSym returns the symbol of a relation, or "".
func (m *Map) RelationSym(entryID, entity, name string) string {
	return find(m.Relations, KindRelation, func(x Relation) bool {
		return x.EntryID == entryID && x.Entity == entity && x.Name == name
	})
}

// ValueSym returns the symbol of a value domain, or "".
func (m *Map) ValueSym(entryID, key string) string {
	return find(m.Values, KindValue, func(x Value) bool { return x.EntryID == entryID && x.Key == key })
}

func find[T any](s []T, k Kind, match func(T) bool) string {
	for i, x := range s {
		if match(x) {
			return Name(k, i+1)
		}
	}
	return ""
}

// HasEntry reports whether any entity of entryID is exposed.
func (m *Map) HasEntry(entryID string) bool {
	for _, e := range m.Entities {
		if e.EntryID == entryID {
			return true
		}
	}
	return false
}

// Clone returns a deep copy.
func (m *Map) Clone() *Map {
	if m == nil {
		return &Map{}
	}
	return &Map{
		Entities:  slices.Clone(m.Entities),
		Methods:   slices.Clone(m.Methods),
		Slots:     slices.Clone(m.Slots),
		Relations: slices.Clone(m.Relations),
		Values:    slices.Clone(m.Values),
	}
}
