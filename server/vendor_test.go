package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/hostabi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// newVendorFixture serves the demo (with its vendor modules) plus extra
// catalogs and module bytes, with the given ledger signing key.
func newVendorFixture(t *testing.T, signingKey string, extra func(ledger *catalog.Catalog) ([]*catalog.Catalog, map[string][]byte)) *fixture {
	t.Helper()
	return newVendorFixtureWith(t, signingKey, extra, nil)
}

// newVendorFixtureWith is newVendorFixture with tweak applied to the
// server's configuration (nil: none).
func newVendorFixtureWith(t *testing.T, signingKey string, extra func(ledger *catalog.Catalog) ([]*catalog.Catalog, map[string][]byte), tweak func(*server.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cats, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	modules, err := catalogdir.ReadModules(demo.Catalogs, "catalogs", cats)
	if err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		var ledger *catalog.Catalog
		for _, c := range cats {
			if c.EntryID == demo.LedgerEntryID {
				ledger = c
			}
		}
		more, mods := extra(ledger)
		cats = append(cats, more...)
		for k, v := range mods {
			modules[k] = v
		}
	}
	secrets, bindings := backend.Backend().Secrets(), demo.SecretCatalogs()
	if signingKey != "" {
		secrets[demo.LedgerSigningKeyEnv] = signingKey
	}
	cfg := server.Config{CacheDir: testCacheDir(), AnonymousSecrets: tenant.Bind(secrets, bindings), Modules: modules, Limits: patientLimits()}
	if tweak != nil {
		tweak(&cfg)
	}
	app, err := server.New(ctx, cfg, cats)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		app.Close(context.Background())
		_ = backend.Close()
	})
	return &fixture{app: app, srv: srv, backend: backend}
}

func TestVendorModuleLedger(t *testing.T) {
	f := newVendorFixture(t, "", nil)
	path := f.open(t, "ledger", "Account", "Transaction")

	got := rows(t, f.runJSON(t, path, `Account("acc-2")`)[0])
	if len(got) != 1 || got[0]["id"] != "acc-2" || got[0]["name"] != "Payroll" {
		t.Fatalf("account get through the module: %v", got)
	}
	txns := rows(t, f.runJSON(t, path, `Transaction{account_id="acc-1"}`)[0])
	if len(txns) == 0 {
		t.Fatal("no transactions for acc-1")
	}
	for _, r := range txns {
		if r["account_id"] != "acc-1" {
			t.Fatalf("row of another account: %v", r)
		}
	}
	created := rows(t, f.runJSON(t, path, `Transaction.create(account_id="acc-3", amount_cents=-1250, memo="Coffee")`)[0])
	if len(created) != 1 || created[0]["memo"] != "Coffee" {
		t.Fatalf("create: %v", created)
	}
	// The write persisted and is visible through a signed read.
	again := rows(t, f.runJSON(t, path, `Transaction{account_id="acc-3"}`)[0])
	found := false
	for _, r := range again {
		found = found || r["id"] == created[0]["id"]
	}
	if !found {
		t.Fatalf("created transaction %v not listed: %v", created[0]["id"], again)
	}

	h := f.do(t, "GET", "/v1/health", "", "").json(t)
	if refused, _ := h["refused"].([]any); len(refused) != 0 {
		t.Fatalf("demo catalogs refused: %v", refused)
	}
}

