package egress

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// countingSecrets records every name it is asked for, so a test can prove
// an undeclared name never reaches the tenant's store (or the process
// environment behind it).
type countingSecrets struct {
	values map[string]string
	asked  []string
}

func (c *countingSecrets) Secret(name string) (string, bool) {
	c.asked = append(c.asked, name)
	v, ok := c.values[name]
	return v, ok
}

func TestCatalogSecrets(t *testing.T) {
	src := &countingSecrets{values: map[string]string{"GITHUB_TOKEN": "ghp", "LEDGER_KEY": "lk", "EMPTY": ""}}
	s := ScopeSecrets(src, "ledger", []string{"LEDGER_KEY", "EMPTY", "UNSET", "LEDGER_KEY"})
	tests := []struct {
		name       string
		want       string
		undeclared bool
		missing    bool
	}{
		{name: "LEDGER_KEY", want: "lk"},
		{name: "GITHUB_TOKEN", undeclared: true},
		{name: "AWS_SECRET_ACCESS_KEY", undeclared: true},
		{name: "", undeclared: true},
		{name: "ledger_key", undeclared: true},
		{name: "EMPTY", missing: true},
		{name: "UNSET", missing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src.asked = nil
			v, err := s.Resolve(tt.name)
			got, ok := s.Secret(tt.name)
			if got != v || ok != (err == nil) {
				t.Fatalf("Secret = %q, %v disagrees with Resolve = %q, %v", got, ok, v, err)
			}
			var ue *UndeclaredSecretError
			switch {
			case tt.undeclared:
				if !errors.Is(err, ErrSecret) || !errors.As(err, &ue) || ue.Catalog != "ledger" || ue.Name != tt.name {
					t.Fatalf("err = %v, want an undeclared-secret refusal", err)
				}
				if want := "catalog ledger does not declare secret " + tt.name; !strings.Contains(err.Error(), want) {
					t.Errorf("err = %q, want it to say %q", err, want)
				}
				if len(src.asked) != 0 {
					t.Errorf("undeclared name reached the source: %q", src.asked)
				}
			case tt.missing:
				if !errors.Is(err, ErrSecret) || errors.As(err, &ue) {
					t.Fatalf("err = %v, want a plain missing secret", err)
				}
			default:
				if err != nil || v != tt.want {
					t.Fatalf("Resolve = %q, %v; want %q", v, err, tt.want)
				}
			}
		})
	}
	if v, err := ScopeSecrets(nil, "x", []string{"A"}).Resolve("A"); err == nil || !errors.Is(err, ErrSecret) {
		t.Errorf("nil source resolved %q, %v", v, err)
	}
}

// TestDoUndeclaredSecret: a request whose auth names a secret its catalog
// does not declare fails before anything is sent, like a missing secret.
func TestDoUndeclaredSecret(t *testing.T) {
	var hits atomic.Int32
	_, origin := backend(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	tenant := secrets{"GITHUB_TOKEN": "ghp-secret", "OWN": "own-secret"}
	scoped := ScopeSecrets(tenant, "evil", []string{"OWN"})
	c := newClient(t, Limits{Timeout: 5 * time.Second})
	var denials []string
	c.OnDenied = func(reason string) { denials = append(denials, reason) }
	for _, scheme := range []*abi.AuthDirective{
		{Scheme: "bearer_token", Secret: "GITHUB_TOKEN"},
		{Scheme: "api_key_header", Header: "X-Key", Secret: "GITHUB_TOKEN"},
		{Scheme: "api_key_query", Param: "k", Secret: "GITHUB_TOKEN"},
	} {
		_, err := c.Do(context.Background(), &abi.CompiledRequest{URL: origin.String() + "/", Auth: scheme}, []Origin{origin}, scoped)
		var ue *UndeclaredSecretError
		if !errors.Is(err, ErrSecret) || !errors.As(err, &ue) {
			t.Fatalf("%s: err = %v, want undeclared secret", scheme.Scheme, err)
		}
		if strings.Contains(err.Error(), "ghp-secret") {
			t.Fatalf("secret value in error: %v", err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("backend was called %d times with an undeclared secret", n)
	}
	if len(denials) != 3 || denials[0] != "undeclared_secret" {
		t.Errorf("denials = %q", denials)
	}
	// The declared name still works through the same scope.
	resp, err := c.Do(context.Background(), &abi.CompiledRequest{URL: origin.String() + "/", Auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "OWN"}}, []Origin{origin}, scoped)
	if err != nil || resp.Status != http.StatusNoContent || hits.Load() != 1 {
		t.Fatalf("declared secret: %v, %+v", err, resp)
	}
}
