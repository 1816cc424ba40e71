package lang

// table maps names to values for the planner's label bookkeeping. A
// program binds a handful of labels, and with so few a scan is cheaper
// than a map: the Wasm guest has no hardware string hash, so every map
// operation on a string key runs a byte-by-byte hash in software. Past
// smallTable entries the table indexes its keys with a map, so a program
// with hundreds of labels still looks each up in constant time.
type table[V any] struct {
	keys []string
	vals []V
	idx  map[string]int // nil until keys outgrow smallTable
}

const smallTable = 8

func (t *table[V]) find(k string) int {
	if t.idx != nil {
		if i, ok := t.idx[k]; ok {
			return i
		}
		return -1
	}
	return indexStr(t.keys, k)
}

// indexStr is slices.Index for strings with the comparison written out:
// in the Wasm guest a string == whose lengths agree calls runtime.memequal
// and memeqbody, two guest calls for what are mostly names of a few bytes.
func indexStr(ss []string, s string) int {
	for i, x := range ss {
		if len(x) != len(s) {
			continue
		}
		j := 0
		for j < len(s) && x[j] == s[j] {
			j++
		}
		if j == len(s) {
			return i
		}
	}
	return -1
}

// containsStr is slices.Contains for strings (see indexStr).
func containsStr(ss []string, s string) bool { return indexStr(ss, s) >= 0 }

// get returns the value for k, or the zero value and false.
func (t *table[V]) get(k string) (V, bool) {
	if i := t.find(k); i >= 0 {
		return t.vals[i], true
	}
	var zero V
	return zero, false
}

// set adds or replaces the value for k.
func (t *table[V]) set(k string, v V) {
	if i := t.find(k); i >= 0 {
		t.vals[i] = v
		return
	}
	t.keys = append(t.keys, k)
	t.vals = append(t.vals, v)
	switch {
	case t.idx != nil:
		t.idx[k] = len(t.keys) - 1
	case len(t.keys) > smallTable:
		t.idx = make(map[string]int, 2*len(t.keys))
		for i, key := range t.keys {
			t.idx[key] = i
		}
	}
}

// del removes k; the last entry takes its place.
func (t *table[V]) del(k string) {
	i := t.find(k)
	if i < 0 {
		return
	}
	last := len(t.keys) - 1
	if t.idx != nil {
		delete(t.idx, k)
		if i != last {
			t.idx[t.keys[last]] = i
		}
	}
	t.keys[i], t.vals[i] = t.keys[last], t.vals[last]
	var zero V
	t.keys[last], t.vals[last] = "", zero
	t.keys, t.vals = t.keys[:last], t.vals[:last]
}

func (t *table[V]) len() int { return len(t.keys) }

// reset empties the table, keeping its storage.
func (t *table[V]) reset() {
	clear(t.keys)
	clear(t.vals)
	t.keys, t.vals, t.idx = t.keys[:0], t.vals[:0], nil
}
