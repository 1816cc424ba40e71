package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/pdk"
)

// fakeHost signs like plasmd's host does, from a secret table.
type fakeHost map[string]string

func (h fakeHost) HMACSHA256(name string, data []byte) ([]byte, error) {
	m := hmac.New(sha256.New, []byte(h[name]))
	m.Write(data)
	return m.Sum(nil), nil
}

func (fakeHost) HTTP(*abi.CompiledRequest) (*pdk.Response, error) { return nil, pdk.ErrNoHost }

func TestSign(t *testing.T) {
	old := pdk.SetHost(fakeHost{SigningKeySecret: "k"})
	defer pdk.SetHost(old)
	got, err := sign(&abi.CompiledRequest{Method: "GET", URL: "http://h/ledger/api/accounts?id=acc-1", Headers: [][2]string{{"x-ledger-signature", "old"}}})
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte("GET\n/ledger/api/accounts?id=acc-1\n"))
	if len(got.Headers) != 1 || got.Headers[0] != [2]string{SignatureHeader, hex.EncodeToString(m.Sum(nil))} {
		t.Fatalf("headers %v", got.Headers)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(200, []byte(`{"ok":true,"data":{"cols":["a"],"vals":[[1],[2.5]]},"cursor":"c"}`))
	f.Add(401, []byte(`{"ok":false,"error":{"code":"x","message":"y"}}`))
	f.Add(200, []byte(`{"ok":true}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		resp, err := decode(&abi.DecodeRequest{Status: status}, body)
		if err != nil {
			return
		}
		for _, row := range resp.Table.Rows {
			if len(row) != len(resp.Table.Columns) {
				t.Fatalf("ragged row %v", row)
			}
		}
	})
}
