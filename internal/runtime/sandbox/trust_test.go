package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

func TestTrustModules(t *testing.T) {
	vendor := strings.Repeat("ab", 32)
	trust, err := TrustModules(" " + strings.ToUpper(vendor) + "\n")
	if err != nil {
		t.Fatal(err)
	}
	engine := sha256.Sum256(enginewasm.Wasm)
	for _, tc := range []struct {
		digest string
		want   bool
	}{
		{vendor, true},
		{hex.EncodeToString(engine[:]), true}, // the engine stays trusted
		{strings.Repeat("cd", 32), false},
		{"", false},
	} {
		if got := trust(tc.digest); got != tc.want {
			t.Errorf("trust(%q) = %v, want %v", tc.digest, got, tc.want)
		}
	}
	for _, bad := range []string{"", "abc", strings.Repeat("zz", 32), strings.Repeat("ab", 31), strings.Repeat("ab", 33)} {
		if _, err := TrustModules(bad); !errors.Is(err, ErrDigest) {
			t.Errorf("TrustModules(%q) = %v, want ErrDigest", bad, err)
		}
	}
}

// TestTrustedVendorRunsMetered: a module the operator lists runs metered;
// the same module unlisted keeps wazero's check.
func TestTrustedVendorRunsMetered(t *testing.T) {
	ctx := context.Background()
	wasm := guestWasm["panic"] // any Go-built guest
	if wasm == nil {
		t.Skip(guestReason)
	}
	sum := sha256.Sum256(wasm)
	trust, err := TrustModules(hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		meter func(string) bool
		want  bool
	}{{"listed", trust, true}, {"default", nil, false}} {
		h, err := New(ctx, Config{CacheDir: testCacheDir, Meter: tc.meter})
		if err != nil {
			t.Fatal(err)
		}
		m, err := h.Module(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		if m.Metered != tc.want {
			t.Errorf("%s: Metered = %v, want %v", tc.name, m.Metered, tc.want)
		}
		h.Close(ctx)
	}
}

func TestMeterCheck(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if err := h.MeterCheck(ctx, enginewasm.Wasm); err != nil {
		t.Errorf("the engine cannot be metered: %v", err)
	}
	// A module importing a global could bring a host value the meter
	// cannot see into play: wazero accepts it, the meter does not.
	importsGlobal := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 2, 10, 1, 3, 'e', 'n', 'v', 1, 'g', 3, 0x7f, 0}
	if err := h.MeterCheck(ctx, importsGlobal); !errors.Is(err, wasmmeter.ErrUnsupported) {
		t.Errorf("MeterCheck(global import) = %v, want ErrUnsupported", err)
	}
}

// BenchmarkVendorDecodeHook runs the demo ledger module's decode_response
// on a 200-row page, the module checked at every loop (the default for a
// vendor module) and trusted to run metered (--metered-module): what an
// operator's trust buys a vendor module.
func BenchmarkVendorDecodeHook(b *testing.B) {
	wasm, err := os.ReadFile("../../../demo/catalogs/ledger/module.wasm")
	if err != nil {
		b.Fatal(err)
	}
	var page bytes.Buffer
	page.WriteString(`{"ok":true,"data":{"cols":["id","account_id","amount_cents","memo"],"vals":[`)
	for i := range 200 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `["txn-%d","acc-%d",%d,"memo number %d"]`, i, i%7, i*37-500, i)
	}
	page.WriteString(`]},"cursor":null}`)
	in, err := abi.AppendFrame(nil, &abi.DecodeRequest{Status: 200}, page.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	trust, err := TrustModules(hex.EncodeToString(sum[:]))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []struct {
		name  string
		meter func(string) bool
	}{{"checked", nil}, {"metered", trust}} {
		b.Run(v.name, func(b *testing.B) {
			h, err := New(ctx, Config{CacheDir: testCacheDir, Meter: v.meter})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close(ctx)
			m, err := h.Module(ctx, wasm)
			if err != nil {
				b.Fatal(err)
			}
			tn := h.Tenant("bench", TenantSpec{Module: m, Limits: DefaultLimits()})
			call := func() {
				out, err := tn.Call(ctx, abi.HookExport(abi.HookDecodeResponse), in)
				if err != nil || !bytes.Contains(out, []byte("txn-199")) {
					b.Fatalf("decode_response: %v %.200s", err, out)
				}
			}
			call() // warm
			b.SetBytes(int64(page.Len()))
			for b.Loop() {
				call()
			}
		})
	}
}
