package catalog

// Name lookups of a frozen catalog. The planner looks entities, fields,
// relations and capabilities up by name some thirty times per program.
// In the Wasm guest a Go map lookup by string is six or seven guest calls
// (the lookup, an indirect call to the string hasher, Go's portable hash —
// Wasm has no AES — and the key comparison), and the meter follows every
// indirect call with a tick, a round trip to the host. Freeze therefore
// builds one nameIndex per map, once per catalog load, whose lookup is a
// single call with the hash and the comparison written inline.

// nameIndex maps each of names to its position, by open addressing with
// linear probing over a power-of-two table. It never changes once built.
type nameIndex struct {
	names []string
	// slots hold a position plus one; 0 is an empty slot. At least half
	// of them are empty, so every probe sequence ends.
	slots []int32
}

func newNameIndex(names []string) nameIndex {
	size := 8
	for size < 2*len(names) {
		size <<= 1
	}
	x := nameIndex{names: names, slots: make([]int32, size)}
	mask := uint32(size - 1)
	for i, s := range names {
		j := nameHash(s) & mask
		for x.slots[j] != 0 {
			j = (j + 1) & mask
		}
		x.slots[j] = int32(i + 1)
	}
	return x
}

// nameHash is 32-bit FNV-1a: a loop of two instructions a byte, with no
// call, where the runtime's string hash is several calls in Wasm.
func nameHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// find returns the position of s in the index, or -1.
func (x *nameIndex) find(s string) int {
	if len(x.slots) == 0 {
		return -1
	}
	mask := uint32(len(x.slots) - 1)
	for j := nameHash(s) & mask; ; j = (j + 1) & mask {
		k := int(x.slots[j]) - 1
		if k < 0 {
			return -1
		}
		// Compared byte by byte: a string == calls runtime.memequal
		// (two more guest calls) whenever the lengths agree.
		if n := x.names[k]; len(n) == len(s) {
			i := 0
			for i < len(s) && n[i] == s[i] {
				i++
			}
			if i == len(s) {
				return k
			}
		}
	}
}

// catIndex is a frozen catalog's name index.
type catIndex struct {
	ents    nameIndex
	entPtrs []*Entity
	caps    nameIndex
	capPtrs []*Capability
	vals    nameIndex
	valPtrs []*Value
	// capsOf is CapabilitiesOf's answer per entity name.
	capsOf     nameIndex
	capsOfVals [][]*Capability
	// origins is DeclaredOrigins's answer (origins.go).
	origins []string
}

// entIndex is a frozen entity's name index.
type entIndex struct {
	fields    nameIndex
	fieldPtrs []*Field
	rels      nameIndex
	relPtrs   []*Relation
}

func indexOf[V any](m map[string]V) (nameIndex, []V) {
	names := make([]string, 0, len(m))
	vals := make([]V, 0, len(m))
	for k, v := range m {
		names = append(names, k)
		vals = append(vals, v)
	}
	return newNameIndex(names), vals
}

// buildIndex indexes c's entities and capabilities, and each entity's
// fields and relations (see Freeze).
func (c *Catalog) buildIndex() *catIndex {
	x := &catIndex{}
	x.ents, x.entPtrs = indexOf(c.Entities)
	x.caps, x.capPtrs = indexOf(c.Capabilities)
	x.vals, x.valPtrs = indexOf(c.Values)
	for _, e := range x.entPtrs {
		if e != nil {
			ei := &entIndex{}
			ei.fields, ei.fieldPtrs = indexOf(e.Fields)
			ei.rels, ei.relPtrs = indexOf(e.Relations)
			e.idx = ei
		}
	}
	return x
}

// EntityNamed is c.Entities[name], from the index once c is frozen.
func (c *Catalog) EntityNamed(name string) *Entity {
	if c.idx == nil {
		return c.Entities[name]
	}
	if i := c.idx.ents.find(name); i >= 0 {
		return c.idx.entPtrs[i]
	}
	return nil
}

// CapabilityNamed is c.Capabilities[name], from the index once c is frozen.
func (c *Catalog) CapabilityNamed(name string) *Capability {
	if c.idx == nil {
		return c.Capabilities[name]
	}
	if i := c.idx.caps.find(name); i >= 0 {
		return c.idx.capPtrs[i]
	}
	return nil
}

// ValueNamed is c.Values[name], from the index once c is frozen.
func (c *Catalog) ValueNamed(name string) *Value {
	if c.idx == nil {
		return c.Values[name]
	}
	if i := c.idx.vals.find(name); i >= 0 {
		return c.idx.valPtrs[i]
	}
	return nil
}

// FieldNamed is e.Fields[name], from the index once e's catalog is frozen.
func (e *Entity) FieldNamed(name string) *Field {
	if e.idx == nil {
		return e.Fields[name]
	}
	if i := e.idx.fields.find(name); i >= 0 {
		return e.idx.fieldPtrs[i]
	}
	return nil
}

// RelationNamed is e.Relations[name], from the index once e's catalog is
// frozen.
func (e *Entity) RelationNamed(name string) *Relation {
	if e.idx == nil {
		return e.Relations[name]
	}
	if i := e.idx.rels.find(name); i >= 0 {
		return e.idx.relPtrs[i]
	}
	return nil
}
