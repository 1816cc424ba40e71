package core

import (
	"errors"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// TestSecretsForAnonymous: the anonymous tenant of an auth-off server
// falls back to the process environment; through a run's scopes only the
// names the called catalog declares resolve, so no catalog reads an
// arbitrary variable or another catalog's token.
func TestSecretsForAnonymous(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("TRACKER_TOKEN", "tracker-token")
	t.Setenv("SIGNING_KEY", "signing-key")
	reg, err := NewRegistry([]*catalog.Catalog{
		{EntryID: "tracker", Auth: catalog.Auth{Scheme: "bearer_token", Env: "TRACKER_TOKEN"}},
		{EntryID: "ledger", Auth: catalog.Auth{Scheme: "none"}, Module: &catalog.Module{Secrets: []string{"SIGNING_KEY"}}},
		{EntryID: "oauth", Auth: catalog.Auth{Scheme: "oauth2_client_credentials", ClientIDEnv: "CID", ClientSecretEnv: "CSECRET"}},
		{EntryID: "idle", Auth: catalog.Auth{Scheme: "bearer_token", Env: "TRACKER_TOKEN"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	anon := &tenant.Tenant{ID: tenant.Anonymous}
	if v, ok := anon.Secret("AWS_SECRET_ACCESS_KEY"); !ok || v != "aws-secret" {
		t.Fatalf("the anonymous tenant no longer falls back to the environment (%q, %v); this test needs it", v, ok)
	}
	t.Setenv("CID", "client-id")
	secretsFor := reg.secretsFor(anon, []string{"tracker", "ledger", "oauth"})
	tests := []struct {
		entry, name, want string
	}{
		{"tracker", "TRACKER_TOKEN", "tracker-token"},
		{"tracker", "SIGNING_KEY", ""},
		{"tracker", "AWS_SECRET_ACCESS_KEY", ""},
		{"ledger", "SIGNING_KEY", "signing-key"},
		{"ledger", "TRACKER_TOKEN", ""},
		{"ledger", "AWS_SECRET_ACCESS_KEY", ""},
		{"ledger", "PATH", ""},
		{"oauth", "CID", "client-id"},
		{"oauth", "TRACKER_TOKEN", ""},
		{"idle", "TRACKER_TOKEN", ""}, // not in the run
		{"unknown", "TRACKER_TOKEN", ""},
	}
	for _, tt := range tests {
		t.Run(tt.entry+"/"+tt.name, func(t *testing.T) {
			s := secretsFor(tt.entry)
			if s == nil {
				if tt.want != "" {
					t.Fatalf("no secrets for %s", tt.entry)
				}
				return
			}
			v, ok := s.Secret(tt.name)
			if v != tt.want || ok != (tt.want != "") {
				t.Fatalf("Secret(%s) = %q, %v; want %q", tt.name, v, ok, tt.want)
			}
			if tt.want != "" {
				return
			}
			r, isResolver := s.(egress.SecretResolver)
			if !isResolver {
				t.Fatalf("scope is %T, not a resolver", s)
			}
			var ue *egress.UndeclaredSecretError
			if _, err := r.Resolve(tt.name); !errors.As(err, &ue) || ue.Catalog != tt.entry {
				t.Fatalf("Resolve(%s) = %v, want catalog %s refused it", tt.name, err, tt.entry)
			}
		})
	}
}
