package demo

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func ledgerCall(t *testing.T, b *Backend, method, target, body, sig string) (int, ledgerEnvelope) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if sig != "" {
		req.Header.Set(LedgerSignatureHeader, sig)
	}
	w := httptest.NewRecorder()
	b.ServeHTTP(w, req)
	var env ledgerEnvelope
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("%s %s: not JSON: %v\n%s", method, target, err, w.Body)
	}
	return w.Code, env
}

func TestLedgerSignature(t *testing.T) {
	b := NewBackend(Options{})
	good := func(method, target, body string) string {
		return SignLedgerRequest(DefaultLedgerSigningKey, method, target, []byte(body))
	}
	cases := []struct {
		name, method, target, body, sig string
		status                          int
		code                            string
	}{
		{"missing", "GET", "/ledger/api/accounts", "", "", http.StatusUnauthorized, "missing_signature"},
		{"wrong key", "GET", "/ledger/api/accounts", "", SignLedgerRequest("other", "GET", "/ledger/api/accounts", nil), http.StatusUnauthorized, "bad_signature"},
		{"other endpoint", "GET", "/ledger/api/transactions", "", good("GET", "/ledger/api/accounts", ""), http.StatusUnauthorized, "bad_signature"},
		{"tampered body", "POST", "/ledger/api/transactions", `{"account_id":"acc-1","amount_cents":999}`, good("POST", "/ledger/api/transactions", `{"account_id":"acc-1","amount_cents":1}`), http.StatusUnauthorized, "bad_signature"},
		{"accounts", "GET", "/ledger/api/accounts", "", good("GET", "/ledger/api/accounts", ""), http.StatusOK, ""},
		{"one account", "GET", "/ledger/api/accounts/acc-2", "", good("GET", "/ledger/api/accounts/acc-2", ""), http.StatusOK, ""},
		{"filtered", "GET", "/ledger/api/transactions?account_id=acc-1", "", good("GET", "/ledger/api/transactions?account_id=acc-1", ""), http.StatusOK, ""},
		{"unknown account", "GET", "/ledger/api/accounts/acc-99", "", good("GET", "/ledger/api/accounts/acc-99", ""), http.StatusNotFound, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, env := ledgerCall(t, b, c.method, c.target, c.body, c.sig)
			if status != c.status {
				t.Fatalf("status %d, want %d (%+v)", status, c.status, env.Error)
			}
			if c.code != "" {
				if env.OK || env.Error == nil || env.Error.Code != c.code || env.Error.Message == "" {
					t.Fatalf("error envelope %+v, want code %s", env.Error, c.code)
				}
				return
			}
			if !env.OK || env.Data == nil || len(env.Data.Vals) == 0 {
				t.Fatalf("no rows: %+v", env)
			}
			for _, row := range env.Data.Vals {
				if len(row) != len(env.Data.Cols) {
					t.Fatalf("ragged row %v for %v", row, env.Data.Cols)
				}
			}
		})
	}
}

func TestLedgerWritesPersist(t *testing.T) {
	b := NewBackend(Options{LedgerSigningKey: "k"})
	body := `{"account_id":"acc-1","amount_cents":-500,"memo":"Coffee"}`
	status, env := ledgerCall(t, b, "POST", "/ledger/api/transactions", body, SignLedgerRequest("k", "POST", "/ledger/api/transactions", []byte(body)))
	if status != http.StatusCreated || len(env.Data.Vals) != 1 {
		t.Fatalf("create: %d %+v", status, env)
	}
	id := env.Data.Vals[0][0]
	_, list := ledgerCall(t, b, "GET", "/ledger/api/transactions?account_id=acc-1", "", SignLedgerRequest("k", "GET", "/ledger/api/transactions?account_id=acc-1", nil))
	last := list.Data.Vals[len(list.Data.Vals)-1]
	if last[0] != id || last[3] != "Coffee" {
		t.Fatalf("created row not listed: %v", last)
	}
	if got := b.Secrets()[LedgerSigningKeyEnv]; got != "k" {
		t.Fatalf("Secrets()[%s] = %q", LedgerSigningKeyEnv, got)
	}
}

func TestLedgerSeedDeterministic(t *testing.T) {
	a, b := seedLedger(DefaultSeed), seedLedger(DefaultSeed)
	if len(a.txns) != seedLedgerTransactions || len(a.accounts) != seedLedgerAccounts {
		t.Fatalf("seeded %d accounts, %d transactions", len(a.accounts), len(a.txns))
	}
	for i := range a.txns {
		if *a.txns[i] != *b.txns[i] {
			t.Fatalf("transaction %d differs between seeds: %+v vs %+v", i, a.txns[i], b.txns[i])
		}
	}
}
