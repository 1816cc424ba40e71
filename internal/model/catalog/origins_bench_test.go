package catalog

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// originsCatalog is a catalog of n mappings (pokeapi's size is ~100),
// two of which write absolute URLs in their paths.
func originsCatalog(n int) *Catalog {
	c := &Catalog{
		HTTPBackend: "https://pokeapi.example/api/v2",
		Auth:        Auth{TokenURL: "https://auth.example/token"},
		Mappings:    map[string]*Mapping{},
		Entities:    map[string]*Entity{"Thing": {Name: "Thing", Fields: map[string]*Field{}}},
		// Each mapping maps a declared capability, as Check requires.
		Capabilities: map[string]*Capability{},
	}
	for i := 0; i < n; i++ {
		path := []Segment{{Type: "literal", Value: fmt.Sprintf("thing%d", i)}, {Type: "var", Name: "id"}}
		switch i {
		case n / 3:
			path = []Segment{{Type: "literal", Value: "https://search.example/1/indexes"}}
		case 2 * n / 3:
			path = []Segment{{Type: "literal", Value: "HTTP://Other.Example:8080/x"}}
		}
		name := fmt.Sprintf("thing_%03d_get", i)
		c.Mappings[name] = &Mapping{Method: "GET", Path: path}
		c.Capabilities[name] = &Capability{Name: name, Kind: KindGet, Entity: "Thing"}
	}
	return c
}

// declaresOriginBefore is DeclaresOrigin as it was: the declared URLs
// listed, sorted and parsed again on every call. The benchmark's baseline.
func declaresOriginBefore(c *Catalog, origin string) bool {
	for _, u := range c.DeclaredURLs() {
		if o, ok := Origin(u); ok && o == origin {
			return true
		}
	}
	return false
}

// TestDeclaredOriginsFrozen: a frozen catalog answers as an unfrozen one
// (and as the code before the index did).
func TestDeclaredOriginsFrozen(t *testing.T) {
	c := originsCatalog(30)
	want := []string{"https://pokeapi.example:443", "https://auth.example:443", "https://search.example:443", "http://other.example:8080"}
	if got := c.DeclaredOrigins(); !slices.Equal(got, want) {
		t.Fatalf("unfrozen: %q, want %q", got, want)
	}
	frozen := originsCatalog(30)
	if err := frozen.Freeze(); err != nil {
		t.Fatal(err)
	}
	if got := frozen.DeclaredOrigins(); !slices.Equal(got, want) {
		t.Fatalf("frozen: %q, want %q", got, want)
	}
	for _, o := range append(want, "https://pokeapi.example:80", "https://evil.example:443", "", "http://other.example:80") {
		before := declaresOriginBefore(c, o)
		if c.DeclaresOrigin(o) != before || frozen.DeclaresOrigin(o) != before {
			t.Errorf("DeclaresOrigin(%q): unfrozen %v, frozen %v, before %v", o, c.DeclaresOrigin(o), frozen.DeclaresOrigin(o), before)
		}
	}
}

// BenchmarkDeclaresOrigin: the compiler's check of one URL value on a
// ~100-mapping catalog. "before" is the old code, rebuilding the list per
// call (the baseline); "frozen" is what the engine's installed catalog
// does now; "unfrozen" is host code's path.
func BenchmarkDeclaresOrigin(b *testing.B) {
	const origin = "https://pokeapi.example:443"
	c := originsCatalog(100)
	frozen := originsCatalog(100)
	if err := frozen.Freeze(); err != nil {
		b.Fatal(err)
	}
	b.Run("before", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !declaresOriginBefore(c, origin) {
				b.Fatal("not declared")
			}
		}
	})
	b.Run("unfrozen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !c.DeclaresOrigin(origin) {
				b.Fatal("not declared")
			}
		}
	})
	b.Run("frozen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !frozen.DeclaresOrigin(origin) {
				b.Fatal("not declared")
			}
		}
	})
}

// BenchmarkOrigin: Origin with the host IDNA-mapped as net/http dials it
// (DialHost) against "parse", the old body (url.Parse and lower-casing,
// the baseline), for an ASCII host, which skips IDNA, and an IDN.
func BenchmarkOrigin(b *testing.B) {
	for _, raw := range []string{"https://pokeapi.co/api/v2/evolution-chain/5/", "https://bücher.example/api/x"} {
		b.Run("parse/"+raw[8:12], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				u, err := url.Parse(raw)
				if err != nil || strings.ToLower(u.Hostname()) == "" {
					b.Fatal(err)
				}
			}
		})
		b.Run("Origin/"+raw[8:12], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := Origin(raw); !ok {
					b.Fatal("no origin")
				}
			}
		})
	}
}
