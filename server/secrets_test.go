package server_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestCatalogBorrowsSecret: two hostile catalogs served beside the demo
// declare the demo's secret names: "thief" runs the ledger's signer
// module and declares module.secrets [TRACKER_TOKEN, LEDGER_SIGNING_KEY];
// "copycat" is the tracker under another entry id, so its compiled
// requests name TRACKER_TOKEN. The secrets are bound to tracker and ledger,
// so neither receives anything (the process environment holds the same
// names and is not read either), nothing leaves the host signed or
// authorized, and the real catalogs keep working.
func TestCatalogBorrowsSecret(t *testing.T) {
	t.Setenv(demo.LedgerSigningKeyEnv, "from-the-environment")
	t.Setenv(demo.TrackerTokenEnv, "from-the-environment")
	f := newVendorFixture(t, "", func(ledger *catalog.Catalog) ([]*catalog.Catalog, map[string][]byte) {
		signer, err := os.ReadFile("../demo/catalogs/ledger/module.wasm")
		if err != nil {
			t.Fatal(err)
		}
		thief := *ledger
		m := *ledger.Module
		m.Secrets = []string{demo.TrackerTokenEnv, demo.LedgerSigningKeyEnv}
		thief.EntryID, thief.Module = "thief", &m
		cats, err := demo.LoadCatalogs(strings.TrimSuffix(ledger.HTTPBackend, demo.LedgerPrefix))
		if err != nil {
			t.Fatal(err)
		}
		var copycat *catalog.Catalog
		for _, c := range cats {
			if c.EntryID == "tracker" {
				copycat = c
			}
		}
		copycat.EntryID = "copycat"
		return []*catalog.Catalog{&thief, copycat}, map[string][]byte{"thief": signer}
	})
	secrets := f.backend.Backend().Secrets()

	r := f.do(t, "POST", f.open(t, "thief", "Account"), "text/plain", `Account("acc-1")`, "Accept", "application/json")
	if r.status == http.StatusOK {
		t.Fatalf("a catalog signed with another catalog's secret: %s", r.body)
	}
	if !strings.Contains(r.body, "sign with "+demo.LedgerSigningKeyEnv) {
		t.Errorf("failure does not say which secret: %d %s", r.status, r.body)
	}
	if strings.Contains(r.body, "bad_signature") {
		t.Fatalf("the request reached the backend: %s", r.body)
	}
	for _, leaked := range []string{"from-the-environment", secrets[demo.LedgerSigningKeyEnv], secrets[demo.TrackerTokenEnv]} {
		if strings.Contains(r.body, leaked) {
			t.Fatalf("secret in the response: %s", r.body)
		}
	}
	if got := rows(t, f.runJSON(t, f.open(t, "ledger", "Account"), `Account("acc-1")`)[0]); len(got) != 1 {
		t.Fatalf("ledger: %v", got)
	}

	r = f.do(t, "POST", f.open(t, "copycat", "Issue"), "text/plain", `Issue`, "Accept", "application/json")
	if r.status == http.StatusOK {
		t.Fatalf("a copy of the tracker used the tracker's token: %s", r.body)
	}
	if !strings.Contains(r.body, demo.TrackerTokenEnv) || strings.Contains(r.body, "401") {
		t.Errorf("failure does not say the secret is missing before sending: %d %s", r.status, r.body)
	}
	for _, leaked := range []string{"from-the-environment", secrets[demo.TrackerTokenEnv]} {
		if strings.Contains(r.body, leaked) {
			t.Fatalf("secret in the response: %s", r.body)
		}
	}
	if got := rows(t, f.runJSON(t, f.open(t, "tracker", "Issue"), `Issue`)[0]); len(got) == 0 {
		t.Fatalf("tracker: %v", got)
	}
}
