package tenant

import (
	"errors"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

func TestParseEnvAllow(t *testing.T) {
	tests := []struct {
		name  string
		specs []string
		err   bool
	}{
		{"empty", nil, false},
		{"names and bindings", []string{"TOKEN", "KEY=ledger,vault", " PLASMD_X "}, false},
		{"empty name", []string{"=ledger"}, true},
		{"bad name", []string{"A-B"}, true},
		{"leading digit", []string{"1A"}, true},
		{"empty catalog", []string{"KEY=ledger,"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnvAllow(tc.specs)
			if tc.err != (err != nil) || tc.err && !errors.Is(err, ErrEnvAllow) {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
		})
	}
}

// TestEnvPolicy: which variables one catalog may read, by where it names
// them and what the operator allowed.
func TestEnvPolicy(t *testing.T) {
	env := map[string]string{"PLASMD_TOKEN": "p", "TOKEN": "t", "KEY": "k", "HOME": "/root"}
	pol, err := ParseEnvAllow([]string{"TOKEN", "KEY=ledger"})
	if err != nil {
		t.Fatal(err)
	}
	pol = pol.WithLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	authed := &catalog.Catalog{EntryID: "api", Auth: catalog.Auth{Env: "PLASMD_TOKEN", ClientIDEnv: "TOKEN", ClientSecretEnv: "HOME"}}
	ledger := &catalog.Catalog{EntryID: "ledger", Module: &catalog.Module{Secrets: []string{"KEY", "PLASMD_TOKEN"}}}
	tests := []struct {
		c          *catalog.Catalog
		name, want string
	}{
		{authed, "PLASMD_TOKEN", "p"},
		{authed, "TOKEN", "t"},
		{authed, "HOME", ""}, // named by its auth block but neither prefixed nor allowed
		{authed, "KEY", ""},  // bound to ledger
		{ledger, "KEY", "k"},
		{ledger, "PLASMD_TOKEN", ""}, // a module secret, not an auth block name
	}
	for _, tt := range tests {
		if got, ok := pol.env(tt.c, tt.name); got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s reads %s = %q, %v; want %q", tt.c.EntryID, tt.name, got, ok, tt.want)
		}
	}
	var none *EnvPolicy
	if _, ok := none.env(authed, "PLASMD_TOKEN"); ok {
		t.Error("a nil policy read the environment")
	}
}
