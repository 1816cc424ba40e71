package demo

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LedgerPrefix is where the ledger API lives. Unlike the other demo APIs it
// authenticates every request with a signature and answers in a columnar
// envelope, so its catalog needs a vendor module (demo/catalogs/ledger).
const LedgerPrefix = "/ledger/api"

// LedgerSigningKeyEnv is the secret name the ledger module signs with.
const LedgerSigningKeyEnv = "LEDGER_SIGNING_KEY"

// DefaultLedgerSigningKey is the signing key when Options.LedgerSigningKey
// is empty.
const DefaultLedgerSigningKey = "demo-ledger-signing-key"

// LedgerSignatureHeader carries the request signature: lower-case hex of
// HMAC-SHA256(key, LedgerSigningString(method, requestURI, body)).
const LedgerSignatureHeader = "X-Ledger-Signature"

// LedgerSigningString is what a ledger request signature covers: the
// method, the request target (path and query as sent) and the body, so a
// signature cannot be replayed against another endpoint.
func LedgerSigningString(method, requestURI string, body []byte) []byte {
	b := make([]byte, 0, len(method)+len(requestURI)+len(body)+2)
	b = append(b, method...)
	b = append(b, '\n')
	b = append(b, requestURI...)
	b = append(b, '\n')
	return append(b, body...)
}

// SignLedgerRequest returns the signature header value for a request.
func SignLedgerRequest(key, method, requestURI string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(LedgerSigningString(method, requestURI, body))
	return hex.EncodeToString(mac.Sum(nil))
}

const ledgerStream uint64 = 3

const (
	seedLedgerAccounts     = 6
	seedLedgerTransactions = 30
)

type ledgerAccount struct {
	ID       string
	Name     string
	Currency string
	Balance  int64 // cents
	Opened   time.Time
}

type ledgerTxn struct {
	ID      string
	Account string
	Amount  int64 // cents, negative for debits
	Memo    string
	Posted  time.Time
}

type ledgerStore struct {
	mu       sync.Mutex
	accounts []*ledgerAccount
	byID     map[string]*ledgerAccount
	txns     []*ledgerTxn
}

var ledgerAccountNames = []string{"Operating", "Payroll", "Savings", "Marketing", "Travel", "Equipment"}
var ledgerMemos = []string{"Invoice payment", "Cloud hosting", "Office rent", "Team lunch", "Conference tickets", "Laptop refresh", "Customer refund", "Consulting fee"}

func seedLedger(seed uint64) *ledgerStore {
	r := rand.New(rand.NewPCG(seed, ledgerStream))
	s := &ledgerStore{byID: map[string]*ledgerAccount{}}
	for i := range seedLedgerAccounts {
		a := &ledgerAccount{
			ID:       fmt.Sprintf("acc-%d", i+1),
			Name:     ledgerAccountNames[i%len(ledgerAccountNames)],
			Currency: pick(r, []string{"EUR", "USD"}),
			Opened:   seedEpoch.Add(time.Duration(i) * 24 * time.Hour),
		}
		s.accounts = append(s.accounts, a)
		s.byID[a.ID] = a
	}
	for i := range seedLedgerTransactions {
		a := s.accounts[r.IntN(len(s.accounts))]
		amount := int64(r.IntN(200000)) - 80000
		if amount == 0 {
			amount = 100
		}
		t := &ledgerTxn{
			ID:      fmt.Sprintf("txn-%d", i+1),
			Account: a.ID,
			Amount:  amount,
			Memo:    pick(r, ledgerMemos),
			Posted:  seedEpoch.Add(time.Duration(i+1) * 7 * time.Hour),
		}
		a.Balance += amount
		s.txns = append(s.txns, t)
	}
	return s
}

// ledgerEnvelope is the ledger's answer: rows as column names plus value
// arrays, which the standard `response:` config cannot express.
type ledgerEnvelope struct {
	OK     bool         `json:"ok"`
	Data   *ledgerTable `json:"data,omitempty"`
	Cursor *string      `json:"cursor"`
	Error  *ledgerError `json:"error,omitempty"`
}

type ledgerTable struct {
	Cols []string `json:"cols"`
	Vals [][]any  `json:"vals"`
}

type ledgerError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

var (
	ledgerAccountCols = []string{"id", "name", "currency", "balance_cents", "opened_at"}
	ledgerTxnCols     = []string{"id", "account_id", "amount_cents", "memo", "posted_at"}
)

func (a *ledgerAccount) row() []any {
	return []any{a.ID, a.Name, a.Currency, a.Balance, a.Opened.Format(time.RFC3339)}
}

func (t *ledgerTxn) row() []any {
	return []any{t.ID, t.Account, t.Amount, t.Memo, t.Posted.Format(time.RFC3339)}
}

func ledgerFail(w http.ResponseWriter, status int, code, format string, args ...any) {
	writeJSON(w, status, ledgerEnvelope{Error: &ledgerError{Code: code, Message: fmt.Sprintf(format, args...)}})
}

