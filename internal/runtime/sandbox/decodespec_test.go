package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// specCatalog is a one-capability catalog whose id field reads wire name
// wire.
func specCatalog(wire string) *catalog.Catalog {
	c := testCatalog("specs")
	c.Entities["Issue"].Fields["id"].Path = []string{wire}
	c.Capabilities["issue_list"] = &catalog.Capability{Name: "issue_list", Kind: catalog.KindQuery, Entity: "Issue"}
	c.Mappings["issue_list"] = &catalog.Mapping{Method: "GET"}
	return c
}

func specEngine(t *testing.T, lim Limits) *Engine {
	t.Helper()
	if !testEngine.HasExport(abi.ExportDecodeSpec) {
		t.Skip("engine.wasm predates plasm_decode_spec; run make engine")
	}
	eng := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine,
		Loads: CatalogLoads([]*catalog.Catalog{specCatalog("id")}), Limits: lim}))
	t.Cleanup(eng.Close)
	return eng
}

var specReq = &abi.DecodeRequest{EntryID: "specs", Capability: "issue_list", Status: 200}

func decodeIDs(t *testing.T, eng *Engine, body string) []any {
	t.Helper()
	out, err := eng.Decode(context.Background(), specReq, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var ids []any
	for _, r := range out.Table.Rows {
		ids = append(ids, r[0])
	}
	return ids
}

// TestDecodeSpecCachedByDigest: a spec is compiled once per catalog
// digest, and a changed catalog gets a new spec (never a stale one).
func TestDecodeSpecCachedByDigest(t *testing.T) {
	eng := specEngine(t, DefaultLimits())
	body := `[{"id":"a","key":"k1"}]`
	if got := decodeIDs(t, eng, body); len(got) != 1 || got[0] != "a" {
		t.Fatalf("ids %v", got)
	}
	decodeIDs(t, eng, body)
	if n := len(eng.specs.m); n != 1 {
		t.Fatalf("%d cached specs after two decodes, want 1", n)
	}
	eng.SetCatalogs([]*catalog.Catalog{specCatalog("key")})
	if got := decodeIDs(t, eng, body); len(got) != 1 || got[0] != "k1" {
		t.Fatalf("after the catalog changed: ids %v, want [k1]", got)
	}
	if n := len(eng.specs.m); n != 2 {
		t.Fatalf("%d cached specs, want one per digest", n)
	}
	// A refused spec (unknown capability) is the guest's typed error.
	_, err := eng.Decode(context.Background(), &abi.DecodeRequest{EntryID: "specs", Capability: "nope", Status: 200}, []byte(`[]`))
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Code != abi.CodeDecode || !strings.Contains(ae.Message, "no capability") {
		t.Fatalf("unknown capability: %v", err)
	}
}

// TestHostDecodeKeepsCallLimits: the host decode refuses what the guest
// call would have (input and output size) and stops when its context
// ends.
func TestHostDecodeKeepsCallLimits(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxInput = 4 << 10
	lim.MaxOutput = 2 << 10
	eng := specEngine(t, lim)
	ctx := context.Background()
	decodeIDs(t, eng, `[]`) // compiles and caches the spec

	big := `[{"id":"` + strings.Repeat("x", 5<<10) + `"}]`
	if _, err := eng.Decode(ctx, specReq, []byte(big)); !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("body over MaxInput: %v", err)
	}
	wide := `[` + strings.Repeat(`{"id":"`+strings.Repeat("y", 30)+`"},`, 80) + `{}]`
	if _, err := eng.Decode(ctx, specReq, []byte(wide)); !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("rows over MaxOutput: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := eng.Decode(cctx, specReq, []byte(`[]`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

// TestHostDecodeConcurrent: decodes sharing one cached spec do not
// interfere (run with -race).
func TestHostDecodeConcurrent(t *testing.T) {
	eng := specEngine(t, DefaultLimits())
	decodeIDs(t, eng, `[]`)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			body := fmt.Sprintf(`[{"id":"a%d"},{"id":"b%d"}]`, i, i)
			out, err := eng.Decode(context.Background(), specReq, []byte(body))
			if err == nil && (len(out.Table.Rows) != 2 || out.Table.Rows[1][0] != fmt.Sprintf("b%d", i)) {
				err = fmt.Errorf("decode %d: rows %v", i, out.Table.Rows)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestHostileDecodeSpec: an engine module that answers plasm_decode_spec
// with a spec of another version, one over the limits, malformed JSON, an
// error, or nothing (an endless loop) gets a typed error; nothing it sent
// is applied or cached, and a module without the export is decoded in
// the guest.
func TestHostileDecodeSpec(t *testing.T) {
	m := guestModule(t, "badspec")
	eng := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: m,
		Loads: CatalogLoads([]*catalog.Catalog{testCatalog("bad")})}))
	defer eng.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		capability string
		want       error
		detail     string
	}{
		{"version", ErrABI, "version 99"},
		{"columns", ErrABI, "2001 columns"},
		{"garbage", ErrABI, ""},
	} {
		_, err := eng.Decode(ctx, &abi.DecodeRequest{EntryID: "bad", Capability: tc.capability, Status: 200}, []byte(`[{"id":1}]`))
		var ce *CallError
		if !errors.Is(err, tc.want) || !errors.As(err, &ce) || !strings.Contains(ce.Detail, tc.detail) {
			t.Errorf("%s: %v, want %v mentioning %q", tc.capability, err, tc.want, tc.detail)
		}
	}
	// A spec that never comes ends at the caller's deadline (the instance
	// is warm, so the deadline is spent in the loop).
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := eng.Decode(wctx, &abi.DecodeRequest{EntryID: "bad", Capability: "loop", Status: 200}, []byte(`[]`)); !errors.Is(err, ErrDeadline) {
		t.Errorf("looping spec compile: %v, want ErrDeadline", err)
	}
	_, err := eng.Decode(ctx, &abi.DecodeRequest{EntryID: "bad", Capability: "refuse", Status: 200}, []byte(`[]`))
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Message != "no such capability" {
		t.Errorf("refused spec: %v", err)
	}
	if n := len(eng.specs.m); n != 0 {
		t.Errorf("%d specs cached from failed compiles", n)
	}
	// A well-formed spec from the same module is applied.
	out, err := eng.Decode(ctx, &abi.DecodeRequest{EntryID: "bad", Capability: "fine", Status: 200}, []byte(`[{"id":1}]`))
	if err != nil || len(out.Table.Rows) != 1 || out.Table.Rows[0][0] != int64(1) {
		t.Fatalf("good spec: %+v, %v", out, err)
	}

	// No spec export: the guest's plasm_decode answers (here: it has none).
	plain := NewEngine(testHost.Tenant(t.Name()+"-nospec", TenantSpec{Module: guestModule(t, "panic")}))
	defer plain.Close()
	if _, err := plain.Decode(ctx, &abi.DecodeRequest{EntryID: "x", Capability: "c", Status: 200}, []byte(`[]`)); !errors.Is(err, ErrABI) {
		t.Fatalf("module without exports: %v, want ErrABI", err)
	}
}
