package symbol

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func ents(names ...string) []Entity {
	out := make([]Entity, len(names))
	for i, n := range names {
		out[i] = Entity{EntryID: "t", Name: n}
	}
	return out
}

func entNames(m *Map) []string {
	var out []string
	for _, e := range m.Entities {
		out = append(out, e.Name)
	}
	return out
}

// Waves are applied in order; after each, the whole entity list and the
// wave's delta must be exactly as listed.
func TestAddWaves(t *testing.T) {
	tests := []struct {
		name  string
		waves [][]string
		want  [][]string // entity names after each wave
		delta [][]int    // Delta.Entities of each wave
	}{
		{
			name:  "sorted within a wave",
			waves: [][]string{{"User", "Issue", "Project"}},
			want:  [][]string{{"Issue", "Project", "User"}},
			delta: [][]int{{1, 2, 3}},
		},
		{
			name:  "later wave appends after, never re-sorts",
			waves: [][]string{{"User", "Issue"}, {"Comment", "Attachment"}},
			want:  [][]string{{"Issue", "User"}, {"Issue", "User", "Attachment", "Comment"}},
			delta: [][]int{{1, 2}, {3, 4}},
		},
		{
			name:  "duplicates within a wave ignored",
			waves: [][]string{{"B", "A", "B", "A"}},
			want:  [][]string{{"A", "B"}},
			delta: [][]int{{1, 2}},
		},
		{
			name:  "duplicates between waves ignored",
			waves: [][]string{{"B", "A"}, {"A", "C", "B"}, {"C"}},
			want:  [][]string{{"A", "B"}, {"A", "B", "C"}, {"A", "B", "C"}},
			delta: [][]int{{1, 2}, {3}, nil},
		},
		{
			name:  "empty wave",
			waves: [][]string{{"A"}, nil},
			want:  [][]string{{"A"}, {"A"}},
			delta: [][]int{{1}, nil},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Map
			for i, w := range tc.waves {
				before := slices.Clone(m.Entities)
				d := m.Add(Wave{Entities: ents(w...)})
				if got := entNames(&m); !reflect.DeepEqual(got, tc.want[i]) {
					t.Fatalf("wave %d: entities = %v, want %v", i, got, tc.want[i])
				}
				if !reflect.DeepEqual(d.Entities, tc.delta[i]) {
					t.Fatalf("wave %d: delta = %v, want %v", i, d.Entities, tc.delta[i])
				}
				if d.Empty() != (len(tc.delta[i]) == 0) {
					t.Fatalf("wave %d: Empty() = %v with delta %v", i, d.Empty(), d.Entities)
				}
				if !slices.Equal(m.Entities[:len(before)], before) {
					t.Fatalf("wave %d: existing assignments changed: %v -> %v", i, before, m.Entities)
				}
			}
		})
	}
}

