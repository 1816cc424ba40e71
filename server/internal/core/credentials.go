package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/server/internal/credstore"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// maxCredentialBytes caps one stored secret value.
const maxCredentialBytes = 8 << 10

// secretMap adapts a stored credential to egress.Secrets.
type secretMap map[string]string

func (m secretMap) Secret(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// principalSecrets layers per-principal credentials over the tenant's
// secret resolution: a catalog the tenant delegates resolves its secrets
// only from the caller's own stored credential (never the tenant's), so
// each person's agent calls the API as that person. Other catalogs keep
// base. Every delegated catalog the plan calls must have a credential, or
// the run fails before any backend call with a credential-missing problem
// that names the catalog and how to connect it.
func (s *Service) principalSecrets(ctx context.Context, t *tenant.Tenant, p *plan.Plan, base func(string) egress.Secrets) (func(string) egress.Secrets, error) {
	if t.Principal == "" || len(t.PrincipalCredentials)+len(t.TokenExchange) == 0 {
		return base, nil
	}
	var used []string
	for _, n := range p.Nodes {
		if n.EntryID != "" && t.Delegates(n.EntryID) && !slices.Contains(used, n.EntryID) {
			used = append(used, n.EntryID)
		}
	}
	slices.Sort(used)
	own := map[string]egress.Secrets{}
	for _, e := range used {
		cat, ok := s.registry.byID[e]
		if !ok {
			continue
		}
		if _, ok := t.TokenExchange[e]; ok {
			tok, err := s.exchanged(ctx, t, e)
			if err != nil {
				return nil, err
			}
			own[e] = egress.ScopeSecrets(secretMap{cat.Auth.Env: tok}, e, cat.SecretNames())
			continue
		}
		if s.creds == nil {
			return nil, credentialMissing(e, false)
		}
		vals, err := s.creds.Get(ctx, t.ID, t.Principal, e)
		if errors.Is(err, credstore.ErrNotFound) {
			return nil, credentialMissing(e, true)
		}
		if err != nil {
			return nil, fmt.Errorf("principal credential for %s: %w", e, err)
		}
		own[e] = egress.ScopeSecrets(secretMap(vals), e, cat.SecretNames())
	}
	return func(entryID string) egress.Secrets {
		if sc, ok := own[entryID]; ok {
			return sc
		}
		if t.Delegates(entryID) {
			// Delegated but not called by the plan: resolves nothing.
			return egress.ScopeSecrets(nil, entryID, nil)
		}
		return base(entryID)
	}, nil
}

// credentialMissing is the typed answer to a delegated catalog without the
// caller's credential. It names the catalog and the way to connect it;
// it carries no secret.
func credentialMissing(entry string, storable bool) *problem.Problem {
	p := problem.New(http.StatusFailedDependency, "credential-missing",
		fmt.Sprintf("catalog %s calls its API with each person's own credential, and none is stored for you", entry))
	if storable {
		p.Hint = fmt.Sprintf(`connect it: PUT /v1/credentials/%s with {"token": "<your %s API token>"}, authenticated with the same access token; then run again`, entry, entry)
	} else {
		p.Hint = "this server has no credential store configured (plasmd serve --credentials FILE with " + credstore.KeyEnv + "); ask its operator"
	}
	return p
}

// delegated resolves a catalog that takes a per-person credential for a
// principal caller: its entry id, single-token secret name and declared
// secret names.
func (s *Service) delegated(t *tenant.Tenant, entry string) (string, string, []string, error) {
	if t.Principal == "" {
		return "", "", nil, problem.New(http.StatusForbidden, "principal-required", "credentials are stored per person: authenticate with an OAuth access token, not a tenant token")
	}
	if s.creds == nil {
		return "", "", nil, problem.New(http.StatusServiceUnavailable, "no-credential-store", "this server has no credential store configured")
	}
	cat, ok := s.registry.Resolve(entry)
	if !ok || !t.Allows(cat.EntryID) || !slices.Contains(t.PrincipalCredentials, cat.EntryID) {
		return "", "", nil, problem.NotFound("catalog %q takes no per-person credential in this tenant", entry)
	}
	return cat.EntryID, cat.Auth.Env, cat.SecretNames(), nil
}

// PutCredential stores the caller's own credential for a delegated
// catalog: token (the catalog's auth secret) or secrets by declared name.
// It returns the catalog's entry id.
func (s *Service) PutCredential(ctx context.Context, t *tenant.Tenant, entry, token string, secrets map[string]string) (string, error) {
	id, env, names, err := s.delegated(t, entry)
	if err != nil {
		return "", err
	}
	vals := map[string]string{}
	switch {
	case token != "" && len(secrets) == 0:
		if env == "" {
			return "", problem.BadRequest("bad-credential", "catalog %s has no single token secret; send {\"secrets\": {NAME: value}} with names from %v", id, names)
		}
		vals[env] = token
	case token == "" && len(secrets) > 0:
		for k, v := range secrets {
			if !slices.Contains(names, k) {
				return "", problem.BadRequest("bad-credential", "catalog %s declares no secret %q (it declares %v)", id, k, names)
			}
			vals[k] = v
		}
	default:
		return "", problem.BadRequest("bad-credential", `send exactly one of {"token": "…"} or {"secrets": {NAME: value}}`)
	}
	for k, v := range vals {
		if v == "" || len(v) > maxCredentialBytes {
			return "", problem.BadRequest("bad-credential", "secret %s must be 1..%d bytes", k, maxCredentialBytes)
		}
	}
	if err := s.creds.Put(ctx, t.ID, t.Principal, id, vals); err != nil {
		return "", fmt.Errorf("store credential: %w", err)
	}
	s.Audit(ctx, t, auditCredential(id, "stored"))
	return id, nil
}

// DeleteCredential removes the caller's credential for a delegated catalog.
func (s *Service) DeleteCredential(ctx context.Context, t *tenant.Tenant, entry string) error {
	id, _, _, err := s.delegated(t, entry)
	if err != nil {
		return err
	}
	if err := s.creds.Delete(ctx, t.ID, t.Principal, id); err != nil {
		return fmt.Errorf("delete credential: %w", err)
	}
	s.Audit(ctx, t, auditCredential(id, "deleted"))
	return nil
}

// Credentials lists the catalogs that take the caller's own credential and
// those it has connected; never a value.
func (s *Service) Credentials(ctx context.Context, t *tenant.Tenant) (wanted, connected []string, err error) {
	wanted = []string{}
	for _, e := range t.PrincipalCredentials {
		if t.Allows(e) {
			wanted = append(wanted, e)
		}
	}
	connected = []string{}
	if t.Principal != "" && s.creds != nil {
		got, err := s.creds.List(ctx, t.ID, t.Principal)
		if err != nil {
			return nil, nil, fmt.Errorf("list credentials: %w", err)
		}
		connected = got
	}
	return wanted, connected, nil
}

// exchanged obtains the caller's upstream token for entry by token
// exchange. A failure names the catalog, never a token.
func (s *Service) exchanged(ctx context.Context, t *tenant.Tenant, entry string) (string, error) {
	if s.exchange == nil || t.AccessToken == "" {
		return "", problem.New(http.StatusFailedDependency, "credential-exchange-failed",
			fmt.Sprintf("catalog %s obtains your credential by token exchange, which this server cannot do for this request", entry))
	}
	tok, err := s.exchange(ctx, t, entry)
	if err != nil {
		s.log.Warn("token exchange failed", "tenant", t.ID, "catalog", entry, "err", err)
		p := problem.New(http.StatusFailedDependency, "credential-exchange-failed",
			fmt.Sprintf("catalog %s: exchanging your access token for its credential failed", entry))
		p.Hint = "your authorization server may not allow this exchange for you; ask the tenant's operator"
		return "", p
	}
	return tok, nil
}
