package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestRefusedSpecKeepsInstance: a readable spec past the bounds is
// refused with a typed ErrABI naming the catalog and capability, every
// time, and the instance that sent it stays in the pool (its answer was
// well framed); only an unreadable answer discards it.
func TestRefusedSpecKeepsInstance(t *testing.T) {
	eng := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: guestModule(t, "badspec"),
		Loads: CatalogLoads([]*catalog.Catalog{testCatalog("bad")})}))
	defer eng.Close()
	for range 3 {
		_, err := eng.Decode(context.Background(), &abi.DecodeRequest{EntryID: "bad", Capability: "columns", Status: 200}, []byte(`[{"id":1}]`))
		var ce *CallError
		if !errors.Is(err, ErrABI) || !errors.As(err, &ce) || !strings.Contains(ce.Detail, `catalog "bad", capability "columns"`) {
			t.Fatalf("%v, want ErrABI naming the catalog and capability", err)
		}
	}
	if st := eng.Stats(); st.Discarded != 0 || st.Created != 1 {
		t.Fatalf("stats %+v: a refused spec discarded its instance", st)
	}
	if _, err := eng.Decode(context.Background(), &abi.DecodeRequest{EntryID: "bad", Capability: "garbage", Status: 200}, []byte(`[]`)); !errors.Is(err, ErrABI) {
		t.Fatalf("garbage: %v", err)
	}
	if st := eng.Stats(); st.Discarded != 1 {
		t.Fatalf("stats %+v: an unreadable spec kept its instance", st)
	}
}

// TestNegativePartIndexHost: a wire catalog with a negative derive
// part_index (which the loader refuses, a hand-made one need not) is
// refused by the engine's Check when loaded; host and guest decodes both
// answer that typed catalog error and keep the instance, rather than the
// host refusing an engine-compiled spec and discarding an instance on
// every call.
func TestNegativePartIndexHost(t *testing.T) {
	cat := fixture.Catalog(t, "plasmforms")
	cat.Entities["Note"].Fields["repo"].Derive.PartIndex = -1
	eng := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Loads: CatalogLoads([]*catalog.Catalog{cat})}))
	defer eng.Close()
	req := &abi.DecodeRequest{EntryID: cat.EntryID, Capability: "note_get", Status: 200}
	body := []byte(`{"id":"n1","url":"https://code.example/repos/a/b"}`)
	decodes := map[string]func() error{
		"host":  func() error { _, err := eng.Decode(context.Background(), req, body); return err },
		"guest": func() error { _, err := eng.DecodeInGuest(context.Background(), req, body); return err },
	}
	for name, decode := range decodes {
		for range 2 {
			err := decode()
			var ae *abi.Error
			if !errors.As(err, &ae) || ae.Code != abi.CodeCatalog || !strings.Contains(ae.Message, "part_index -1 is negative") {
				t.Fatalf("%s decode: %T %v, want a catalog error naming part_index", name, err, err)
			}
		}
	}
	if st := eng.Stats(); st.Discarded != 0 {
		t.Fatalf("stats %+v: an instance was discarded", st)
	}
}