// Every family is append-only and sorted by its full identity, and the delta
// names exactly the new numbers of each family independently.
func TestAddAllFamilies(t *testing.T) {
	var m Map
	d := m.Add(Wave{
		Entities:  []Entity{{EntryID: "b", Name: "X"}, {EntryID: "a", Name: "Y"}},
		Methods:   []Method{{EntryID: "t", Entity: "Issue", Label: "get", Capability: "issue_get"}, {EntryID: "t", Entity: "Issue", Label: "close", Capability: "issue_close"}},
		Slots:     []Slot{{EntryID: "t", Name: "title", ValueRef: "text"}, {EntryID: "t", Name: "id", ValueRef: "id"}, {EntryID: "t", Name: "id", ValueRef: "uuid"}},
		Relations: []Relation{{EntryID: "t", Entity: "Issue", Name: "comments"}},
		Values:    []Value{{EntryID: "t", Key: "status"}, {EntryID: "t", Key: "priority"}},
	})
	want := Delta{Entities: []int{1, 2}, Methods: []int{1, 2}, Slots: []int{1, 2, 3}, Relations: []int{1}, Values: []int{1, 2}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("delta = %+v, want %+v", d, want)
	}
	if m.Entities[0].EntryID != "a" || m.Methods[0].Label != "close" || m.Slots[0].ValueRef != "id" || m.Slots[1].ValueRef != "uuid" || m.Values[0].Key != "priority" {
		t.Fatalf("families not sorted: %+v", m)
	}

	d = m.Add(Wave{
		Methods: []Method{{EntryID: "t", Entity: "Issue", Label: "get", Capability: "issue_get"}, {EntryID: "t", Entity: "Issue", Label: "assign", Capability: "issue_assign"}},
		Values:  []Value{{EntryID: "t", Key: "status"}},
		Slots:   []Slot{{EntryID: "u", Name: "id", ValueRef: "id"}},
	})
	want = Delta{Methods: []int{3}, Slots: []int{4}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("second delta = %+v, want %+v", d, want)
	}
	if m.Methods[2].Label != "assign" || m.Methods[0].Label != "close" {
		t.Fatalf("methods renumbered: %+v", m.Methods)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		tok  string
		kind Kind
		n    int
	}{
		{"e1", KindEntity, 1},
		{"m12", KindMethod, 12},
		{"p3", KindSlot, 3},
		{"r4", KindRelation, 4},
		{"v5", KindValue, 5},
		{"e1234567", KindEntity, 1234567},
		{"e10", KindEntity, 10},

		{"e0", KindNone, 0},
		{"e01", KindNone, 0},
		{"x1", KindNone, 0},
		{"E1", KindNone, 0},
		{"e", KindNone, 0},
		{"", KindNone, 0},
		{"1", KindNone, 0},
		{"e-1", KindNone, 0},
		{"e+1", KindNone, 0},
		{"e+12", KindNone, 0},
		{"e1a", KindNone, 0},
		{"e 1", KindNone, 0},
		{"e1_0", KindNone, 0},
		{"e12345678", KindNone, 0},
		{"e99999999999999999999999", KindNone, 0},
		{"m١", KindNone, 0}, // non-ASCII digit
	}
	for _, tc := range tests {
		t.Run(tc.tok, func(t *testing.T) {
			k, n := Parse(tc.tok)
			if k != tc.kind || n != tc.n {
				t.Fatalf("Parse(%q) = %q,%d, want %q,%d", tc.tok, k, n, tc.kind, tc.n)
			}
			if k != KindNone {
				if got := Name(k, n); got != tc.tok {
					t.Fatalf("Name(Parse(%q)) = %q", tc.tok, got)
				}
			}
		})
	}
}

func TestNameRoundTrip(t *testing.T) {
	for _, k := range []Kind{KindEntity, KindMethod, KindSlot, KindRelation, KindValue} {
		for _, n := range []int{1, 9, 10, 99, 100, 4096, 9999999} {
			name := Name(k, n)
			if gk, gn := Parse(name); gk != k || gn != n {
				t.Errorf("Parse(Name(%q, %d)) = %q,%d", k, n, gk, gn)
			}
		}
	}
}

func sampleMap() *Map {
	m := &Map{}
	m.Add(Wave{
		Entities:  []Entity{{EntryID: "t", Name: "Issue"}, {EntryID: "t", Name: "Project"}},
		Methods:   []Method{{EntryID: "t", Entity: "Issue", Label: "get", Capability: "issue_get"}},
		Slots:     []Slot{{EntryID: "t", Name: "title", ValueRef: "text"}},
		Relations: []Relation{{EntryID: "t", Entity: "Issue", Name: "comments"}},
		Values:    []Value{{EntryID: "t", Key: "status"}},
	})
	return m
}

