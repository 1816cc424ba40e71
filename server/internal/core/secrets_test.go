package core

import (
	"errors"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// secretsCatalogs: a tracker with a bearer token, a ledger whose module
// signs, an oauth catalog, a hostile catalog whose module declares the
// tracker's token name (and a variable of the host), a PLASMD_-named auth
// catalog, and one outside the run.
func secretsCatalogs(t *testing.T) *Registry {
	t.Helper()
	reg, err := NewRegistry([]*catalog.Catalog{
		{EntryID: "tracker", Auth: catalog.Auth{Scheme: "bearer_token", Env: "TRACKER_TOKEN"}},
		{EntryID: "ledger", Auth: catalog.Auth{Scheme: "none"}, Module: &catalog.Module{Secrets: []string{"SIGNING_KEY"}}},
		{EntryID: "oauth", Auth: catalog.Auth{Scheme: "oauth2_client_credentials", ClientIDEnv: "PLASMD_CID", ClientSecretEnv: "CSECRET"}},
		{EntryID: "thief", Auth: catalog.Auth{Scheme: "none"}, Module: &catalog.Module{Secrets: []string{"TRACKER_TOKEN", "AWS_SECRET_ACCESS_KEY", "PLASMD_CID", "SIGNING_KEY"}}},
		{EntryID: "envthief", Auth: catalog.Auth{Scheme: "bearer_token", Env: "AWS_SECRET_ACCESS_KEY"}},
		{EntryID: "idle", Auth: catalog.Auth{Scheme: "bearer_token", Env: "TRACKER_TOKEN"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

var secretsRun = []string{"tracker", "ledger", "oauth", "thief", "envthief"}

type secretCase struct{ entry, name, want string }

func checkSecrets(t *testing.T, secretsFor func(string) egress.Secrets, tests []secretCase) {
	t.Helper()
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
			if _, err := r.Resolve(tt.name); !errors.Is(err, egress.ErrSecret) {
				t.Fatalf("Resolve(%s) = %v, want ErrSecret", tt.name, err)
			}
		})
	}
}

// TestSecretsForAnonymous: the anonymous tenant of an auth-off server
// reads from the environment only PLASMD_ names a catalog's auth block
// names, names --env-allow adds for auth blocks, and names it binds to a
// catalog. A module declaring TRACKER_TOKEN or a host variable gets
// nothing, and the demo's built-in secrets go only to their catalogs.
func TestSecretsForAnonymous(t *testing.T) {
	env := map[string]string{
		"AWS_SECRET_ACCESS_KEY": "aws-secret", "TRACKER_TOKEN": "env-tracker-token",
		"SIGNING_KEY": "signing-key", "PLASMD_CID": "client-id", "CSECRET": "client-secret",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	reg := secretsCatalogs(t)
	tests := map[string]struct {
		allow   []string
		secrets map[string]tenant.Secret
		cases   []secretCase
	}{
		"default policy": {cases: []secretCase{
			{"tracker", "TRACKER_TOKEN", ""}, // no PLASMD_ prefix
			{"oauth", "PLASMD_CID", "client-id"},
			{"oauth", "CSECRET", ""},
			{"ledger", "SIGNING_KEY", ""}, // module secrets are never read unbound
			{"thief", "TRACKER_TOKEN", ""},
			{"thief", "PLASMD_CID", ""}, // not in its auth block
			{"thief", "AWS_SECRET_ACCESS_KEY", ""},
			{"envthief", "AWS_SECRET_ACCESS_KEY", ""},
			{"tracker", "PATH", ""},
		}},
		"allow list": {allow: []string{"TRACKER_TOKEN", "CSECRET", "SIGNING_KEY=ledger"}, cases: []secretCase{
			{"tracker", "TRACKER_TOKEN", "env-tracker-token"},
			{"oauth", "CSECRET", "client-secret"},
			{"ledger", "SIGNING_KEY", "signing-key"},
			{"thief", "TRACKER_TOKEN", ""}, // a module secret, not an auth block name
			{"thief", "SIGNING_KEY", ""},   // bound to ledger only
			{"envthief", "AWS_SECRET_ACCESS_KEY", ""},
			{"idle", "TRACKER_TOKEN", ""}, // not in the run
			{"unknown", "TRACKER_TOKEN", ""},
		}},
		"built-in secrets": {secrets: tenant.Bind(map[string]string{"TRACKER_TOKEN": "demo-token", "SIGNING_KEY": "demo-key"},
			map[string][]string{"TRACKER_TOKEN": {"tracker"}, "SIGNING_KEY": {"ledger"}}), cases: []secretCase{
			{"tracker", "TRACKER_TOKEN", "demo-token"},
			{"ledger", "SIGNING_KEY", "demo-key"},
			{"thief", "TRACKER_TOKEN", ""},
			{"thief", "SIGNING_KEY", ""},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pol, err := tenant.ParseEnvAllow(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			anon := &tenant.Tenant{ID: tenant.Anonymous, Secrets: tc.secrets, Env: pol.WithLookup(lookup)}
			checkSecrets(t, reg.secretsFor(anon, secretsRun), tc.cases)
		})
	}
}

// TestSecretsForTenant: a configured tenant's secret resolves only for
// the catalogs the tenants file binds it to, never from the environment,
// whatever names another catalog declares.
func TestSecretsForTenant(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	set, err := tenant.Parse([]byte(`
tenants:
  - id: acme
    token_sha256: [` + tenant.Digest("tok") + `]
    secrets:
      TRACKER_TOKEN: {value: tracker-token, catalogs: [tracker]}
      SIGNING_KEY: {value: signing-key, catalogs: [ledger, idle]}
`))
	if err != nil {
		t.Fatal(err)
	}
	acme, _ := set.Get("acme")
	checkSecrets(t, secretsCatalogs(t).secretsFor(acme, secretsRun), []secretCase{
		{"tracker", "TRACKER_TOKEN", "tracker-token"},
		{"ledger", "SIGNING_KEY", "signing-key"},
		{"thief", "TRACKER_TOKEN", ""},
		{"thief", "SIGNING_KEY", ""},
		{"thief", "AWS_SECRET_ACCESS_KEY", ""},
		{"envthief", "AWS_SECRET_ACCESS_KEY", ""},
		{"tracker", "SIGNING_KEY", ""},
	})
}