// TestVendorModuleMetered: a vendor module the operator trusts by digest
// runs metered beside the engine and answers as it does checked.
func TestVendorModuleMetered(t *testing.T) {
	wasm, err := fs.ReadFile(demo.Catalogs, "catalogs/ledger/module.wasm")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	f := newVendorFixtureWith(t, "", nil, func(c *server.Config) { c.MeteredModules = []string{hex.EncodeToString(sum[:])} })
	path := f.open(t, "ledger", "Account")
	got := rows(t, f.runJSON(t, path, `Account("acc-2")`)[0])
	if len(got) != 1 || got[0]["name"] != "Payroll" {
		t.Fatalf("account get through the metered module: %v", got)
	}
	m := f.do(t, "GET", "/metrics", "", "").body
	for _, want := range []string{`plasmd_sandbox_modules{mode="metered"} 2`, `plasmd_sandbox_modules{mode="checked"} 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestVendorModuleWrongSecret(t *testing.T) {
	f := newVendorFixture(t, "not-the-ledger-key", nil)
	path := f.open(t, "ledger", "Account")
	r := f.do(t, "POST", path, "text/plain", `Account("acc-1")`, "Accept", "application/json")
	if r.status == http.StatusOK {
		t.Fatalf("run with a wrong signing key succeeded: %s", r.body)
	}
	for _, want := range []string{"401", "bad_signature", "signature does not match"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("failure does not mention %q: %d %s", want, r.status, r.body)
		}
	}
	if strings.Contains(r.body, "not-the-ledger-key") {
		t.Errorf("the secret leaked into the response: %s", r.body)
	}
}

// buildGuest compiles a wasip1 guest package with the standard toolchain.
func buildGuest(t *testing.T, pkg string) []byte {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	out := filepath.Join(t.TempDir(), "g.wasm")
	cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-o", out, pkg)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVendorModuleRefusals(t *testing.T) {
	badVersion := buildGuest(t, "./internal/runtime/sandbox/testdata/guests/badversion")
	sumOf := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

	f := newVendorFixture(t, "", func(ledger *catalog.Catalog) ([]*catalog.Catalog, map[string][]byte) {
		signer, err := os.ReadFile("../demo/catalogs/ledger/module.wasm")
		if err != nil {
			t.Fatal(err)
		}
		variant := func(id string, m *catalog.Module) *catalog.Catalog {
			c := *ledger
			c.EntryID, c.Module = id, m
			return &c
		}
		return []*catalog.Catalog{
				variant("pin_mismatch", &catalog.Module{SHA256: strings.Repeat("ab", 32), Hooks: []string{"prepare_request", "decode_response"}}),
				variant("missing_hook", &catalog.Module{SHA256: sumOf(signer), Hooks: []string{"prepare_request", "decode_response", "invoke"}}),
				variant("bad_version", &catalog.Module{SHA256: sumOf(badVersion), Hooks: []string{"prepare_request"}}),
			}, map[string][]byte{
				"pin_mismatch": signer, "missing_hook": signer, "bad_version": badVersion,
			}
	})

	h := f.do(t, "GET", "/v1/health", "", "").json(t)
	refused := map[string]string{}
	raw, _ := h["refused"].([]any)
	for _, r := range raw {
		m := r.(map[string]any)
		refused[m["entry_id"].(string)] = m["error"].(string)
	}
	for id, want := range map[string]string{
		"pin_mismatch": "domain.yaml pins " + strings.Repeat("ab", 32),
		"missing_hook": "does not export plasm_hook_invoke",
		"bad_version":  "plasm_abi_version returned 99",
	} {
		if !strings.Contains(refused[id], want) {
			t.Errorf("%s: refusal %q does not say %q", id, refused[id], want)
		}
	}
	if len(refused) != 3 {
		t.Errorf("refused %v, want exactly the three broken catalogs", refused)
	}

	// The broken catalogs are not served; everything else is.
	reg := f.do(t, "GET", "/v1/registry", "", "").json(t)
	var ids []string
	for _, c := range reg["catalogs"].([]any) {
		ids = append(ids, c.(map[string]any)["entry_id"].(string))
	}
	if strings.Join(ids, ",") != "kanban,ledger,tracker" {
		t.Fatalf("registry serves %v", ids)
	}
	if got := rows(t, f.runJSON(t, f.open(t, "tracker", "Issue"), `Issue("iss-1")`)[0]); len(got) != 1 {
		t.Fatalf("tracker: %v", got)
	}
	if got := rows(t, f.runJSON(t, f.open(t, "kanban", "Team"), `Team("team-1")`)[0]); len(got) != 1 {
		t.Fatalf("kanban: %v", got)
	}
	if got := rows(t, f.runJSON(t, f.open(t, "ledger", "Account"), `Account("acc-1")`)[0]); len(got) != 1 {
		t.Fatalf("ledger: %v", got)
	}
}

// TestVendorModuleUndeclaredSecret serves the ledger's signer module under a
// catalog that does not declare LEDGER_SIGNING_KEY. The tenant has the key
// (in its secrets, and in the process environment, which the anonymous
// tenant falls back to), yet hmac_sha256 refuses it for this catalog, so
// nothing signed with it leaves the host; the declaring ledger still works.
func TestVendorModuleUndeclaredSecret(t *testing.T) {
	t.Setenv(demo.LedgerSigningKeyEnv, "from-the-environment")
	f := newVendorFixture(t, "", func(ledger *catalog.Catalog) ([]*catalog.Catalog, map[string][]byte) {
		signer, err := os.ReadFile("../demo/catalogs/ledger/module.wasm")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ledger.SecretNames(), demo.LedgerSigningKeyEnv) {
			t.Fatalf("the demo ledger does not declare %s: %v", demo.LedgerSigningKeyEnv, ledger.SecretNames())
		}
		thief := *ledger
		m := *ledger.Module
		m.Secrets = nil
		thief.EntryID, thief.Module = "thief", &m
		return []*catalog.Catalog{&thief}, map[string][]byte{"thief": signer}
	})

	r := f.do(t, "POST", f.open(t, "thief", "Account"), "text/plain", `Account("acc-1")`, "Accept", "application/json")
	if r.status == http.StatusOK {
		t.Fatalf("a catalog signed with a secret it does not declare: %s", r.body)
	}
	// The module fails to sign before anything is sent: had the request
	// gone out (signed or not), the ledger would have answered 401.
	for _, want := range []string{"sign with LEDGER_SIGNING_KEY", hostabi.StatusText(hostabi.ErrSecret)} {
		if !strings.Contains(r.body, want) {
			t.Errorf("failure does not say %q: %d %s", want, r.status, r.body)
		}
	}
	if strings.Contains(r.body, "bad_signature") || strings.Contains(r.body, "401") {
		t.Fatalf("the request reached the backend: %s", r.body)
	}
	for _, leaked := range []string{"from-the-environment", f.backend.Backend().Secrets()[demo.LedgerSigningKeyEnv]} {
		if strings.Contains(r.body, leaked) {
			t.Fatalf("secret in the response: %s", r.body)
		}
	}
	if got := rows(t, f.runJSON(t, f.open(t, "ledger", "Account"), `Account("acc-1")`)[0]); len(got) != 1 {
		t.Fatalf("ledger: %v", got)
	}
}