func TestLookups(t *testing.T) {
	m := sampleMap()
	syms := []struct {
		name, got, want string
	}{
		{"EntitySym", m.EntitySym("t", "Project"), "e2"},
		{"EntitySym other entry", m.EntitySym("u", "Project"), ""},
		{"EntitySym missing", m.EntitySym("t", "Nope"), ""},
		{"MethodSym", m.MethodSym("t", "Issue", "issue_get"), "m1"},
		{"MethodSym wrong entity", m.MethodSym("t", "Project", "issue_get"), ""},
		{"SlotSym", m.SlotSym("t", "title", "text"), "p1"},
		{"SlotSym other value ref", m.SlotSym("t", "title", "string"), ""},
		{"RelationSym", m.RelationSym("t", "Issue", "comments"), "r1"},
		{"RelationSym wrong entity", m.RelationSym("t", "Project", "comments"), ""},
		{"ValueSym", m.ValueSym("t", "status"), "v1"},
		{"ValueSym missing", m.ValueSym("t", "priority"), ""},
	}
	for _, s := range syms {
		if s.got != s.want {
			t.Errorf("%s = %q, want %q", s.name, s.got, s.want)
		}
	}

	if e, ok := m.Entity(1); !ok || e.Name != "Issue" {
		t.Errorf("Entity(1) = %+v, %v", e, ok)
	}
	for _, n := range []int{-1, 0, 3} {
		if _, ok := m.Entity(n); ok {
			t.Errorf("Entity(%d) found", n)
		}
	}
	if x, ok := m.Method(1); !ok || x.Capability != "issue_get" {
		t.Errorf("Method(1) = %+v, %v", x, ok)
	}
	if _, ok := m.Method(2); ok {
		t.Error("Method(2) found")
	}
	if x, ok := m.Slot(1); !ok || x.Name != "title" {
		t.Errorf("Slot(1) = %+v, %v", x, ok)
	}
	if x, ok := m.Relation(1); !ok || x.Name != "comments" {
		t.Errorf("Relation(1) = %+v, %v", x, ok)
	}
	if x, ok := m.ValueAt(1); !ok || x.Key != "status" {
		t.Errorf("ValueAt(1) = %+v, %v", x, ok)
	}
	if !m.HasEntry("t") || m.HasEntry("u") {
		t.Error("HasEntry wrong")
	}
	var empty Map
	if _, ok := empty.Entity(1); ok || empty.EntitySym("t", "Issue") != "" || empty.HasEntry("t") {
		t.Error("empty map answered a lookup")
	}
}

func TestCloneIsDeep(t *testing.T) {
	m := sampleMap()
	c := m.Clone()
	if !reflect.DeepEqual(m, c) {
		t.Fatalf("clone differs: %+v vs %+v", m, c)
	}
	c.Entities[0].Name = "Changed"
	c.Methods[0].Label = "changed"
	c.Slots[0].Name = "changed"
	c.Relations[0].Name = "changed"
	c.Values[0].Key = "changed"
	c.Add(Wave{Entities: []Entity{{EntryID: "t", Name: "Zed"}}})
	if !reflect.DeepEqual(m, sampleMap()) {
		t.Fatalf("mutating the clone changed the original: %+v", m)
	}
	// Appending to the original must not show through the clone either,
	// even when the backing arrays had spare capacity.
	m2 := sampleMap()
	c2 := m2.Clone()
	m2.Add(Wave{Entities: []Entity{{EntryID: "t", Name: "Zed"}}})
	if len(c2.Entities) != 2 {
		t.Fatalf("clone grew with the original: %+v", c2.Entities)
	}

	var nilMap *Map
	if got := nilMap.Clone(); got == nil || len(got.Entities) != 0 {
		t.Fatalf("nil Clone = %+v", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	m := sampleMap()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Map
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, &back) {
		t.Fatalf("round trip: %+v != %+v", m, back)
	}
	// The short family keys are the wire contract with stored sessions.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"e", "m", "p", "r", "v"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks family key %q: %s", k, b)
		}
	}
	if b, _ := json.Marshal(&Map{}); string(b) != "{}" {
		t.Errorf("empty map JSON = %s", b)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"e1", "m12", "p3", "r4", "v5", "e0", "e01", "x1", "e", "e-1", "e+1", "e1a", "e12345678", "", "v9999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		k, n := Parse(tok)
		if k == KindNone {
			if n != 0 {
				t.Fatalf("Parse(%q) = none with n=%d", tok, n)
			}
			return
		}
		if n < 1 {
			t.Fatalf("Parse(%q) = %q,%d: non-positive number", tok, k, n)
		}
		if got := Name(k, n); got != tok {
			t.Fatalf("Name(Parse(%q)) = %q: a symbol must have one spelling", tok, got)
		}
	})
}