func ledgerRows(w http.ResponseWriter, status int, cols []string, rows [][]any) {
	if rows == nil {
		rows = [][]any{}
	}
	writeJSON(w, status, ledgerEnvelope{OK: true, Data: &ledgerTable{Cols: cols, Vals: rows}})
}

// serveLedger verifies the signature of every request before routing it.
func (b *Backend) serveLedger(w http.ResponseWriter, r *http.Request, rest string) {
	body, aerr := readBody(w, r)
	if aerr != nil {
		ledgerFail(w, aerr.Status, "bad_request", "%s", aerr.Message)
		return
	}
	sig := r.Header.Get(LedgerSignatureHeader)
	if sig == "" {
		ledgerFail(w, http.StatusUnauthorized, "missing_signature", "missing %s header: sign METHOD\\nPATH?QUERY\\nBODY with HMAC-SHA256 and the ledger signing key", LedgerSignatureHeader)
		return
	}
	want := SignLedgerRequest(b.opts.LedgerSigningKey, r.Method, r.URL.RequestURI(), body)
	if !hmac.Equal([]byte(strings.ToLower(sig)), []byte(want)) {
		ledgerFail(w, http.StatusUnauthorized, "bad_signature", "signature does not match the request; check the ledger signing key")
		return
	}
	s := b.ledger
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "accounts":
		if r.Method != http.MethodGet {
			ledgerFail(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
			return
		}
		id := r.URL.Query().Get("id")
		s.mu.Lock()
		var rows [][]any
		for _, a := range s.accounts {
			if id == "" || a.ID == id {
				rows = append(rows, a.row())
			}
		}
		s.mu.Unlock()
		ledgerRows(w, http.StatusOK, ledgerAccountCols, rows)
	case len(parts) == 2 && parts[0] == "accounts":
		if r.Method != http.MethodGet {
			ledgerFail(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
			return
		}
		s.mu.Lock()
		a, ok := s.byID[parts[1]]
		var row []any
		if ok {
			row = a.row()
		}
		s.mu.Unlock()
		if !ok {
			ledgerFail(w, http.StatusNotFound, "not_found", "no account %q", parts[1])
			return
		}
		ledgerRows(w, http.StatusOK, ledgerAccountCols, [][]any{row})
	case len(parts) == 1 && parts[0] == "transactions":
		switch r.Method {
		case http.MethodGet:
			acct := r.URL.Query().Get("account_id")
			s.mu.Lock()
			var rows [][]any
			for _, t := range s.txns {
				if acct == "" || t.Account == acct {
					rows = append(rows, t.row())
				}
			}
			s.mu.Unlock()
			ledgerRows(w, http.StatusOK, ledgerTxnCols, rows)
		case http.MethodPost:
			b.ledgerPost(w, body)
		default:
			ledgerFail(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET or POST")
		}
	default:
		ledgerFail(w, http.StatusNotFound, "not_found", "no such endpoint: %s%s", LedgerPrefix, rest)
	}
}

func (b *Backend) ledgerPost(w http.ResponseWriter, body []byte) {
	f, aerr := decodeObject(body)
	if aerr == nil {
		aerr = f.onlyKeys("account_id", "amount_cents", "memo")
	}
	if aerr != nil {
		ledgerFail(w, aerr.Status, "bad_request", "%s", aerr.Error())
		return
	}
	acct, _, aerr := f.str("account_id")
	if aerr == nil && acct == nil {
		aerr = fieldError("account_id", "required")
	}
	var amount *int
	if aerr == nil {
		amount, _, aerr = f.integer("amount_cents")
		if aerr == nil && (amount == nil || *amount == 0) {
			aerr = fieldError("amount_cents", "required and non-zero")
		}
	}
	var memo *string
	if aerr == nil {
		memo, _, aerr = f.str("memo")
		if aerr == nil && memo != nil {
			aerr = checkText("memo", *memo, 200)
		}
	}
	if aerr != nil {
		ledgerFail(w, aerr.Status, "invalid", "%s", aerr.Error())
		return
	}
	s := b.ledger
	s.mu.Lock()
	a, ok := s.byID[*acct]
	if !ok {
		s.mu.Unlock()
		ledgerFail(w, http.StatusUnprocessableEntity, "invalid", "account_id: no account %q", *acct)
		return
	}
	t := &ledgerTxn{ID: "txn-" + strconv.Itoa(len(s.txns)+1), Account: a.ID, Amount: int64(*amount), Posted: b.now().UTC().Truncate(time.Second)}
	if memo != nil {
		t.Memo = *memo
	}
	a.Balance += t.Amount
	s.txns = append(s.txns, t)
	row := t.row()
	s.mu.Unlock()
	ledgerRows(w, http.StatusCreated, ledgerTxnCols, [][]any{row})
}
