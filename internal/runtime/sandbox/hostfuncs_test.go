package sandbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/hostabi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

type mapSecrets map[string]string

func (m mapSecrets) Secret(name string) (string, bool) { v, ok := m[name]; return v, ok }

var invoker struct {
	once sync.Once
	wasm []byte
	err  error
}

// invokerWasm builds guest/pdk/testdata/invoker once per test process.
func invokerWasm(t *testing.T) []byte {
	t.Helper()
	needGuests(t)
	invoker.once.Do(func() {
		dir, err := os.MkdirTemp("", "invoker-")
		if err != nil {
			invoker.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "invoker.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, "../../../guest/pdk/testdata/invoker")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			invoker.err = errors.New(err.Error() + "\n" + string(msg))
			return
		}
		invoker.wasm, invoker.err = os.ReadFile(out)
	})
	if invoker.err != nil {
		t.Fatal(invoker.err)
	}
	return invoker.wasm
}

func signerTenant(t *testing.T, id string) *Tenant {
	t.Helper()
	wasm, err := os.ReadFile("../../../demo/catalogs/ledger/module.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := testHost.Module(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	tn := testHost.Tenant(id, TenantSpec{Module: m})
	t.Cleanup(tn.Close)
	return tn
}

func TestHostHMACSignsWithTenantSecret(t *testing.T) {
	tn := signerTenant(t, "hostfuncs-hmac")
	req := abi.CompiledRequest{Method: "POST", URL: "http://ledger.test/ledger/api/transactions?x=1", Body: `{"a":1}`,
		Headers: [][2]string{{"X-Ledger-Signature", "forged"}, {"Accept", "application/json"}}}
	in, _ := json.Marshal(req)
	ctx := WithHostEnv(context.Background(), &HostEnv{Secrets: mapSecrets{"LEDGER_SIGNING_KEY": "k3y"}})
	out, err := tn.Call(ctx, abi.HookExport(abi.HookPrepareRequest), in)
	if err != nil {
		t.Fatal(err)
	}
	var got abi.CompiledRequest
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte("k3y"))
	mac.Write([]byte("POST\n/ledger/api/transactions?x=1\n" + `{"a":1}`))
	want := hex.EncodeToString(mac.Sum(nil))
	var sigs []string
	for _, h := range got.Headers {
		if h[0] == "X-Ledger-Signature" {
			sigs = append(sigs, h[1])
		}
	}
	if len(sigs) != 1 || sigs[0] != want {
		t.Fatalf("signature headers %v, want exactly [%s]", sigs, want)
	}
	if strings.Contains(string(out), "k3y") {
		t.Fatal("the secret reached the guest's output")
	}

	// Without a host environment, or with an unknown secret, the import
	// fails cleanly: a guest error, and the instance keeps serving.
	for name, ctx := range map[string]context.Context{
		"no env":         context.Background(),
		"missing secret": WithHostEnv(context.Background(), &HostEnv{Secrets: mapSecrets{}}),
	} {
		_, err := tn.Call(ctx, abi.HookExport(abi.HookPrepareRequest), in)
		var ae *abi.Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, "LEDGER_SIGNING_KEY") {
			t.Errorf("%s: %v, want a guest error naming the secret", name, err)
		}
	}
}

func TestSignerDecodesEnvelope(t *testing.T) {
	tn := signerTenant(t, "hostfuncs-decode")
	cases := []struct {
		name, body string
		status     int
		rows       int
		err        string
	}{
		{"rows", `{"ok":true,"data":{"cols":["id","amount_cents"],"vals":[["txn-1",1500000],["txn-2",-20]]},"cursor":null}`, 200, 2, ""},
		{"backend error", `{"ok":false,"error":{"code":"bad_signature","message":"signature does not match"}}`, 401, 0, "bad_signature: signature does not match"},
		{"ragged", `{"ok":true,"data":{"cols":["id"],"vals":[["a","b"]]}}`, 200, 0, "1 columns"},
		{"not an envelope", `[1,2]`, 200, 0, "not a ledger envelope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, _ := abi.AppendFrame(nil, &abi.DecodeRequest{Status: c.status}, []byte(c.body))
			out, err := tn.Call(context.Background(), abi.HookExport(abi.HookDecodeResponse), in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var dr abi.DecodeResponse
			if err := json.Unmarshal(out, &dr); err != nil {
				t.Fatal(err)
			}
			if len(dr.Table.Rows) != c.rows || dr.Table.Rows[0][1] != float64(1500000) {
				t.Fatalf("decoded %+v", dr.Table)
			}
		})
	}
}

func TestHostHTTPOnlyDeclaredOrigins(t *testing.T) {
	m, err := testHost.Module(context.Background(), invokerWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	tn := testHost.Tenant("hostfuncs-http", TenantSpec{Module: m})
	defer tn.Close()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello " + r.URL.Path))
	}))
	defer backend.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the undeclared origin was reached")
	}))
	defer other.Close()
	declared, err := egress.ParseOrigin(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := egress.New(egress.Limits{})
	defer client.Close()
	env := &HostEnv{Origins: []egress.Origin{declared}, Egress: client}

	call := func(ctx context.Context, url string) ([]byte, error) {
		in, _ := json.Marshal(abi.CompileRequest{Capability: "fetch", Vars: map[string]any{"url": url}})
		return tn.Call(ctx, abi.HookExport(abi.HookInvoke), in)
	}
	out, err := call(WithHostEnv(context.Background(), env), backend.URL+"/x")
	if err != nil {
		t.Fatal(err)
	}
	var dr abi.DecodeResponse
	if err := json.Unmarshal(out, &dr); err != nil || len(dr.Table.Rows) != 1 || dr.Table.Rows[0][1] != "hello /x" {
		t.Fatalf("invoke: %s %v", out, err)
	}

	_, err = call(WithHostEnv(context.Background(), env), other.URL+"/steal")
	var ae *abi.Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "egress denied") || !strings.Contains(ae.Message, "egress denied") {
		t.Fatalf("undeclared origin: %v, want an egress denied error", err)
	}
	_, err = call(context.Background(), backend.URL+"/x")
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "outside a tenant call") {
		t.Fatalf("no host env: %v, want a host status error", err)
	}
	if _, err := call(WithHostEnv(context.Background(), &HostEnv{Origins: env.Origins}), backend.URL+"/x"); err == nil {
		t.Fatal("http without an egress client succeeded")
	}
}

// TestHostHMACOnlyDeclaredSecrets: the guest names the secret hmac_sha256
// keys with. Under a catalog's scope a name it does not declare answers
// ErrSecret, exactly like a missing secret, although the tenant has it;
// the declared name still signs.
func TestHostHMACOnlyDeclaredSecrets(t *testing.T) {
	needGuests(t)
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: guestModule(t, "abuse")})
	defer tn.Close()
	tenantSecrets := mapSecrets{"KEY": "k", "OTHER": "o"}
	missing := strconv.Itoa(hostabi.ErrSecret)
	tests := []struct {
		name     string
		declared []string
		want     string
	}{
		{"declared", []string{"KEY"}, "0"},
		{"another catalog's", []string{"OTHER"}, missing},
		{"none declared", nil, missing},
		{"case differs", []string{"key"}, missing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := &HostEnv{Secrets: egress.ScopeSecrets(tenantSecrets, "vendor", tc.declared)}
			got, err := tn.Ping(WithHostEnv(context.Background(), env), []byte("hmac ok"))
			if err != nil || string(got) != tc.want {
				t.Fatalf("hmac_sha256 status %q, %v; want %s", got, err, tc.want)
			}
		})
	}
}
