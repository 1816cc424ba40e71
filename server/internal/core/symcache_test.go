package core

import (
	"testing"

	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/session"
)

func execWith(id string, rev int, entities ...string) *session.Execute {
	ex := &session.Execute{ID: id, DomainRevision: rev}
	for _, e := range entities {
		ex.Symbols.Entities = append(ex.Symbols.Entities, symbol.Entity{EntryID: "tracker", Name: e})
	}
	return ex
}

func TestSymbolCache(t *testing.T) {
	c := newSymbolCache(2)
	a1 := execWith("a", 1, "Issue")
	first, err := c.get("t", a1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sandbox.EncodeSymbols(&a1.Symbols)
	if first.Digest() != want.Digest() || first.Len() != want.Len() {
		t.Fatalf("cached encoding %s/%d, want %s/%d", first.Digest(), first.Len(), want.Digest(), want.Len())
	}
	tests := []struct {
		name   string
		tenant string
		ex     *session.Execute
		same   bool // the first encoding is returned
	}{
		{"same revision is not re-encoded", "t", execWith("a", 1, "Issue"), true},
		{"new revision re-encodes", "t", execWith("a", 2, "Issue", "Comment"), false},
		{"other session", "t", execWith("b", 1, "Issue"), false},
		{"other tenant, same session id", "u", execWith("a", 1, "Issue"), false},
		{"another map written at the same revision", "t", execWith("a", 1, "Issue", "Label"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.get(tc.tenant, tc.ex)
			if err != nil {
				t.Fatal(err)
			}
			if (got == first) != tc.same {
				t.Fatalf("got the first encoding: %v, want %v", got == first, tc.same)
			}
			fresh, _ := sandbox.EncodeSymbols(&tc.ex.Symbols)
			if got.Digest() != fresh.Digest() {
				t.Fatalf("digest %s, want %s (the map's own)", got.Digest(), fresh.Digest())
			}
		})
	}
	if n := c.entries.order.Len(); n != 2 {
		t.Fatalf("%d entries kept, bound is 2", n)
	}
}

func TestSymbolKeyUnambiguous(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range []string{
		symbolKey("t1", &session.Execute{ID: "s", DomainRevision: 1}),
		symbolKey("t", &session.Execute{ID: "1s", DomainRevision: 1}),
		symbolKey("t1", &session.Execute{ID: "s1", DomainRevision: 1}),
		symbolKey("t1", &session.Execute{ID: "s", DomainRevision: 11}),
	} {
		if keys[k] {
			t.Fatalf("two inputs share key %q", k)
		}
		keys[k] = true
	}
}
