package catalog

import (
	"strings"
	"testing"
)

// TestFrozenNamesMatchMaps checks every name lookup of a frozen catalog
// against the map it indexes, for every name present and for absent names
// close to them (prefixes, extensions, other case, the empty name).
func TestFrozenNamesMatchMaps(t *testing.T) {
	c := &Catalog{
		Entities:     map[string]*Entity{},
		Capabilities: map[string]*Capability{},
		Values:       map[string]*Value{"status": {Type: "select"}, "id": {Type: "string"}},
	}
	for i, n := range []string{"Issue", "Comment", "User", "Project", "Label", "Milestone", "PullRequest", "Repo", "Team", "X"} {
		e := &Entity{Name: n, Fields: map[string]*Field{}, Relations: map[string]*Relation{}}
		for j := 0; j <= i*3; j++ {
			f := strings.Repeat("f", j%4) + "field_" + string(rune('a'+j))
			e.Fields[f] = &Field{Name: f}
		}
		e.Fields["id"] = &Field{Name: "id"}
		rn := strings.ToLower(n) + "s"
		e.Relations[rn] = &Relation{Name: rn, Target: n, Cardinality: "many"}
		c.Entities[n] = e
		c.Capabilities[strings.ToLower(n)+"_get"] = &Capability{Name: strings.ToLower(n) + "_get", Entity: n, Kind: KindGet}
	}
	if err := c.Freeze(); err != nil {
		t.Fatal(err)
	}
	probes := func(names []string) []string {
		out := []string{"", "zz", "ISSUE", "field_"}
		for _, n := range names {
			out = append(out, n, n+"x", strings.ToUpper(n))
			if n != "" {
				out = append(out, n[:len(n)-1], "x"+n[1:])
			}
		}
		return out
	}
	var ents, caps []string
	for n := range c.Entities {
		ents = append(ents, n)
	}
	for n := range c.Capabilities {
		caps = append(caps, n)
	}
	for _, n := range probes(ents) {
		if got, want := c.EntityNamed(n), c.Entities[n]; got != want {
			t.Errorf("EntityNamed(%q) = %p, map has %p", n, got, want)
		}
	}
	for _, n := range probes(caps) {
		if got, want := c.CapabilityNamed(n), c.Capabilities[n]; got != want {
			t.Errorf("CapabilityNamed(%q) = %p, map has %p", n, got, want)
		}
	}
	for _, n := range probes([]string{"status", "id"}) {
		if got, want := c.ValueNamed(n), c.Values[n]; got != want {
			t.Errorf("ValueNamed(%q) = %p, map has %p", n, got, want)
		}
	}
	for en, e := range c.Entities {
		if e == nil {
			continue
		}
		var fs, rs []string
		for n := range e.Fields {
			fs = append(fs, n)
		}
		for n := range e.Relations {
			rs = append(rs, n)
		}
		for _, n := range probes(fs) {
			if got, want := e.FieldNamed(n), e.Fields[n]; got != want {
				t.Errorf("%s.FieldNamed(%q) = %p, map has %p", en, n, got, want)
			}
		}
		for _, n := range probes(rs) {
			if got, want := e.RelationNamed(n), e.Relations[n]; got != want {
				t.Errorf("%s.RelationNamed(%q) = %p, map has %p", en, n, got, want)
			}
		}
	}
}

// FuzzNameIndex builds an index of arbitrary names (split from the input
// at NUL bytes) and requires it to find exactly what a map finds.
func FuzzNameIndex(f *testing.F) {
	f.Add("id\x00title\x00body", "title")
	f.Add("", "")
	f.Add("a\x00a\x00b", "a")
	f.Fuzz(func(t *testing.T, keys, probe string) {
		names := strings.Split(keys, "\x00")
		if len(names) > 1000 {
			return
		}
		want := map[string]int{}
		for i, n := range names {
			want[n] = i // the last of repeated names wins, as in the map
		}
		uniq := make([]string, 0, len(want))
		for n := range want {
			uniq = append(uniq, n)
		}
		x := newNameIndex(uniq)
		for _, p := range append(uniq, probe, probe+"\x01", "") {
			i := x.find(p)
			_, ok := want[p]
			if ok != (i >= 0) || ok && uniq[i] != p {
				t.Fatalf("find(%q) = %d, in map %v", p, i, ok)
			}
		}
	})
}
