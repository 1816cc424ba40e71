//go:build !wasip1

package decode_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
)

// BenchmarkDecodeSandboxed decodes a 20-row tracker page through the
// engine client as production does (the spec compiled once in the real
// engine module under wazero, applied by the host), beside encoding/json
// reading the same bytes.
func BenchmarkDecodeSandboxed(b *testing.B) {
	ctx := context.Background()
	srv, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	cats, err := demo.LoadCatalogs(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	h, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(ctx) })
	m, err := h.Module(ctx, enginewasm.Wasm)
	if err != nil {
		b.Fatal(err)
	}
	tn := sandbox.NewEngine(h.Tenant("bench", sandbox.TenantSpec{Module: m, Loads: sandbox.CatalogLoads(cats)}))
	b.Cleanup(tn.Close)

	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/tracker/api/issues?limit=20", nil)
	if err != nil {
		b.Fatal(err)
	}
	hreq.Header.Set("Authorization", "Bearer demo-tracker-token")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("fetch: %d %v", resp.StatusCode, err)
	}
	req := &abi.DecodeRequest{EntryID: "tracker", Capability: "issue_query", Status: 200}
	out, err := tn.Decode(ctx, req, body)
	if err != nil {
		b.Fatal(err)
	}
	if len(out.Table.Rows) != 20 {
		b.Fatalf("decoded %d rows, want 20", len(out.Table.Rows))
	}
	b.Run("sandbox", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tn.Decode(ctx, req, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The baseline: the same bytes read by encoding/json.
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
